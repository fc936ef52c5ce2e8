#!/usr/bin/env python3
"""The performance gate: measures rab's budgeted figures and fails when one is worse
than the number committed in bench/budgets.toml by more than its tolerance.

Usage: bench/gate.py [--only exact|rss|callgrind] [--print]
  --print   prints the measured figures as budgets.toml lines (to update the file on
            purpose, saying why in the commit) and fails nothing.
Build first: cargo build --release -p rab -p rab-fake-llm (the gate measures the
release binary, as users get it). The callgrind figures run the gungraun benches
(`cargo bench -p rab-ai -p rab-core -p rab-tui --bench callgrind`): valgrind and
gungraun-runner 0.20.0 must be installed (.ci/run installs both).

What is measured (every figure deterministic, or nearly so):
- exact: the binary's size; on the 4-turn harness task (read, edit, run, answer)
  against the fake LLM server, the first request's bytes, the bytes of all four
  requests, and the tools offered by default (how many, and their schema bytes);
- rss: rab's own peak RSS in that task (median of 5 runs) and in the UI idle 2 s after
  start;
- callgrind: instruction counts of the hot paths (gungraun), and of a whole print run
  (start-up, one request, a text answer, exit) under callgrind.
A figure below its budget by more than the tolerance is reported (lower the budget to
lock the gain in) but does not fail.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rab = os.environ.get("RAB_BIN", os.path.join(root, "target/release/rab"))
fake = os.environ.get("RAB_FAKE_LLM", os.path.join(root, "target/release/rab-fake-llm"))

# The harness task: the same four turns as bench/task.py. `python3` is looked up on PATH
# so the bytes do not depend on where the interpreter lives.
TASK = {
    "repeat": True,
    "turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "hello.py"}}]},
        {"toolCalls": [{"name": "edit", "arguments": {"path": "hello.py", "edits": [
            {"old_text": "print(\"hello\")", "new_text": "print(\"hello, rab\")"}]}}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "python3 hello.py"}}]},
        {"text": "Done: hello.py now prints hello, rab."},
    ],
}


class Server:
    """rab-fake-llm serving `script`, logging each request."""

    def __init__(self, work, script):
        path = os.path.join(work, "script.json")
        with open(path, "w") as f:
            json.dump(script, f)
        self.log = os.path.join(work, "requests.log")
        self.proc = subprocess.Popen([fake, "--script", path, "--requests", self.log],
                                     stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()

    def requests(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def env_for(work, url):
    return {"PATH": os.environ["PATH"], "HOME": work, "RAB_HOME": os.path.join(work, "home"),
            "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": url, "TZ": "UTC"}


def run_task(work, url, n, timed):
    """One harness task in a fresh project; returns rab's peak RSS in KB when `timed`:
    its own high-water mark (VmHWM), read until it exits. Not `/usr/bin/time`'s, which
    is the largest of rab and every child it waited for: the task runs `python3
    hello.py`, and a Python (13 MB through a pyenv shim) outweighs rab."""
    project = os.path.join(work, f"p{n:03}")
    os.makedirs(project)
    with open(os.path.join(project, "hello.py"), "w") as f:
        f.write("print(\"hello\")\n")
    cmd = [rab, "-p", "--yolo", "--provider", "anthropic", "make hello.py greet rab"]
    proc = subprocess.Popen(cmd, cwd=project, env=env_for(work, url), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    peak = 0
    status = f"/proc/{proc.pid}/status"
    while timed and proc.poll() is None:
        try:
            with open(status) as f:
                m = re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M)
            # A zombie has no memory left to report: keep the last figure.
            if m:
                peak = max(peak, int(m.group(1)))
        except OSError:
            break
        time.sleep(0.0005)
    stdout, stderr = proc.communicate()
    if proc.returncode != 0 or "Done" not in stdout:
        sys.exit(f"gate: the harness task failed:\n{stdout}\n{stderr}")
    return peak if timed else None


def measure_exact(figures):
    figures["binary_bytes"] = os.path.getsize(rab)
    work = tempfile.mkdtemp(prefix="rab-gate-")
    server = Server(work, TASK)
    try:
        run_task(work, server.url, 0, False)
        reqs = server.requests()
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    if len(reqs) != 4:
        sys.exit(f"gate: the harness task made {len(reqs)} requests, not 4")
    figures["first_request_bytes"] = reqs[0]["bytes"]
    figures["task_request_bytes"] = sum(r["bytes"] for r in reqs)
    figures["default_tools"] = reqs[0]["tools"]
    figures["default_tool_schema_bytes"] = reqs[0]["toolBytes"]


def drop_page_cache():
    """Peak RSS counts the binary's pages the kernel maps around each one touched, which
    depends on what of the file is in the page cache: a binary just built is all there
    and reads several MB higher than one loaded by running it. Dropping the cache first
    (root only) measures the second state, which the budgets hold."""
    subprocess.run(["sync"])
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1")
        return True
    except OSError:
        print("gate: cannot drop the page cache (not root?): RSS figures may read high")
        return False


def measure_rss(figures):
    drop_page_cache()
    work = tempfile.mkdtemp(prefix="rab-gate-")
    server = Server(work, TASK)
    try:
        for i in range(2):  # warm-up: the page cache holds the binary
            run_task(work, server.url, i, True)
        peaks = [run_task(work, server.url, 2 + i, True) for i in range(5)]
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    figures["task_peak_rss_kb"] = int(statistics.median(peaks))
    out = subprocess.run([sys.executable, os.path.join(root, "bench/ui_memory.py")],
                         env=dict(os.environ, RAB_BIN=rab, RAB_FAKE_LLM=fake,
                                  RAB_BENCH_UNTIL="idle"),
                         capture_output=True, text=True)
    m = re.search(r"^idle\s+([\d.]+)\s+([\d.]+)", out.stdout, re.M)
    if not m:
        sys.exit(f"gate: bench/ui_memory.py failed:\n{out.stdout}\n{out.stderr}")
    figures["ui_idle_peak_rss_kb"] = int(float(m.group(2)) * 1024)


def callgrind_print_run(figures):
    """Instructions of `rab -p hi` answered with one line of text, all threads."""
    work = tempfile.mkdtemp(prefix="rab-gate-")
    server = Server(work, {"repeat": True, "turns": [{"text": "ok"}]})
    try:
        out_file = os.path.join(work, "callgrind.out")
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
             rab, "--no-session", "-p", "--provider", "anthropic", "hi"],
            cwd=work, env=env_for(work, server.url), capture_output=True, text=True,
            stdin=subprocess.DEVNULL)
    finally:
        server.stop()
    m = re.search(r"Collected : (\d+)", out.stderr)
    shutil.rmtree(work, ignore_errors=True)
    if out.returncode != 0 or not m:
        sys.exit(f"gate: rab under callgrind failed:\n{out.stdout}\n{out.stderr}")
    figures["print_run_instructions"] = int(m.group(1))


# One cargo invocation builds the three benches together (in parallel, their
# dependencies once) and runs them one after another.
BENCH_COMMAND = ["cargo", "bench", "-q", "-p", "rab-ai", "-p", "rab-core", "-p", "rab-tui",
                 "--bench", "callgrind"]


def callgrind_benches(figures):
    out = subprocess.run(BENCH_COMMAND, cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"gate: the callgrind benches failed:\n{out.stdout}\n{out.stderr}")
    name = None
    for line in out.stdout.splitlines():
        head = re.match(r"^callgrind::(\w+)::(\w+) (\w+):", line)
        if head:
            name = f"{head.group(2)}.{head.group(3)}"
            continue
        count = re.match(r"^\s+Instructions:\s+(\d+)", line)
        if count and name:
            figures[f"instructions.{name}"] = int(count.group(1))
            name = None


def load_budgets():
    with open(os.path.join(root, "bench/budgets.toml"), "rb") as f:
        data = tomllib.load(f)
    budgets = {}
    for section, table in data.items():
        tolerance = table.get("tolerance", 0)
        for key, value in table.items():
            if key == "tolerance":
                continue
            if isinstance(value, dict):  # [callgrind.instructions] style nesting
                for sub, v in value.items():
                    budgets[f"{key}.{sub}"] = (section, v, tolerance)
            else:
                budgets[key] = (section, value, tolerance)
    return budgets


def main():
    args = sys.argv[1:]
    only = args[args.index("--only") + 1] if "--only" in args else None
    printing = "--print" in args
    for binary in (rab, fake):
        if not os.path.exists(binary):
            sys.exit(f"gate: {binary} is missing; build it: cargo build --release -p rab -p rab-fake-llm")
    figures = {}
    start = time.monotonic()
    if only in (None, "exact"):
        measure_exact(figures)
    if only in (None, "rss"):
        measure_rss(figures)
    if only in (None, "callgrind"):
        callgrind_print_run(figures)
        callgrind_benches(figures)
    if printing:
        for key, value in figures.items():
            print(f"{key} = {value}")
        return
    budgets = load_budgets()
    failed, better = [], []
    for key, value in figures.items():
        if key not in budgets:
            failed.append(f"{key} = {value}: measured but has no budget in bench/budgets.toml")
            continue
        section, budget, tolerance = budgets[key]
        limit = budget * (1 + tolerance)
        line = f"{key}: {value} (budget {budget}, tolerance {tolerance:.0%})"
        print(("FAIL " if value > limit else "ok   ") + line)
        if value > limit:
            failed.append(f"{key} is {value}, over its budget {budget} by "
                          f"{(value - budget) / budget:+.1%} (tolerance {tolerance:.0%}, [{section}])")
        elif value < budget * (1 - tolerance) or (tolerance == 0 and value < budget):
            better.append(f"{key} is {value}, under its budget {budget}: lower the budget to keep the gain")
    sections = {"exact": ["exact", "size"], "rss": ["rss"], "callgrind": ["callgrind"]}
    missing = [k for k, (section, _, _) in budgets.items()
               if k not in figures and (only is None or section in sections[only])]
    for key in missing:
        failed.append(f"{key} has a budget but was not measured (a bench renamed or removed?)")
    for line in better:
        print(f"note: {line}")
    print(f"gate: {len(figures)} figures in {time.monotonic() - start:.0f} s")
    if failed:
        print("gate FAILED: a budgeted figure regressed. Find the cause; if the change is worth "
              "it, update bench/budgets.toml on purpose and say why in the commit.")
        for line in failed:
            print(f"  - {line}")
        sys.exit(1)
    print("gate passed")


if __name__ == "__main__":
    main()
