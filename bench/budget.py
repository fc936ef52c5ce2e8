#!/usr/bin/env python3
"""Budget overshoot with parallel sub-agents: the first turn starts N `task` sub-agents
at once (default 16); each sub-agent's reply bills 2,000 input and 20,000 output tokens
(the fake bills no more output than the request's max_tokens, as providers do) and
streams slowly, so all are under way together. rab runs with --max-budget-usd CAP
(default 0.30) on the default Anthropic model ($3/$15 per million tokens). Reports what
the run spent, the sub-agents' requests, and the overshoot past the cap next to one
request's worst case (its input plus its default output limit, 32,000 tokens).

Usage: bench/budget.py [N] [CAP]
Build first: cargo build -p rab -p rab-fake-llm (debug is fine: this measures dollars,
not time). RAB_BIN and RAB_FAKE_LLM name other binaries (an older rab, to compare).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rab = os.environ.get("RAB_BIN", os.path.join(root, "target/debug/rab"))
fake = os.environ.get("RAB_FAKE_LLM", os.path.join(root, "target/debug/rab-fake-llm"))
n = int(sys.argv[1]) if len(sys.argv) > 1 else 16
cap = float(sys.argv[2]) if len(sys.argv) > 2 else 0.30

first = {
    "text": "splitting",
    "toolCalls": [{"name": "task", "arguments": {"description": str(i), "prompt": "go"}}
                  for i in range(n)],
    "usage": {"input": 1000, "output": 50},
}
sub = {"text": "sub report", "usage": {"input": 2000, "output": 20000}, "chunkDelayMs": 100}
script = {"turns": [first] + [sub] * n + [{"text": "done"}] * (n + 2)}

work = tempfile.mkdtemp(prefix="rab-budget-")
path = os.path.join(work, "script.json")
with open(path, "w") as f:
    json.dump(script, f)
server = subprocess.Popen([fake, "--script", path], stdout=subprocess.PIPE, text=True)
url = server.stdout.readline().strip()
try:
    project = os.path.join(work, "p")
    os.makedirs(project)
    env = {"PATH": os.environ["PATH"], "HOME": work, "RAB_HOME": os.path.join(work, "home"),
           "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": url}
    out = subprocess.run(
        [rab, "--provider", "anthropic", "--api", "anthropic-messages", "-p", "--yolo",
         "--max-budget-usd", str(cap), "--output-format", "json", "split"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600)
    lines = out.stdout.strip().splitlines()
    if not lines:
        sys.exit(f"no result (exit {out.returncode}): {out.stderr}")
    r = json.loads(lines[-1])
    total = r.get("costUsd") or 0.0
    subs = r.get("subAgents") or {}
    worst = (2000 * 3 + 32000 * 15) / 1e6
    print(f"sub-agents: {n}, cap: ${cap:.2f}, exit {out.returncode}, status {r.get('status')}")
    print(f"spent: ${total:.4f} (sub-agents ${subs.get('costUsd', 0):.4f} over "
          f"{subs.get('requests', 0)} requests)")
    print(f"overshoot: ${max(0.0, total - cap):.4f}; one request's worst case: ${worst:.4f}")
finally:
    server.kill()
    server.wait()
    shutil.rmtree(work, ignore_errors=True)
