#!/usr/bin/env python3
"""Resident memory of the interactive UI: the real `rab` binary in a pseudo-terminal
(120x40, truecolor), driven by keystrokes, against the fake LLM server.

Usage: bench/ui_memory.py [turns]   (default 1000: a 2,000-message session)
Build first: cargo build --release -p rab -p rab-fake-llm
Environment: RAB_BIN and RAB_FAKE_LLM name other binaries; RAB_BENCH_UNTIL=idle|code|long
stops after that stage (to end a heap profile there: RAB_BIN can be a script running
rab under heaptrack).

Reports VmRSS (and the peak, VmHWM) of the rab process:
  1. idle: 2 s after start, nothing typed;
  2. after one answer holding code in 10 languages (rust, python, typescript,
     javascript, bash, go, java, c, c++, html), rendered with highlighting;
  3. after a long session: one prompt the model works on for TURNS turns, each a
     paragraph, a code block (the 10 languages in turn) and a `bash` call, so the
     session holds 2 x TURNS messages, every one rendered into the scrollback;
  4. after opening /tree on it and paging through every entry;
  5. a fresh process resuming that session (`rab -c`), idle.
"""
import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rab = os.environ.get("RAB_BIN", os.path.join(root, "target/release/rab"))
fake = os.environ.get("RAB_FAKE_LLM", os.path.join(root, "target/release/rab-fake-llm"))
turns = int(sys.argv[1]) if len(sys.argv) > 1 else 1000

CODE = {
    "rust": """use std::collections::HashMap;

/// Counts words, longest first.
pub fn count(text: &str) -> Vec<(String, usize)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for word in text.split_whitespace() {
        *seen.entry(word).or_default() += 1;
    }
    let mut out: Vec<_> = seen.into_iter().map(|(w, n)| (w.to_owned(), n)).collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}
""",
    "python": """import dataclasses
from pathlib import Path


@dataclasses.dataclass
class Entry:
    path: Path
    size: int = 0

    def describe(self) -> str:
        return f"{self.path.name}: {self.size / 1024:.1f} KiB"  # human sizes


def walk(root: str) -> list[Entry]:
    return [Entry(p, p.stat().st_size) for p in Path(root).rglob("*.py") if p.is_file()]
""",
    "typescript": """import { readFile } from "node:fs/promises";

export interface Config {
  name: string;
  retries?: number;
  tags: ReadonlyArray<string>;
}

export async function load(path: string): Promise<Config> {
  const raw = JSON.parse(await readFile(path, "utf8")) as Partial<Config>;
  if (!raw.name) throw new Error(`${path}: missing name`);
  return { retries: 3, tags: [], ...raw } as Config;
}
""",
    "javascript": """const express = require("express");
const app = express();

app.get("/items/:id", async (req, res) => {
  const id = Number(req.params.id);
  if (Number.isNaN(id)) return res.status(400).json({ error: "bad id" });
  const item = await db.find({ id }); // may be null
  res.json(item ?? { id, missing: true });
});

app.listen(3000, () => console.log(`listening on ${3000}`));
""",
    "bash": """#!/usr/bin/env bash
set -euo pipefail
for f in "${@:-.}"/*.log; do
  [[ -s "$f" ]] || continue
  lines=$(wc -l < "$f")
  if (( lines > 1000 )); then
    gzip -9 "$f" && echo "compressed $f ($lines lines)"
  fi
done
""",
    "go": """package main

import (
	"fmt"
	"net/http"
	"time"
)

func main() {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("https://example.com")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	fmt.Printf("status %d\\n", resp.StatusCode)
}
""",
    "java": """package com.example;

import java.util.List;
import java.util.stream.Collectors;

public final class Names {
    private Names() {}

    public static List<String> upper(List<String> names) {
        return names.stream()
            .filter(n -> !n.isBlank())
            .map(String::toUpperCase)
            .collect(Collectors.toList());
    }
}
""",
    "c": """#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s N\\n", argv[0]);
        return 1;
    }
    long n = strtol(argv[1], NULL, 10);
    unsigned long long acc = 1;
    for (long i = 2; i <= n; i++) acc *= (unsigned long long)i;
    printf("%ld! = %llu\\n", n, acc);
    return 0;
}
""",
    "cpp": """#include <algorithm>
#include <iostream>
#include <vector>

template <typename T>
T median(std::vector<T> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? T{} : v[v.size() / 2];
}

int main() {
    std::vector<int> xs{5, 3, 9, 1};
    std::cout << median(xs) << std::endl;
}
""",
    "html": """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <style>body { font-family: sans-serif; margin: 2rem; } .hi { color: #c33; }</style>
</head>
<body>
  <h1 class="hi">Hello</h1>
  <script>document.querySelector("h1").addEventListener("click", () => alert("hi"));</script>
</body>
</html>
""",
}
LANGS = list(CODE)


