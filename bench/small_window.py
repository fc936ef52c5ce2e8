#!/usr/bin/env python3
"""Small window: a long session of a local model with a 12k-token window, default
compaction settings, scripted against the fake LLM server (which refuses any request
larger than the window, as a local server does).

The session is one `rab --mode rpc` process given P prompts (default 25); each prompt
is answered by N tool calls (default 13: `read` of files and `bash` commands whose
outputs are 2-4 KB) and a closing answer, so the defaults make 325 tool calls, about
two hours of a local model's work. The last prompt's turn is five times as long, so
compaction has to cut inside one turn. The fake server reports input tokens as the
request body's length over 4 and answers summary requests outside the script.

It prints: tool calls run, compactions done, compaction failures, requests refused as
too long, and the largest request relative to the window; then it resumes the session
with `rab -c -p` (the tape must load and its first request fit the window).

Usage: bench/small_window.py [prompts] [calls-per-prompt]
Build first: cargo build --release -p rab -p rab-fake-llm
Environment: RAB_BIN and RAB_FAKE_LLM name other binaries.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rab = os.environ.get("RAB_BIN", os.path.join(root, "target/release/rab"))
fake = os.environ.get("RAB_FAKE_LLM", os.path.join(root, "target/release/rab-fake-llm"))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
prompts = int(args[0]) if len(args) > 0 else 25
per_prompt = int(args[1]) if len(args) > 1 else 13
WINDOW = 12000


def call(n):
    """The n-th tool call: outputs between 2 and 4 KB."""
    if n % 3 == 2:
        lo = 1000 + n
        return {"name": "bash", "arguments": {"command": f"seq {lo} {lo + 400 + (n * 37) % 300}"}}
    return {"name": "read", "arguments": {"path": f"src/part{n % 8}.txt"}}


def main():
    work = tempfile.mkdtemp(prefix="rab-small-window-")
    home = os.path.join(work, "home")
    os.makedirs(os.path.join(home, "agent"))
    ws = os.path.join(work, "ws")
    os.makedirs(os.path.join(ws, "src"))
    for i in range(8):
        line = f"part {i}: entry {{}} holds the value {{}} and passes its check\n"
        size = 2048 + i * 256
        text = ""
        n = 0
        while len(text) < size:
            text += line.format(n, n * 7)
            n += 1
        with open(os.path.join(ws, f"src/part{i}.txt"), "w") as f:
            f.write(text)
    turns, n = [], 0
    for p in range(prompts):
        count = per_prompt * (5 if p == prompts - 1 else 1)
        for _ in range(count):
            turns.append({"toolCalls": [call(n)]})
            n += 1
        turns.append({"text": f"Prompt {p + 1} done: the parts are consistent."})
    turns.append({"text": "Resumed: everything is where it was."})
    script = {
        "measureInput": True,
        "contextLimit": WINDOW,
        "summary": "## Goal\nCheck every part file.\n## Decisions\nNone yet.\n## Files read\n"
                   "src/part*.txt\n## Files modified\nNone.\n## Open tasks\nKeep checking.",
        "turns": turns,
    }
    script_path = os.path.join(work, "script.json")
    with open(script_path, "w") as f:
        json.dump(script, f)
    log_path = os.path.join(work, "requests.log")
    server = subprocess.Popen([fake, "--script", script_path, "--requests", log_path],
                              stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().strip()
    models = {"providers": {"local": {
        "baseUrl": url, "api": "openai-completions", "apiKey": "bench",
        "models": [{"id": "local-12k", "contextWindow": WINDOW, "maxTokens": 2048}]}}}
    with open(os.path.join(home, "models.json"), "w") as f:
        json.dump(models, f)
    env = {"PATH": os.environ["PATH"], "HOME": work, "RAB_HOME": home}
    proc = subprocess.Popen([rab, "--mode", "rpc", "--yolo", "--model", "local/local-12k"],
                            cwd=ws, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, bufsize=1)
    tools = compactions = 0
    failures, errors = [], []
    start = time.perf_counter()
    try:
        for i in range(1, prompts + 1):
            proc.stdin.write(json.dumps({"type": "prompt", "message": f"Check the parts ({i})"}) + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                event = json.loads(line)
                kind = event.get("type")
                if kind == "tool_execution_end":
                    tools += 1
                elif kind == "compaction_end":
                    if event.get("result") is None and not event.get("aborted"):
                        failures.append(event.get("errorMessage"))
                    else:
                        compactions += 1
                elif kind == "response" and not event.get("success", True):
                    errors.append(event)
                elif kind == "agent_end":
                    last = (event.get("messages") or [{}])[-1]
                    if last.get("stopReason") == "error":
                        errors.append(last.get("errorMessage"))
                    break
            else:
                raise SystemExit(f"rab closed its output at prompt {i}")
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    wall = time.perf_counter() - start
    resumed = subprocess.run([rab, "-c", "-p", "--model", "local/local-12k", "Where were we?"],
                             cwd=ws, env=env, capture_output=True, text=True, timeout=60)
    server.kill()
    sizes = []
    with open(log_path) as f:
        for line in f:
            entry = json.loads(line)
            sizes.append((entry["bytes"] // 4, entry.get("status")))
    refused = [s for s, status in sizes if status != 200]
    largest = max(s for s, _ in sizes)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{prompts} prompts, {tools} tool calls, {len(sizes)} requests in {wall:.1f} s")
    print(f"compactions: {compactions} done, {len(failures)} failed; requests refused as too long: {len(refused)}")
    print(f"largest request: ~{largest} tokens, {largest * 100 / WINDOW:.0f} % of the {WINDOW}-token window")
    print(f"resume: exit {resumed.returncode}, answer {resumed.stdout.strip()!r}")
    if failures or errors or refused or resumed.returncode != 0:
        print("failures:", failures[:3], "errors:", json.dumps(errors[:3])[:1500])
        print(resumed.stderr[-1500:])
        sys.exit(1)


main()
