#!/usr/bin/env python3
"""What reading a session costs against the size of its history (issue 35,
item 3): every command that opens a stored session, at 100 and at 100,000
stored messages. Reading must cost what is shown or needed, not the history.

Usage: benches/history.py [BINARY] [RUNS] [SIZES]
       (default: target/release/navi, 5 runs, sizes 100,100000)

The sessions are made with SQL after `navi sessions list` created the
schema: N display messages (questions, Markdown answers, tool calls with
their results every third turn), and a context buffer as compaction leaves
it (a summary and the last 40 messages). Each command runs RUNS times under
/usr/bin/time; the median wall time (from
Python's clock) and the median peak RSS are printed, and
the ratio of the big session to the small one.

Commands: `navi last ID`; `navi run -c "again"` (against a minimal Ollama
server on 127.0.0.1, as in benches/run_continue.py); `navi sessions show
ID`, `navi sessions export ID --format md|json` (stdout to /dev/null);
plain mode resuming the session (stdin at its end: greet and quit) and
resuming it to list `/rewind`; the TUI resuming it in a 120x40 pty until
the last question is on screen.
"""
import http.server
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
import threading
import time
import fcntl
import termios

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/navi")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
SIZES = [int(s) for s in (sys.argv[3] if len(sys.argv) > 3 else "100,100000").split(",")]

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_continue import Fake  # noqa: E402  (Ollama's endpoints, one streamed "ok")

SID = "bench-history-session-0000000000000"


def env_for(d, url):
    env = dict(os.environ, NAVI_DATA_DIR=d, NAVI_CONFIG_DIR=os.path.join(d, "cfg"), HOME=d,
               OLLAMA_HOST=url, NAVI_BACKEND="ollama", OLLAMA_DEFAULT_MODEL="bench-model",
               TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    return env


def turn(i):
    """One turn's rows: (role, content, tool_calls, tool_call_id, tool_name, success)."""
    rows = [("user", f"Question {i}: why does step {i} fail on CI?", None, None, None, None)]
    answer = (f"Step {i} fails because **the cache key** differs.\n\n- CI uses `--locked`\n"
              f"- local builds do not\n\n```rust\nfn key(i: u32) -> String {{\n"
              f"    format!(\"build-{{i}}\")\n}}\n```\n\nRun it again.")
    if i % 3 == 0:
        call = [{"id": f"c{i}", "name": "terminal",
                 "arguments": {"command": f"cargo build -p crate{i}"}}]
        rows.append(("assistant", "", json.dumps(call), None, None, None))
        rows.append(("tool", "Compiling\nFinished in 3.2s", None, f"c{i}", "terminal", 1))
    rows.append(("assistant", answer, None, None, None, None))
    return rows


def rows_for(n):
    """`n` display rows of whole turns, ending with the last question and
    its answer."""
    rows, i = [], 0
    while len(rows) + 4 <= n - 2:
        rows += turn(i)
        i += 1
    while len(rows) < n - 2:
        rows.append(("user" if len(rows) % 2 == 0 else "assistant", f"filler {len(rows)}",
                     None, None, None, None))
    if rows and rows[-1][0] == "user":
        rows[-1] = ("assistant", "filler answer", None, None, None, None)
    rows += [("user", "Question LAST: the last one", None, None, None, None),
             ("assistant", "The last answer.", None, None, None, None)]
    return rows


def make_session(d, n, url):
    subprocess.run([BIN, "sessions", "list"], env=env_for(d, url), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = sqlite3.connect(os.path.join(d, "navi.db"))
    now = int(time.time() * 1000)
    db.execute("INSERT INTO sessions (id, profile_id, title, pinned, created_at, last_active,"
               " context_token_count) VALUES (?, 'developer', ?, 0, ?, ?, 3000)",
               (SID, f"{n} messages", now - 1000, now))
    rows = rows_for(n)
    sql = ("INSERT INTO messages (session_id, buffer, role, content, tool_calls, tool_call_id,"
           " tool_name, success, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    db.executemany(sql, [(SID, 0, r, c, tc, ti, tn, s, "message", now - n + k)
                         for k, (r, c, tc, ti, tn, s) in enumerate(rows)])
    tail = rows[-40:]
    while tail and tail[0][0] != "user":
        tail = tail[1:]
    context = [("user", "[summary of the earlier conversation] steps 0 to N were fixed.",
                None, None, None, None, "summary")] + [r + ("message",) for r in tail]
    db.executemany(sql, [(SID, 1, r, c, tc, ti, tn, s, kind, now)
                         for (r, c, tc, ti, tn, s, kind) in context])
    db.commit()
    db.close()


def timed(args, env, stdin=b""):
    """Wall ms (measured here: /usr/bin/time's %e has 10 ms steps) and peak
    RSS in MB (/usr/bin/time's %M)."""
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", BIN] + args, env=env, input=stdin,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - start) * 1000
    if r.returncode != 0:
        sys.exit(f"navi {' '.join(args)} failed: {r.stderr.decode()[-2000:]}")
    m = r.stderr.decode().strip().splitlines()[-1]
    return wall, int(m) / 1024


def tui(env, mark):
    """The full-screen UI resuming the session: ms until `mark` is on screen
    and the peak RSS then (VmHWM)."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.execve(BIN, [BIN, "--session", SID], env)
    seen, elapsed, rss = b"", None, 0.0
    while time.perf_counter() < start + 60:
        r, _, _ = select.select([fd], [], [], 0.05)
        if not r:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        seen += chunk
        if mark in seen:
            elapsed = (time.perf_counter() - start) * 1000
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        rss = int(line.split()[1]) / 1024
            break
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(fd)
    if elapsed is None:
        sys.exit(f"the TUI never showed {mark!r}; output ended with {seen[-400:]!r}")
    return elapsed, rss


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    results = {}
    for n in SIZES:
        with tempfile.TemporaryDirectory() as d:
            make_session(d, n, url)
            env = env_for(d, url)
            cases = [
                ("TUI: resume, last question shown", lambda: tui(env, b"the last one")),
                ("navi last ID", lambda: timed(["last", SID], env)),
                ("navi sessions show ID", lambda: timed(["sessions", "show", SID], env)),
                ("navi sessions export --format md", lambda: timed(
                    ["sessions", "export", SID, "--format", "md"], env)),
                ("navi sessions export --format json", lambda: timed(
                    ["sessions", "export", SID, "--format", "json"], env)),
                ("plain: resume and quit", lambda: timed(["--plain", "--session", SID], env)),
                ("plain: resume, /rewind list", lambda: timed(
                    ["--plain", "--session", SID], env, b"/rewind\n")),
                ("navi run -c again", lambda: timed(["run", "-c", "again"], env)),
            ]
            for name, run in cases:
                got = [run() for _ in range(RUNS)]
                results[(name, n)] = (statistics.median(g[0] for g in got),
                                      statistics.median(g[1] for g in got))
    small, big = SIZES[0], SIZES[-1]
    print(f"{'command':<36} {small:>8} msgs {big:>10} msgs   ratio (wall, RSS)")
    for name in dict.fromkeys(k[0] for k in results):
        (ws, ms), (wb, mb) = results[(name, small)], results[(name, big)]
        print(f"{name:<36} {ws:6.0f} ms {ms:5.1f} MB {wb:7.0f} ms {mb:6.1f} MB"
              f"   {wb / ws:5.2f}x {mb / ms:5.2f}x")


if __name__ == "__main__":
    main()
