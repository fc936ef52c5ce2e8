#!/usr/bin/env python3
"""Time from `rab -c` to a fully drawn history: the real `rab` binary resuming a long
session in a pseudo-terminal (120x40, truecolor).

Usage: bench/resume.py [turns] [runs]   (default 1000 turns: a 2,000-entry session; 5 runs)
RAB_BENCH_LANGUAGES=N: the code blocks rotate through N languages (default 10).
Build first: cargo build --release -p rab -p rab-fake-llm
Environment: RAB_BIN and RAB_FAKE_LLM name other binaries.

The session is made once in print mode against the fake LLM server: one prompt the
model works on for TURNS turns, each a paragraph, a code block (ten languages in turn)
and a `bash` call, then a last answer holding a marker. Each run starts `rab -c` and
measures until the marker is on the terminal (the last thing the resumed history
draws), then the resident memory, and quits.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ui_memory import Pty, rab, serve, steps  # noqa: E402

turns = int(sys.argv[1]) if len(sys.argv) > 1 else 1000


class Terminal(Pty):
    """A pseudo-terminal that answers the device-attributes query rab sends at start
    (as every terminal does), so the figure holds no 2 s query timeout."""

    def _drain(self):
        answered = False
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.out += data
                if not answered and b"\x1b[c" in self.out:
                    os.write(self.master, b"\x1b[?62;22c")
                    answered = True

runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
# How many languages the code blocks rotate through (RAB_BENCH_LANGUAGES, 1-10).
languages = max(1, min(10, int(os.environ.get("RAB_BENCH_LANGUAGES", "10"))))


def main():
    work = tempfile.mkdtemp(prefix="rab-resume-bench-")
    server, project, env = serve(work, steps(turns, languages, "RESUMEDONE"))
    args = [rab, "--yolo", "--provider", "anthropic"]
    try:
        made = subprocess.run(args + ["-p", "--max-turns", str(turns + 1), "work through the steps"],
                              cwd=project, env=env, capture_output=True, text=True)
        if made.returncode != 0:
            sys.exit(f"making the session failed ({made.returncode}): {made.stderr}")
        times, rss = [], []
        # The same start on an empty folder: what a start costs without a history.
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        start = time.monotonic()
        ui = Terminal(args, empty, env)
        ui.wait_for("/help for commands", 60)
        fresh = (time.monotonic() - start) * 1000
        ui.close()
        for _ in range(runs):
            start = time.monotonic()
            ui = Terminal(args + ["-c"], project, env)
            ui.wait_for("RESUMEDONE", 60)
            times.append((time.monotonic() - start) * 1000)
            time.sleep(0.5)
            rss.append(ui.rss()[0])
            ui.close()
    finally:
        server.kill()
        subprocess.run(["rm", "-rf", work])
    times.sort()
    print(f"rab -c on a {2 * turns}-entry session ({turns} turns, code in {languages} "
          f"languages), {runs} runs:")
    print(f"  to the drawn history: median {times[len(times) // 2]:.0f} ms, "
          f"min {times[0]:.0f} ms, max {times[-1]:.0f} ms")
    print(f"  resident memory after drawing: {sorted(rss)[len(rss) // 2]:.1f} MB")
    print(f"  (a start with no history, to the drawn editor: {fresh:.0f} ms)")


if __name__ == "__main__":
    main()