def block(lang):
    return f"```{lang}\n{CODE[lang]}```\n"


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


class Pty:
    """rab in a pseudo-terminal, its output drained on a thread."""

    def __init__(self, args, cwd, env):
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=slave, stdout=slave,
                                     stderr=slave, start_new_session=True,
                                     preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        os.close(slave)
        self.master = master
        self.out = bytearray()
        self.lock = threading.Lock()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.out += data
                if len(self.out) > 4 << 20:
                    del self.out[: len(self.out) - (1 << 20)]

    def type(self, text):
        os.write(self.master, text.encode())

    def wait_for(self, marker, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if marker.encode() in self.out:
                    self.out.clear()
                    return True
            if self.proc.poll() is not None:
                sys.exit(f"rab exited with {self.proc.returncode}")
            time.sleep(0.05)
        with self.lock:
            tail = bytes(self.out[-2000:]).decode(errors="replace")
        sys.exit(f"timed out waiting for {marker!r}; screen tail:\n{tail}")

    def rss(self):
        return status(self.proc.pid, "VmRSS"), status(self.proc.pid, "VmHWM")

    def close(self):
        self.type("\x15/quit\r")  # clear the editor, quit: a wrapper sees a clean exit
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self.master)


def steps(turns, languages, marker):
    """TURNS - 1 turns of a paragraph, a code block (LANGUAGES of them in turn) and a
    `bash` call, then a last answer holding MARKER."""
    script = []
    for i in range(turns - 1):
        lang = LANGS[i % languages]
        text = (f"Step {i}: checking the build output and the {lang} sources before the next "
                f"change, as the plan says.\n\n{block(lang)}")
        script.append({"text": text,
                       "toolCalls": [{"name": "bash", "arguments": {"command": f"echo step {i}"}}]})
    script.append({"text": f"All steps are done. {marker} marker."})
    return script


def serve(work, script):
    """The fake LLM server playing SCRIPT, a project folder under WORK, and the
    environment that points rab at both (the server is the caller's to kill)."""
    script_path = os.path.join(work, "script.json")
    with open(script_path, "w") as f:
        json.dump({"turns": script}, f)
    server = subprocess.Popen([fake, "--script", script_path], stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().strip()
    project = os.path.join(work, "project")
    os.makedirs(project)
    env = {"PATH": os.environ["PATH"], "HOME": work, "RAB_HOME": os.path.join(work, "home"),
           "TERM": "xterm-256color", "COLORTERM": "truecolor", "ANTHROPIC_API_KEY": "bench",
           "ANTHROPIC_BASE_URL": url}
    return server, project, env


def main():
    work = tempfile.mkdtemp(prefix="rab-ui-bench-")
    code_answer = "Here is the code in ten languages.\n\n" + "\n".join(block(l) for l in LANGS)
    script = [{"text": code_answer + "\nCODEDONE marker."}]
    script += steps(turns, len(LANGS), "LONGDONE")
    server, project, env = serve(work, script)
    args = [rab, "--yolo", "--provider", "anthropic"]
    rows = []
    try:
        ui = Pty(args, project, env)
        time.sleep(2)
        rows.append(("idle", *ui.rss()))
        until = os.environ.get("RAB_BENCH_UNTIL")
        if until == "idle":
            return ui.close(), report(rows)
        ui.type("show me code\r")
        ui.wait_for("CODEDONE", 30)
        time.sleep(1)
        rows.append(("code in 10 languages", *ui.rss()))
        if until == "code":
            return ui.close(), report(rows)
        start = time.monotonic()
        ui.type("work through the steps\r")
        ui.wait_for("LONGDONE", 60 + turns)
        elapsed = time.monotonic() - start
        time.sleep(1)
        rows.append((f"{2 * turns}-message session", *ui.rss()))
        if until == "long":
            return ui.close(), report(rows)
        ui.type("/tree\r")
        time.sleep(1)
        for _ in range(turns * 3 // 30 + 10):
            ui.type("\x1b[6~")  # PageDown
            time.sleep(0.01)
        time.sleep(1)
        rows.append(("/tree paged through", *ui.rss()))
        ui.type("\x1b")
        time.sleep(0.3)
        ui.close()
        resumed = Pty(args + ["-c"], project, env)
        time.sleep(3)
        rows.append(("resumed (rab -c), idle", *resumed.rss()))
        resumed.close()
    finally:
        server.kill()
        subprocess.run(["rm", "-rf", work])
    report(rows)
    print(f"the {turns}-turn prompt took {elapsed:.1f} s in the UI")


def report(rows):
    print(f"{'state':<26} {'RSS MB':>8} {'peak MB':>8}")
    for name, rss, peak in rows:
        print(f"{name:<26} {rss:>8.1f} {peak:>8.1f}")


if __name__ == "__main__":
    main()
