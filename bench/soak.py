#!/usr/bin/env python3
"""Soak: one `rab --mode rpc` process driven through N prompts (default 2,000) against
the fake LLM server answering at once, with the session recorded and automatic
compaction on. Each prompt is one `read` call and an answer (two requests). The model
is a custom one with a 32k-token window and the fake server reports input tokens from
the request size, so the conversation runs into compaction every hundred-odd prompts,
as a long-lived RPC host's does.

Every 100 prompts it records, from /proc: resident memory (VmRSS), open file
descriptors, threads, and the rab process's CPU time and the wall time per prompt over
those 100 (median wall, mean CPU). The per-prompt figures are rab's whole overhead: the
fake server answers instantly.

Targets (issues 19 and 53): RSS at the end within 5 % of its level after the first 500
prompts (the tape drops what is behind each compaction's cut, see
crates/rab-session/src/tape/fold.rs); no growth in fds or threads; per-prompt overhead at
the end within 20 % of prompt 100.

Usage: bench/soak.py [prompts] [--json FILE]
Build first: cargo build --release -p rab -p rab-fake-llm
Environment: RAB_BIN and RAB_FAKE_LLM name other binaries.
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
args = [a for a in sys.argv[1:] if not a.startswith("--")]
prompts = int(args[0]) if args else 2000
json_out = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
tick = os.sysconf("SC_CLK_TCK")

script = {
    "repeat": True,
    "measureInput": True,
    "summary": "## Goal\nKeep answering.\n## Decisions\nNone.\n## Files read\nnotes.txt\n"
               "## Files modified\nNone.\n## Open tasks\nNone.",
    "turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
        {"text": "Read it: the notes say the build is green and the release is on Friday."},
    ],
}


def proc_figures(pid):
    status = open(f"/proc/{pid}/status").read()
    field = lambda name: int(next(l.split()[1] for l in status.splitlines() if l.startswith(name)))
    stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    cpu = (int(stat[11]) + int(stat[12])) / tick  # utime + stime, seconds
    return {
        "rss_kb": field("VmRSS:"),
        "hwm_kb": field("VmHWM:"),
        "threads": field("Threads:"),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "cpu_s": cpu,
    }


def main():
    work = tempfile.mkdtemp(prefix="rab-soak-")
    home = os.path.join(work, "home")
    os.makedirs(os.path.join(home, "agent"))
    ws = os.path.join(work, "ws")
    os.makedirs(ws)
    with open(os.path.join(ws, "notes.txt"), "w") as f:
        f.write("The build is green.\nThe release is on Friday.\n" * 20)
    script_path = os.path.join(work, "script.json")
    with open(script_path, "w") as f:
        json.dump(script, f)
    server = subprocess.Popen([fake, "--script", script_path], stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().strip()
    models = {"providers": {"soak": {
        "baseUrl": url, "api": "anthropic-messages", "apiKey": "bench",
        "models": [{"id": "soak-32k", "contextWindow": 32000, "maxTokens": 4000,
                    "cost": {"input": 1, "output": 2, "cacheRead": 0.1, "cacheWrite": 1}}]}}}
    with open(os.path.join(home, "models.json"), "w") as f:
        json.dump(models, f)
    with open(os.path.join(home, "agent/settings.json"), "w") as f:
        json.dump({"compaction": {"enabled": True, "reserveTokens": 6000,
                                  "keepRecentTokens": 3000}}, f)
    env = {"PATH": os.environ["PATH"], "HOME": work, "RAB_HOME": home}
    proc = subprocess.Popen([rab, "--mode", "rpc", "--model", "soak/soak-32k"], cwd=ws, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    rows, walls, compactions, errors = [], [], 0, []
    fine = []  # (prompt, rss_kb) every 10 prompts: one sample is high or low by where it
    # falls between two compactions, the median of a window is the level
    cpu_before = proc_figures(proc.pid)["cpu_s"]
    try:
        for i in range(1, prompts + 1):
            start = time.perf_counter()
            proc.stdin.write(json.dumps({"type": "prompt", "message": f"What do the notes say? ({i})"}) + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                event = json.loads(line)
                kind = event.get("type")
                if kind == "compaction_end":
                    compactions += 1
                if kind == "compaction_failed":
                    errors.append(event)
                if kind == "response" and not event.get("success", True):
                    errors.append(event)
                if kind == "agent_end":
                    if (event.get("stop") or {}).get("reason") != "done":
                        errors.append(event)
                    break
            else:
                raise SystemExit(f"rab closed its output at prompt {i}")
            walls.append(time.perf_counter() - start)
            if i % 10 == 0:
                fine.append((i, proc_figures(proc.pid)["rss_kb"]))
            if i % 100 == 0:
                fig = proc_figures(proc.pid)
                row = {"prompt": i, **fig, "compactions": compactions,
                       "wall_ms_median": statistics.median(walls) * 1000,
                       "cpu_ms_per_prompt": (fig["cpu_s"] - cpu_before) * 1000 / len(walls)}
                cpu_before, walls = fig["cpu_s"], []
                rows.append(row)
                print(f"{i:5d}  rss {row['rss_kb'] / 1024:6.1f} MB  peak {row['hwm_kb'] / 1024:6.1f} MB"
                      f"  fds {row['fds']:3d}  threads {row['threads']:2d}"
                      f"  wall {row['wall_ms_median']:5.2f} ms  cpu {row['cpu_ms_per_prompt']:5.2f} ms"
                      f"  compactions {compactions}", flush=True)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        server.kill()
        tape = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(home, "sessions")) for f in fs)
        shutil.rmtree(work, ignore_errors=True)
    first, last = rows[0], rows[-1]
    print(f"\n{prompts} prompts, {compactions} compactions, {len(errors)} errors, session {tape / 1e6:.1f} MB")
    print(f"RSS: {first['rss_kb'] / 1024:.1f} MB at 100, {last['rss_kb'] / 1024:.1f} MB at {last['prompt']} "
          f"({(last['rss_kb'] / first['rss_kb'] - 1) * 100:+.1f} %)")
    warm = next((r for r in rows if r["prompt"] >= 500), first)
    print(f"RSS after warm-up: {warm['rss_kb'] / 1024:.1f} MB at {warm['prompt']}, highest after it "
          f"{max(r['rss_kb'] for r in rows if r['prompt'] >= warm['prompt']) / 1024:.1f} MB, at the end "
          f"{(last['rss_kb'] / warm['rss_kb'] - 1) * 100:+.1f} % (issue 53: within 5 %)")
    windows = [(lo, statistics.median(r for p, r in fine if lo < p <= lo + 1000))
               for lo in range(0, prompts - 999, 1000)]
    if len(windows) > 1:
        print("RSS median per 1,000 prompts (sampled every 10): "
              + ", ".join(f"{r / 1024:.2f}" for _, r in windows) + " MB; last against second "
              f"{(windows[-1][1] / windows[1][1] - 1) * 100:+.1f} %")
    print(f"fds: {first['fds']} -> {last['fds']}; threads: {first['threads']} -> {last['threads']}")
    print(f"per prompt: wall {first['wall_ms_median']:.2f} -> {last['wall_ms_median']:.2f} ms "
          f"({(last['wall_ms_median'] / first['wall_ms_median'] - 1) * 100:+.1f} %), "
          f"cpu {first['cpu_ms_per_prompt']:.2f} -> {last['cpu_ms_per_prompt']:.2f} ms "
          f"({(last['cpu_ms_per_prompt'] / first['cpu_ms_per_prompt'] - 1) * 100:+.1f} %)")
    if errors:
        print("errors:", json.dumps(errors[:3])[:2000])
    if json_out:
        with open(json_out, "w") as f:
            json.dump({"prompts": prompts, "compactions": compactions, "rows": rows,
                       "rss_every_10": fine}, f, indent=1)


main()
