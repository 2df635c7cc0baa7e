#!/usr/bin/env python3
"""Start-up to prompt for `navi --plain`, measured in a real pty.

Usage: benches/plain_startup.py [BINARY] [RUNS]
       (default: target/release/navi, 30 runs)

Each run spawns the binary on a fresh pty (80x24) with an empty data dir and
a throwaway config dir, answers the terminal's cursor-position queries the
way a terminal emulator would, and stops the clock when the prompt text
`navi[` appears. Rows: the reedline prompt (TERM=xterm-256color) and the line
reader on a dumb terminal (TERM=dumb), both on a data dir from an earlier
start (database, a session to resume, a 1000-line history file); for
reference `navi sessions list` (process start, config, database, no UI); and
the very first start, which also creates the database.

No server is needed: plain mode does no network I/O before the first
message. Prints min / median / p90 wall time in milliseconds, and for the
pty rows the median CPU time (user + system) the process used, which the
load of a shared machine disturbs much less than wall time.
"""
import fcntl
import os
import pty
import select
import shutil
import signal
import statistics
import struct
import sys
import tempfile
import termios
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/navi")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
DSR = b"\x1b[6n"
# CPU time (user + system) the child used up to the prompt, per run.
CPU = []


def once(term, data_dir):
    env = dict(os.environ)
    env.update(
        TERM=term,
        NAVI_DATA_DIR=data_dir,
        NAVI_CONFIG_DIR=os.path.join(data_dir, "cfg"),
        OLLAMA_HOST="http://127.0.0.1:9",
    )
    env.pop("NO_COLOR", None)
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(BIN, [BIN, "--plain"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    seen = b""
    elapsed = None
    deadline = start + 10
    while time.perf_counter() < deadline:
        r, _, _ = select.select([fd], [], [], 0.05)
        if not r:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        seen += chunk
        if DSR in chunk:
            os.write(fd, b"\x1b[1;1R")
        if b"navi[" in seen and elapsed is None:
            elapsed = time.perf_counter() - start
            break
    os.kill(pid, signal.SIGKILL)
    _, _, usage = os.wait4(pid, 0)
    os.close(fd)
    if elapsed is None:
        raise SystemExit(f"no prompt within 10 s; output was {seen!r}")
    CPU.append((usage.ru_utime + usage.ru_stime) * 1000)
    return elapsed * 1000


def baseline(data_dir):
    """`navi sessions list` to exit: process start, config, database open."""
    import subprocess
    env = dict(os.environ, NAVI_DATA_DIR=data_dir, NAVI_CONFIG_DIR=os.path.join(data_dir, "cfg"))
    start = time.perf_counter()
    subprocess.run([BIN, "sessions", "list"], env=env, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def report(name, samples):
    samples.sort()
    p90 = samples[int(len(samples) * 0.9) - 1]
    cpu = f"   cpu median {statistics.median(CPU):5.1f} ms" if CPU else ""
    CPU.clear()
    print(f"{name:<34} min {samples[0]:6.1f} ms   median {statistics.median(samples):6.1f} ms   p90 {p90:6.1f} ms{cpu}")


def main():
    if not os.path.exists(BIN):
        raise SystemExit(f"{BIN} not found; build it first (cargo build --release)")
    print(f"{BIN}, {RUNS} runs each, load average {os.getloadavg()[0]:.1f}")
    warm = tempfile.mkdtemp(prefix="navi-bench-")
    # A previous start: the database exists, a session to resume, a history.
    once("xterm-256color", warm)
    CPU.clear()
    with open(os.path.join(warm, "history.txt"), "w") as f:
        f.writelines(f"earlier message number {i}\n" for i in range(1000))
    rows = [
        ("reedline prompt", lambda: once("xterm-256color", warm)),
        ("TERM=dumb line reader", lambda: once("dumb", warm)),
        ("baseline: `navi sessions list`", lambda: baseline(warm)),
    ]
    for name, run in rows:
        report(name, [run() for _ in range(RUNS)])
    fresh = []
    for _ in range(RUNS):
        d = tempfile.mkdtemp(prefix="navi-bench-")
        fresh.append(once("xterm-256color", d))
        shutil.rmtree(d, ignore_errors=True)
    report("first start ever (creates the db)", fresh)
    shutil.rmtree(warm, ignore_errors=True)


if __name__ == "__main__":
    main()
