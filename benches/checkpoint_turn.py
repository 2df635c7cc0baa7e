#!/usr/bin/env python3
"""What checkpoints add to a turn: `navi run` turns that change one file,
in workspaces of different sizes — with the `filesystem` tool (recorded
from the path it names) and with a `terminal` command (recorded whole).

Usage: benches/checkpoint_turn.py [BINARY] [RUNS] [--huge | --huge-only]
       (default: target/debug/navi, 5 runs per case; --huge adds the
       500,000-file tree, which takes a few minutes and ~2 GB to make;
       --huge-only runs that case alone)

Starts a minimal Ollama-compatible server on 127.0.0.1 that answers each
turn with one `filesystem` write (or, when the message starts with "cmd",
one `terminal` command writing a file) and then a short text. For each
workspace it times, with a fresh data directory:

- the first turn ever (a new session in a workspace navi has never seen),
- then RUNS turns, each a new session (`navi run "…"`) — what a user pays
  day to day — and reports the median,
- then RUNS command turns the same way, and reports the median,

and prints what navi said about checkpoints on stderr (the summary line,
or why a turn was not recorded). Workspaces: one file; 50,000 small files
in 1,000 directories (plus 5,000 ignored under `target/`), plain and as a
git repository (committed, `git status` run once); with --huge, 500,000
files in 5,000 directories, plain.

Between cases it waits for any git navi left running in the background
(a first snapshot outside git finishes after `navi run` exits).
"""
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
BIN = ARGS[0] if ARGS else os.path.join(ROOT, "target/debug/navi")
RUNS = int(ARGS[1]) if len(ARGS) > 1 else 5
HUGE = "--huge" in sys.argv
HUGE_ONLY = "--huge-only" in sys.argv


class Fake(http.server.BaseHTTPRequestHandler):
    counter = 0

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
        body = json.loads(self.rfile.read(n) or b"{}")
        if self.path.startswith("/api/show"):
            self.reply(json.dumps({"model_info": {"bench.context_length": 8192}}))
            return
        msgs = body.get("messages", [])
        user = next((m.get("content") or "" for m in reversed(msgs) if m.get("role") == "user"), "")
        if msgs and msgs[-1].get("role") == "tool":
            msg = {"role": "assistant", "content": "done"}
        else:
            Fake.counter += 1
            if user.startswith("cmd"):
                name = "terminal"
                args = {"command": f"mkdir -p bench && echo one changed file > bench/cmd-{Fake.counter}.txt"}
            else:
                name = "filesystem"
                args = {"action": "write", "path": f"bench/edit-{Fake.counter}.txt",
                        "content": "one changed file\n"}
            msg = {"role": "assistant", "content": "",
                   "tool_calls": [{"function": {"index": 0, "name": name, "arguments": args}}]}
        lines = [
            {"model": "bench-model", "message": msg, "done": False},
            {"model": "bench-model", "message": {"role": "assistant", "content": ""}, "done": True,
             "done_reason": "stop", "prompt_eval_count": 100, "eval_count": 1},
        ]
        self.reply("".join(json.dumps(l) + "\n" for l in lines), "application/x-ndjson")


def make_tree(ws, dirs, per_dir, ignored=0):
    for d in range(dirs):
        p = os.path.join(ws, f"src/m{d:04}")
        os.makedirs(p, exist_ok=True)
        for f in range(per_dir):
            with open(os.path.join(p, f"f{f:03}.rs"), "w") as fh:
                fh.write(f"// file {d}/{f}\nfn f{f}() -> u32 {{ {d} + {f} }}\n")
    if ignored:
        with open(os.path.join(ws, ".gitignore"), "w") as fh:
            fh.write("target/\n")
        for i in range(ignored):
            p = os.path.join(ws, f"target/o{i // 100}")
            os.makedirs(p, exist_ok=True)
            with open(os.path.join(p, f"{i}.o"), "w") as fh:
                fh.write("x")


