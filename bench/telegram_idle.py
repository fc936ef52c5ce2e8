#!/usr/bin/env python3
"""Idle cost of `rab telegram`: resident memory and CPU while it long-polls a fake Bot
API server with nothing to do (each poll is held 50 s, as Telegram holds them).

Usage: bench/telegram_idle.py [seconds]   (default 600)
Build first: cargo build --release -p rab -p rab-fake-telegram
Environment: RAB_BIN names another rab binary.
Reports RSS (VmRSS) at the start, the peak (VmHWM) and at the end, and the CPU time
(utime + stime from /proc/PID/stat) spent over the window as a share of one core.
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
fake = os.path.join(root, "target/release/rab-fake-telegram")
seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 600
token = "123456:TEST-token_for-rab"
ticks = os.sysconf("SC_CLK_TCK")


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


work = tempfile.mkdtemp(prefix="rab-tg-bench-")
server = subprocess.Popen([fake], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
base = server.stdout.readline().strip()
home = os.path.join(work, "home")
os.makedirs(os.path.join(home, "agent"))
with open(os.path.join(home, "agent", "settings.json"), "w") as f:
    json.dump({"channels": {"telegram": {"allowedUsers": [1], "apiBase": base}}}, f)
env = {"PATH": os.environ["PATH"], "HOME": work, "RAB_HOME": home, "TELEGRAM_BOT_TOKEN": token,
       "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
bot = subprocess.Popen([rab, "telegram"], cwd=work, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
try:
    time.sleep(2)  # started and polling
    if bot.poll() is not None:
        sys.exit(f"rab telegram exited: {bot.stderr.read()}")
    rss0, cpu0, t0 = status(bot.pid, "VmRSS"), cpu(bot.pid), time.monotonic()
    time.sleep(seconds)
    rss1, peak, cpu1, t1 = status(bot.pid, "VmRSS"), status(bot.pid, "VmHWM"), cpu(bot.pid), time.monotonic()
finally:
    bot.terminate()
    bot.wait()
    server.stdin.close()
    server.wait()
    shutil.rmtree(work, ignore_errors=True)
share = (cpu1 - cpu0) / (t1 - t0) * 100
print(f"rab telegram idle for {t1 - t0:.0f} s: RSS {rss0:.1f} MB at start, {rss1:.1f} MB at the end, "
      f"peak {peak:.1f} MB; CPU {cpu1 - cpu0:.2f} s = {share:.3f} % of one core")
