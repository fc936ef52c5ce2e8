#!/usr/bin/env python3
"""Events per second through `rab --mode rpc`'s writer: one prompt whose answer streams
as 20,000 one-character text deltas from the fake LLM server (answering at once); the
rate is the JSON lines rab writes between the prompt's response and `agent_end`, over
the time between them (median of N runs), as this Python client reads and parses them.
pi's protocol sends the message so far with every update (twice), so the lines grow
with the answer: the bytes per run and rab's own CPU time per run (user + system, from
the process's rusage) are printed too; lines over CPU seconds is what rab could write
to a faster reader. RAB_BIN picks another binary (an older build, to compare).

Usage: bench/rpc_events.py [runs]
Build first: cargo build --release -p rab -p rab-fake-llm
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rab = os.environ.get("RAB_BIN", os.path.join(root, "target/release/rab"))
fake = os.path.join(root, "target/release/rab-fake-llm")
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
deltas = 20_000

script = {"repeat": True, "turns": [{"text": "x" * deltas, "chunkChars": 1}]}
work = tempfile.mkdtemp(prefix="rab-rpc-bench-")
script_path = os.path.join(work, "script.json")
with open(script_path, "w") as f:
    json.dump(script, f)
server = subprocess.Popen([fake, "--script", script_path], stdout=subprocess.PIPE, text=True)
url = server.stdout.readline().strip()
rates = []
try:
    for _ in range(runs):
        env = {"PATH": os.environ["PATH"], "HOME": work, "RAB_HOME": os.path.join(work, "home"),
               "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": url}
        proc = subprocess.Popen([rab, "--mode", "rpc", "--no-session", "--provider", "anthropic"],
                                cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        proc.stdin.write(json.dumps({"type": "prompt", "message": "go"}) + "\n")
        proc.stdin.flush()
        start, lines, size = None, 0, 0
        for line in proc.stdout:
            event = json.loads(line)
            if event.get("type") == "response":
                start = time.perf_counter()
                continue
            lines += 1
            size += len(line)
            if event.get("type") == "agent_end":
                break
        elapsed = time.perf_counter() - start
        proc.stdin.close()
        _, _, usage = os.wait4(proc.pid, 0)
        proc.returncode = 0
        cpu = usage.ru_utime + usage.ru_stime
        rates.append((lines / elapsed, size, cpu))
finally:
    server.kill()
rate = statistics.median(r[0] for r in rates)
size = statistics.median(r[1] for r in rates)
cpu = statistics.median(r[2] for r in rates)
print(f"rpc writer over {runs} runs: median {rate:,.0f} events/s read by this client "
      f"({lines} events per run, {deltas} of them text deltas; {size / 1e6:,.1f} MB per run); "
      f"rab's CPU {cpu * 1000:,.0f} ms per run, {lines / max(cpu, 1e-9):,.0f} events per CPU second")
