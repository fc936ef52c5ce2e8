#!/usr/bin/env python3
"""Time until rab's UI (and REPL) is ready, with and without 3 stdio MCP servers configured.

Usage: bench/mcp_startup.py [path/to/rab] [path/to/rab-mcp-test-server] [runs]
Build first: cargo build --release -p rab -p rab-mcp-test-server
(`cargo bench -p rab --bench first_request` also leaves both in target/release.)

"Ready" is the moment the banner ("/help for commands") reaches the terminal: the UI
in a pseudo-terminal, the REPL on a pipe. MCP servers start in the background and must
not delay it; with RAB_MCP_TEST_STARTUP_MS each server also takes that long to start, to
show the UI does not wait for them. Median of N runs after 3 warm-ups.
"""
import json
import os
import pty
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

rab = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/rab")
server = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "target/release/rab-mcp-test-server")
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 30
BANNER = b"/help for commands"


def setup(servers, startup_ms):
    home = tempfile.mkdtemp(prefix="rab-mcp-bench-")
    if servers:
        os.makedirs(os.path.join(home, ".rab"))
        config = {"mcpServers": {f"s{i}": {"command": server, "env": {"RAB_MCP_TEST_STARTUP_MS": str(startup_ms)}}
                                 for i in range(servers)}}
        with open(os.path.join(home, ".rab", "mcp.json"), "w") as f:
            json.dump(config, f)
    env = {"PATH": os.environ["PATH"], "HOME": home, "RAB_HOME": os.path.join(home, "rab"),
           "ANTHROPIC_API_KEY": "k", "TERM": "xterm-256color"}
    return home, env


def until_banner(fd, start, answer_queries=False):
    seen = b""
    answered = False
    while BANNER not in seen:
        # The UI asks the terminal about keyboard support and waits for the primary
        # device attributes reply, as a real terminal sends at once.
        if answer_queries and not answered and b"\x1b[c" in seen:
            os.write(fd, b"\x1b[?62;22c")
            answered = True
        r, _, _ = select.select([fd], [], [], 10)
        if not r:
            sys.exit("timed out waiting for the banner")
        chunk = os.read(fd, 65536)
        if not chunk:
            sys.exit(f"rab exited before the banner: {seen[-500:]!r}")
        seen += chunk
    return (time.perf_counter() - start) * 1000


def tui(env, home):
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(home)
        os.execve(rab, [rab, "--provider", "anthropic", "--no-session"], env)
    elapsed = until_banner(fd, start, answer_queries=True)
    os.write(fd, b"\x03\x03")
    os.kill(pid, 15)
    os.waitpid(pid, 0)
    os.close(fd)
    return elapsed


def repl(env, home):
    start = time.perf_counter()
    p = subprocess.Popen([rab, "--provider", "anthropic", "--no-session", "--repl"], cwd=home, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    elapsed = until_banner(p.stdout.fileno(), start)
    p.stdin.close()
    p.wait()
    return elapsed


for label, servers, startup_ms in [("no MCP servers", 0, 0), ("3 stdio servers", 3, 0),
                                   ("3 stdio servers, 2 s start each", 3, 2000)]:
    home, env = setup(servers, startup_ms)
    for name, fn in [("UI", tui), ("REPL", repl)]:
        times = [fn(env, home) for _ in range(runs + 3)][3:]
        print(f"{label:<32} {name:<5} ready: median {statistics.median(times):6.2f} ms "
              f"(min {min(times):.2f}, max {max(times):.2f}) over {runs} runs")
    shutil.rmtree(home, ignore_errors=True)
