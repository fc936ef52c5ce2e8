#!/usr/bin/env python3
"""The 4-turn task benchmark: read -> edit -> `python3 hello.py` -> answer, against the
fake LLM server answering instantly. Reports wall time, CPU time (user+sys) and peak
RSS of the `rab` process (median of N runs). The first request's size is measured by
`cargo bench -p rab --bench first_request`.

Usage: bench/task.py [runs]
Build first: cargo build --release -p rab -p rab-fake-llm
Environment: RAB_BIN and RAB_FAKE_LLM name other binaries (a build without a feature);
RAB_BENCH_PLUGIN names a plugin (.wasm) to put in rab's extensions folder, to measure a
session that loads one (its compiled form is cached by the warm-up runs).
CPU and peak RSS come from GNU time (%U %S %M); wall time from a monotonic clock
around the run (includes GNU time's own exec, about 1 ms).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rab = os.environ.get("RAB_BIN", os.path.join(root, "target/release/rab"))
fake = os.environ.get("RAB_FAKE_LLM", os.path.join(root, "target/release/rab-fake-llm"))
plugin = os.environ.get("RAB_BENCH_PLUGIN")
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
# The interpreter itself, not a version-manager shim (pyenv's shim adds ~70 ms of bash
# scripts per call here, which measures pyenv, not rab).
python = os.path.realpath(sys.executable)

script = {
    "repeat": True,
    "turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "hello.py"}}]},
        {"toolCalls": [{"name": "edit", "arguments": {"path": "hello.py", "edits": [
            {"old_text": "print(\"hello\")", "new_text": "print(\"hello, rab\")"}]}}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": f"{python} hello.py"}}]},
        {"text": "Done: hello.py now prints hello, rab."},
    ],
}

work = tempfile.mkdtemp(prefix="rab-bench-")
script_path = os.path.join(work, "script.json")
with open(script_path, "w") as f:
    json.dump(script, f)
server = subprocess.Popen([fake, "--script", script_path], stdout=subprocess.PIPE, text=True)
if plugin:
    os.makedirs(os.path.join(work, "home", "extensions"))
    shutil.copy(plugin, os.path.join(work, "home", "extensions", os.path.basename(plugin)))
url = server.stdout.readline().strip()

walls, cpus, rss = [], [], []
try:
    for i in range(runs + 2):
        project = os.path.join(work, f"p{i}")
        os.makedirs(project)
        with open(os.path.join(project, "hello.py"), "w") as f:
            f.write("print(\"hello\")\n")
        env = {"PATH": os.environ["PATH"], "HOME": work, "RAB_HOME": os.path.join(work, "home"),
               "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": url}
        start = time.perf_counter()
        out = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", rab, "-p", "--yolo", "--provider", "anthropic",
                              "make hello.py greet rab"], cwd=project, env=env, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL)
        wall = (time.perf_counter() - start) * 1000
        if out.returncode != 0 or "Done" not in out.stdout:
            sys.exit(f"run failed: {out.stdout}\n{out.stderr}")
        with open(os.path.join(project, "hello.py")) as f:
            assert "hello, rab" in f.read()
        user, sys_t, maxrss = out.stderr.strip().splitlines()[-1].split()
        if i >= 2:  # warm-up
            walls.append(wall)
            cpus.append(float(user) + float(sys_t))
            rss.append(int(maxrss) / 1024)
finally:
    server.kill()

shutil.rmtree(work, ignore_errors=True)
print(f"4-turn task over {runs} runs: wall median {statistics.median(walls):.1f} ms "
      f"(min {min(walls):.1f}); CPU median {statistics.median(cpus):.3f} s; "
      f"peak RSS median {statistics.median(rss):.1f} MB")
