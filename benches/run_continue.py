#!/usr/bin/env python3
"""Cost of a continued one-shot run (`navi run -c`) against the history size.

Usage: benches/run_continue.py [BINARY] [RUNS]
       (default: target/release/navi, 5 runs per size)

Starts a minimal Ollama-compatible server on 127.0.0.1 (one streamed answer
per chat request), makes a session with one real turn, then grows its
display buffer to N messages with SQLite (a long-lived session: compaction
keeps its context at a summary plus the recent turns, so the context holds
the two real messages). For N = 100 and 100,000 it runs
`navi run -c "again"` under /usr/bin/time and prints the median wall time
and peak RSS. A continued run should cost the same for both sizes.
"""
import http.server
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/navi")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5


class Fake(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, body, ctype="application/json"):
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.startswith("/api/tags"):
            self.reply(json.dumps({"models": [{"name": "bench-model"}]}))
        else:
            self.reply(json.dumps({"version": "0.0.0"}))

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        if self.path.startswith("/api/show"):
            self.reply(json.dumps({"model_info": {"bench.context_length": 8192}}))
            return
        lines = [
            {"model": "bench-model", "message": {"role": "assistant", "content": "ok"}, "done": False},
            {"model": "bench-model", "message": {"role": "assistant", "content": ""}, "done": True,
             "prompt_eval_count": 100, "eval_count": 1},
        ]
        self.reply("".join(json.dumps(l) + "\n" for l in lines), "application/x-ndjson")


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    print(f"{'messages':>9}  {'wall ms (median)':>16}  {'peak RSS MB (median)':>20}")
    for n in (100, 100_000):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, NAVI_DATA_DIR=d, NAVI_CONFIG_DIR=os.path.join(d, "cfg"),
                       OLLAMA_HOST=url, NAVI_BACKEND="ollama", OLLAMA_DEFAULT_MODEL="bench-model")
            env.pop("NO_COLOR", None)
            subprocess.run([BIN, "run", "first"], env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            db = sqlite3.connect(os.path.join(d, "navi.db"))
            sid, = db.execute("SELECT id FROM sessions").fetchone()
            rows = []
            for i in range(n - 2):
                role = "user" if i % 2 == 0 else "assistant"
                rows.append((sid, 0, role, f"old message {i} " + "x" * 200, 1_700_000_000_000 + i))
            db.executemany("INSERT INTO messages(session_id, buffer, role, content, created_at) "
                           "VALUES (?, ?, ?, ?, ?)", rows)
            db.commit()
            db.close()
            walls, rss = [], []
            for _ in range(RUNS):
                r = subprocess.run(["/usr/bin/time", "-f", "%e %M", BIN, "run", "-c", "again"],
                                   env=env, capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit(f"navi run -c failed: {r.stderr}")
                e, m = r.stderr.strip().splitlines()[-1].split()
                walls.append(float(e) * 1000)
                rss.append(int(m) / 1024)
            print(f"{n:>9}  {statistics.median(walls):>16.0f}  {statistics.median(rss):>20.1f}")
    srv.shutdown()


if __name__ == "__main__":
    main()