def git(ws, *args):
    subprocess.run(["git", *args], cwd=ws, check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b",
                            GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b"))


def settle(data):
    """Waits until no git of navi's holds an index lock in `data`."""
    deadline = time.time() + 1800
    while time.time() < deadline:
        locks = [os.path.join(r, f) for r, _, fs in os.walk(os.path.join(data, "checkpoints"))
                 for f in fs if f.endswith(".lock")]
        if not locks:
            return
        time.sleep(0.5)


def said(err):
    for line in err.splitlines():
        if "turn " in line and " changed " in line:
            return line.split(":")[0]
        if "checkpoint" in line:
            return line.strip()[:110]
    return "(nothing said)"


def turn(env, ws, text):
    t = time.monotonic()
    out = subprocess.run([BIN, "run", "--profile", "bench", "--approve-all", text], cwd=ws, env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.monotonic() - t
    if out.returncode != 0:
        sys.exit(f"navi run failed: {out.stderr}")
    return wall, said(out.stderr)


def case(url, name, build):
    with tempfile.TemporaryDirectory() as d:
        ws = os.path.join(d, "ws")
        os.makedirs(ws)
        t = time.monotonic()
        build(ws)
        made = time.monotonic() - t
        data = os.path.join(d, "data")
        cfg = os.path.join(d, "cfg")
        os.makedirs(os.path.join(cfg, "profiles/bench"))
        with open(os.path.join(cfg, "profiles/bench/config.json"), "w") as fh:
            json.dump({"id": "bench", "name": "Bench", "description": "bench", "short_description": "bench",
                       "llm_backend": "ollama", "model": ["bench-model"],
                       "enabled_tools": ["filesystem", "terminal"], "planning_enabled": False,
                       "think_enabled": False}, fh)
        with open(os.path.join(cfg, "profiles/bench/system_prompt.txt"), "w") as fh:
            fh.write("bench\n")
        with open(os.path.join(cfg, "config.toml"), "w") as fh:
            fh.write('[security]\napproval = "auto"\n')
        env = dict(os.environ, NAVI_DATA_DIR=data, NAVI_CONFIG_DIR=cfg, OLLAMA_HOST=url,
                   NAVI_BACKEND="ollama", NO_COLOR="1")
        first, first_said = turn(env, ws, "first turn")
        settle(data)
        walls, last = [], ""
        for i in range(RUNS):
            w, last = turn(env, ws, f"turn {i}")
            walls.append(w)
            settle(data)
        cmds, cmd_said = [], ""
        for i in range(RUNS):
            w, cmd_said = turn(env, ws, f"cmd {i}")
            cmds.append(w)
            settle(data)
        print(f"{name:<34} {made:>7.1f} s  {first:>8.2f} s  {statistics.median(walls):>8.2f} s  "
              f"{statistics.median(cmds):>8.2f} s   "
              f"first: {first_said} | later: {last} | command: {cmd_said}", flush=True)
        shutil.rmtree(ws, ignore_errors=True)


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    print(f"binary: {BIN}; {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}")
    print(f"{'workspace':<34} {'made in':>9}  {'1st turn':>10}  {'median':>10}  {'command':>10}")

    def one(ws):
        with open(os.path.join(ws, "a.txt"), "w") as fh:
            fh.write("a\n")

    def plain50k(ws):
        make_tree(ws, 1000, 50, ignored=5000)

    def git50k(ws):
        plain50k(ws)
        git(ws, "init", "-q")
        git(ws, "add", ".")
        git(ws, "commit", "-qm", "base")
        git(ws, "status", "--porcelain")

    if not HUGE_ONLY:
        case(url, "1 file", one)
        case(url, "50,000 files, plain", plain50k)
        case(url, "50,000 files, git repository", git50k)
    if HUGE or HUGE_ONLY:
        case(url, "500,000 files, plain", lambda ws: make_tree(ws, 5000, 100))


if __name__ == "__main__":
    main()
