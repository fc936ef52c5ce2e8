#!/usr/bin/env python3
"""Wall time and peak RSS of `rab --version` (median of N runs).

Usage: bench/startup.py [path/to/rab] [runs]
Build first: cargo build --release -p rab

Wall time: posix_spawn + waitpid from Python (includes the spawn itself).
Peak RSS: GNU time's %M for each run. (wait4's ru_maxrss of a child forked from Python
would report Python's own ~10 MB, which the child had before exec.)
"""
import os
import statistics
import subprocess
import sys
import time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/rab"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
args = [binary, "--version"]
devnull = os.open(os.devnull, os.O_WRONLY)

walls = []
for i in range(runs + 3):
    start = time.perf_counter()
    pid = os.posix_spawn(binary, args, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{binary} --version failed")
    if i >= 3:  # the first runs warm the page cache
        walls.append(elapsed * 1000)

rss = []
for _ in range(runs):
    out = subprocess.run(["/usr/bin/time", "-f", "%M", *args], capture_output=True, text=True, check=True)
    rss.append(int(out.stderr.strip().splitlines()[-1]) / 1024)

print(f"rab --version over {runs} runs: wall median {statistics.median(walls):.2f} ms "
      f"(min {min(walls):.2f}, max {max(walls):.2f}); peak RSS median {statistics.median(rss):.2f} MB "
      f"(min {min(rss):.2f}, max {max(rss):.2f})")
