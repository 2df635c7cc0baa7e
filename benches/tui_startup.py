#!/usr/bin/env python3
"""Start-up to first frame for the full-screen `navi`, measured in a real pty.

Usage: benches/tui_startup.py [BINARY] [RUNS]
       (default: target/release/navi, 30 runs)

Each run spawns the binary on a fresh 120x40 pty and stops the clock when the
composer placeholder `Ask Navi anything` has been written — the first frame
is complete on the terminal. The backend points at a closed port: the TUI does
no network I/O before the first frame (the backend check starts after it).

Rows:
- first start: no database yet (creates it and a new session);
- later start: opens the latest session (empty);
- resume 1,000: the latest session has 1,000 display messages (Markdown
  answers with code blocks, tool calls and results);
- resume 10,000: the same with 10,000 messages.
For the resume rows, a second row stops the clock when the end of the loaded
history (a `Question` of it) is on screen: the history loads on a blocking
thread while the first frame is drawn.
Sessions are written straight into the SQLite file after `navi sessions
list` created the schema. Prints min / median / p90 in milliseconds.
"""
import fcntl
import json
import os
import pty
import select
import signal
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/navi")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 30
MARK = b"Ask Navi anything"
HISTORY = b"Question"


def env_for(data_dir):
    env = dict(os.environ)
    env.update(
        TERM="xterm-256color",
        NAVI_DATA_DIR=data_dir,
        NAVI_CONFIG_DIR=os.path.join(data_dir, "cfg"),
        OLLAMA_HOST="http://127.0.0.1:9",
        HOME=data_dir,
    )
    env.pop("NO_COLOR", None)
    return env


def once(data_dir, mark=MARK):
    env = env_for(data_dir)
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.execve(BIN, [BIN], env)
    seen = b""
    elapsed = None
    deadline = start + 10
    while time.perf_counter() < deadline:
        r, _, _ = select.select([fd], [], [], 0.05)
        if not r:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        seen += chunk
        if mark in seen[-len(chunk) - len(mark):]:
            elapsed = time.perf_counter() - start
            break
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(fd)
    if elapsed is None:
        raise SystemExit(f"no first frame within 10 s; output ended with {seen[-400:]!r}")
    return elapsed * 1000


def make_session(data_dir, n):
    """A session with `n` display (and context) messages, most recent."""
    subprocess.run([BIN, "sessions", "list"], env=env_for(data_dir),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    db = sqlite3.connect(os.path.join(data_dir, "navi.db"))
    now = int(time.time() * 1000)
    sid = f"bench{n:011d}"
    db.execute("INSERT INTO sessions (id, profile_id, title, pinned, created_at, last_active,"
               " context_token_count) VALUES (?, 'developer', ?, 0, ?, ?, 12000)",
               (sid, f"{n} messages", now, now + 1))
    rows = []
    i = 0
    while len(rows) < n:
        rows.append(("user", f"Question {i}: why does step {i} fail on CI?", None, None, None, None))
        answer = (f"Step {i} fails because **the cache key** differs.\n\n- CI uses `--locked`\n"
                  f"- local builds do not\n\n```rust\nfn key(i: u32) -> String {{\n"
                  f"    format!(\"build-{{i}}\")\n}}\n```\n\nRun it again.")
        if i % 3 == 0:
            call = [{"id": f"c{i}", "name": "terminal",
                     "arguments": {"command": f"cargo build -p crate{i}"}}]
            rows.append(("assistant", answer, json.dumps(call), None, None, None))
            rows.append(("tool", "Compiling\nFinished in 3.2s", None, f"c{i}", "terminal", 1))
        else:
            rows.append(("assistant", answer, None, None, None, None))
        i += 1
    for buf in (0, 1):
        db.executemany(
            "INSERT INTO messages (session_id, buffer, role, content, tool_calls, tool_call_id,"
            " tool_name, success, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'message', ?)",
            [(sid, buf, r, c, tc, tci, tn, s, now) for (r, c, tc, tci, tn, s) in rows[:n]])
    db.commit()
    db.close()


def row(name, times):
    times.sort()
    p90 = times[int(len(times) * 0.9) - 1] if len(times) >= 10 else times[-1]
    print(f"{name:<28} min {times[0]:7.1f}  median {statistics.median(times):7.1f}  p90 {p90:7.1f}  ms")


def main():
    if not os.path.exists(BIN):
        raise SystemExit(f"{BIN} not found; build it with `cargo build --release`")
    first = []
    for _ in range(max(RUNS // 3, 5)):
        with tempfile.TemporaryDirectory() as d:
            first.append(once(d))
    row("first start (new database)", first)
    with tempfile.TemporaryDirectory() as d:
        once(d)
        row("later start (empty session)", [once(d) for _ in range(RUNS)])
    for n in (1_000, 10_000):
        with tempfile.TemporaryDirectory() as d:
            make_session(d, n)
            row(f"resume {n:,} messages", [once(d) for _ in range(RUNS)])
            row(f"  … its history on screen", [once(d, HISTORY) for _ in range(RUNS)])


if __name__ == "__main__":
    main()
