#!/usr/bin/env python3
"""Per-turn overhead over a long headless run: `rab -p` works for TURNS turns, each one
`bash echo` call, against the fake LLM server, which logs when each request arrived and
when its answer ended (`rab-fake-llm --timings`). The overhead of turn N is the time from
the end of answer N to the arrival of request N+1: rab's own work between a response and
the next request (running the tool, recording it, building the next request), without
the server's.

Usage: bench/turn_overhead.py [turns] [runs]   (default 400 turns, 3 runs)
Build first: cargo build --release -p rab -p rab-fake-llm
Environment: RAB_BIN and RAB_FAKE_LLM name other binaries; RAB_BENCH_SANDBOX=off runs
without the sandbox and RAB_SANDBOX_NAMESPACES=0 with Landlock alone; RAB_BENCH_THINKING=high runs
with that thinking level and a short thinking block in every reply (so each request
carries signed thinking and, on Anthropic, the prefix fingerprint is computed);
RAB_BENCH_EVENT_MS=N makes the server wait N ms before each event of an answer (a
model that takes time to answer, as every real one does; the default answers at once).
Reports, per run, the median overhead over turns 41-60 ("turn 50") and over the last 20
turns ("turn 400"; medians, as a stray scheduling delay would skew a mean), their
difference, and the history size the last request carried;
then the medians over the runs.

The server answers without reading the requests (`--lean`): checking a long history
costs it milliseconds per request on the same two cores, which slowed rab's next turn by
up to 0.5 ms (a remote provider does not share rab's machine); RAB_BENCH_CHECKED=1 has
it check every request as the tests do.

RAB_BENCH_PAIRED=1 measures the same two windows side by side instead, for a machine
whose speed changes over minutes (a VM): one run of TURNS-60 turns saves its session
once; then each of the RUNS pairs is a fresh 60-turn run (its turns 41-60) and a
60-turn run that continues a copy of that session (its last 20 turns are turns
TURNS-20 to TURNS of a conversation), one right after the other.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rab = os.environ.get("RAB_BIN", os.path.join(root, "target/release/rab"))
fake = os.environ.get("RAB_FAKE_LLM", os.path.join(root, "target/release/rab-fake-llm"))
turns = int(sys.argv[1]) if len(sys.argv) > 1 else 400
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3


thinking = os.environ.get("RAB_BENCH_THINKING")


def one_run(work, n, turns=turns, session=None, start=0):
    """Runs `turns` turns (call ids and commands numbered from `start`), in `session`
    when given; returns the gaps and the session file's size."""
    script = [{"toolCalls": [{"name": "bash", "id": f"toolu_{i}",
                              "arguments": {"command": f"echo turn {i}"}}]}
              for i in range(start, start + turns)]
    if thinking:
        for i, turn in enumerate(script):
            turn["thinking"] = f"Turn {i}: run the next echo, then look at its output."
    event_ms = int(os.environ.get("RAB_BENCH_EVENT_MS", "0"))
    if event_ms:
        for turn in script:
            turn["chunkDelayMs"] = event_ms
    script.append({"text": "Finished all turns."})
    script_path = os.path.join(work, f"script{n}.json")
    with open(script_path, "w") as f:
        json.dump({"turns": script}, f)
    log = os.path.join(work, f"timings{n}.log")
    lean = [] if os.environ.get("RAB_BENCH_CHECKED") else ["--lean"]
    server = subprocess.Popen([fake, "--script", script_path, "--timings", log, *lean],
                              stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().strip()
    project = os.path.join(work, f"p{n}")
    os.makedirs(project)
    env = {"PATH": os.environ["PATH"], "HOME": work, "RAB_HOME": os.path.join(work, "home"), "RAB_LOG": os.environ.get("RAB_LOG", "warn"),
           "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": url}
    # RAB_SANDBOX_NAMESPACES=0 compares the namespace sandbox with Landlock alone;
    # RAB_BENCH_SANDBOX=off runs without a sandbox.
    if "RAB_SANDBOX_NAMESPACES" in os.environ:
        env["RAB_SANDBOX_NAMESPACES"] = os.environ["RAB_SANDBOX_NAMESPACES"]
    try:
        extra = ["--thinking", thinking] if thinking else []
        if session:
            extra += ["--session", session]
        if os.environ.get("RAB_BENCH_SANDBOX"):
            extra += ["--sandbox", os.environ["RAB_BENCH_SANDBOX"]]
        out = subprocess.run([rab, "-p", "--yolo", "--provider", "anthropic", "--max-turns",
                              str(turns + 5), *extra, "run the steps"], cwd=project, env=env,
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
    finally:
        server.kill()
    if out.returncode != 0 or "Finished" not in out.stdout:
        sys.exit(f"run failed ({out.returncode}): {out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    req, end = {}, {}
    with open(log) as f:
        for line in f:
            kind, i, micros = line.split()
            (req if kind == "req" else end)[int(i)] = int(micros)
    gaps = [(req[i + 1] - end[i]) / 1000 for i in range(turns) if i in end and i + 1 in req]
    if len(gaps) < turns:
        sys.exit(f"expected {turns} gaps, got {len(gaps)} (retries or missing log lines)")
    if session:
        return gaps, os.path.getsize(session)
    sessions = os.path.join(work, "home", "sessions")
    tape = max((os.path.join(d, f) for d, _, fs in os.walk(sessions) for f in fs),
               key=os.path.getmtime)
    return gaps, os.path.getsize(tape)


def paired(work, n):
    """Pair `n`: a fresh run's gaps and the gaps of a run that continues a copy of the
    long session (made once, before the first pair)."""
    window = 60
    saved = os.path.join(work, "long.jsonl")
    if n == 0:
        one_run(work, "long", turns - window, session=saved)
    gaps, _ = one_run(work, f"e{n}", window)
    copy = os.path.join(work, f"late{n}.jsonl")
    shutil.copyfile(saved, copy)
    late_gaps, tape = one_run(work, f"l{n}", window, session=copy, start=turns - window)
    return gaps, late_gaps, tape


def main():
    work = tempfile.mkdtemp(prefix="rab-turns-bench-")
    early, late, diffs = [], [], []
    if is_paired:
        print(f"{turns} turns, paired: a fresh run's turns 41-60 and turns {turns - 19}-{turns} "
              f"of a continued one, one right after the other (ms)")
    else:
        print(f"{turns} turns, one `bash echo` each; overhead = answer end -> next request (ms)")
    print(f"{'run':<5} {'turn 50':>9} {'turn ' + str(turns):>10} {'diff':>8} {'tape KB':>9}")
    for n in range(runs):
        if is_paired:
            gaps, late_gaps, tape = paired(work, n)
        else:
            gaps, tape = one_run(work, n)
            late_gaps = gaps
        e = statistics.median(gaps[40:60])
        l = statistics.median(late_gaps[-20:])
        early.append(e)
        late.append(l)
        diffs.append(l - e)
        print(f"{n + 1:<5} {e:>9.3f} {l:>10.3f} {l - e:>+8.3f} {tape / 1024:>9.0f}")
    print(f"{'median':<5} {statistics.median(early):>9.3f} {statistics.median(late):>10.3f} "
          f"{statistics.median(diffs):>+8.3f}")
    subprocess.run(["rm", "-rf", work])


is_paired = bool(os.environ.get("RAB_BENCH_PAIRED"))
main()
