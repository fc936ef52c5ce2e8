#!/usr/bin/env python3
"""Writes crates/rab/link-order.txt: the functions rab runs in the harness task (and its
sandbox helpers), which the release link puts side by side (crates/rab/build.rs).

Why: peak RSS is mostly the binary's own pages. The kernel maps the pages around each
one a run touches (fault-around, 64 KB), so ~1.5 MB of code spread over 12 MB of .text
keeps most of .text resident; packed together, far less of it is.

Usage: bench/link_order.py
It links the release binary with its symbols kept (RAB_LINK_STRIP=0: same code, same
symbol names as the stripped one),
runs the 4-turn harness task of bench/gate.py under callgrind (with the sandbox
helpers), and lists every function that ran, by mangled name. Functions not in the list
(new code, a renamed function) are placed as usual, so a stale list costs memory, not
correctness; bench/gate.py's RSS budget says when it is time to run this again.
Needs valgrind and rab-fake-llm (cargo build --release -p rab-fake-llm).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fake = os.environ.get("RAB_FAKE_LLM", os.path.join(root, "target/release/rab-fake-llm"))
out_path = os.path.join(root, "crates/rab/link-order.txt")
sys.path.insert(0, os.path.join(root, "bench"))
import gate  # noqa: E402  (the harness task and its server)


def build():
    env = dict(os.environ, RAB_LINK_STRIP="0", RAB_LINK_ORDER="0")
    subprocess.run(["cargo", "build", "--release", "-p", "rab", "--bin", "rab"],
                   cwd=root, env=env, check=True)
    kept = os.path.join(root, "target/release/rab-with-symbols")
    shutil.copy(os.path.join(root, "target/release/rab"), kept)
    return kept


def profile(rab):
    work = tempfile.mkdtemp(prefix="rab-order-")
    gate.fake = fake
    server = gate.Server(work, gate.TASK)
    names = []
    try:
        project = os.path.join(work, "p")
        os.makedirs(project)
        with open(os.path.join(project, "hello.py"), "w") as f:
            f.write("print(\"hello\")\n")
        outs = os.path.join(work, "callgrind.out.%p")
        cmd = ["valgrind", "--tool=callgrind", "--trace-children=yes", "--demangle=no",
               "--compress-strings=no", f"--callgrind-out-file={outs}",
               rab, "-p", "--yolo", "--provider", "anthropic", "make hello.py greet rab"]
        out = subprocess.run(cmd, cwd=project, env=gate.env_for(work, server.url),
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if out.returncode != 0 or "Done" not in out.stdout:
            sys.exit(f"the task failed under callgrind:\n{out.stdout}\n{out.stderr[-3000:]}")
        seen = set()
        # The main process first, then the helpers, each in the order callgrind lists them.
        files = sorted(glob.glob(os.path.join(work, "callgrind.out.*")),
                       key=lambda p: int(p.rsplit(".", 1)[1]))
        for path in files:
            with open(path, errors="replace") as f:
                for line in f:
                    m = re.match(r"fn=(.+)$", line.rstrip("\n"))
                    if m and m.group(1) not in seen and m.group(1).startswith(("_ZN", "_R")):
                        seen.add(m.group(1))
                        names.append(m.group(1))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return names


def main():
    rab = build()
    names = profile(rab)
    if len(names) < 500:
        sys.exit(f"only {len(names)} functions seen: is the binary unstripped?")
    with open(out_path, "w") as f:
        f.write("\n".join(names) + "\n")
    print(f"{out_path}: {len(names)} functions; now build again: cargo build --release -p rab")


if __name__ == "__main__":
    main()
