#!/usr/bin/env python3
"""Prompt tokens a real llama-server evaluates on each wire protocol.

Usage: benches/protocols_local.py LLAMA_SERVER MODEL.gguf [NAVI] [--template FILE]

For each of the three protocols llama-server serves (OpenAI chat
completions, Anthropic messages, OpenAI Responses) it starts a fresh
llama-server on 127.0.0.1 (-t 1 --jinja, the ChatML tools template from
../shared/llama, -c 4096), runs one `navi run` (turn 1) and one
`navi run -c` (the follow-up) in a fresh data dir, and prints, for every chat
request, the prompt tokens the server evaluated (its `prompt eval time = … / N
tokens` log line) and the prompt's total size (navi's `token_usage` event),
with the answer's first words. docs/performance-local.md quotes the figures.
Nothing leaves the machine; each server is stopped at the end.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

PORT = int(os.environ.get("NAVI_BENCH_PORT", "18093"))


def arg(flag, default=None):
    if flag in sys.argv:
        i = sys.argv.index(flag)
        v = sys.argv[i + 1]
        del sys.argv[i : i + 2]
        return v
    return default


HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = arg(
    "--template", os.path.join(HERE, "..", "..", "shared", "llama", "chatml-tools.jinja")
)
SERVER, MODEL = sys.argv[1], sys.argv[2]
NAVI = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "..", "target", "debug", "navi")
BASE = f"http://127.0.0.1:{PORT}"

# protocol name -> (flags, environment)
PROTOCOLS = {
    "OpenAI chat completions": (["--backend", "openai"], {"OPENAI_BASE_URL": BASE + "/v1"}),
    "Anthropic messages": (
        [],
        {"ANTHROPIC_BASE_URL": BASE, "ANTHROPIC_API_KEY": "none"},
    ),
    "OpenAI Responses": (["--backend", "responses"], {"OPENAI_BASE_URL": BASE + "/v1"}),
}


def start_server(log):
    cmd = [SERVER, "-m", MODEL, "-t", "1", "--jinja", "--chat-template-file", TEMPLATE,
           "-c", "4096", "--port", str(PORT), "--host", "127.0.0.1"]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"{BASE}/health", timeout=1)
            return p
        except Exception:
            time.sleep(0.2)
    p.kill()
    raise SystemExit("llama-server did not start")


def navi(home, flags, env_extra, *args):
    env = {
        "PATH": os.environ["PATH"],
        "HOME": home,
        "NAVI_DATA_DIR": os.path.join(home, "data"),
        "NAVI_CONFIG_DIR": os.path.join(home, "cfg"),
        **env_extra,
    }
    out = subprocess.run([NAVI, *flags, "run", "--json", "--max-tokens", "48", *args],
                         env=env, capture_output=True, text=True, timeout=600)
    events = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
    return out.returncode, events, out.stderr


def evaluated(log_path, since):
    with open(log_path) as f:
        f.seek(since)
        text = f.read()
    return [int(n) for n in re.findall(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens", text)]


def prompts(events):
    return [e["prompt_tokens"] for e in events if e["type"] == "token_usage"]


def answer(events):
    return "".join(e.get("delta", "") for e in events if e["type"] == "stream_delta")


def main():
    print(f"# llama-server -c 4096, template: {os.path.basename(TEMPLATE)}")
    for name, (flags, env) in PROTOCOLS.items():
        logf = tempfile.NamedTemporaryFile(prefix="llama-", suffix=".log", delete=False)
        server = start_server(logf)
        pos = lambda: os.path.getsize(logf.name)
        try:
            home = tempfile.mkdtemp(prefix="navi-proto-")
            os.makedirs(os.path.join(home, "cfg"))
            at = pos()
            code, ev, err = navi(home, flags, env, "Name a large river in Germany.")
            first = evaluated(logf.name, at)
            at = pos()
            code2, ev2, err2 = navi(home, flags, env, "-c", "And in France?")
            follow = evaluated(logf.name, at)
            print(f"{name}: turn 1 evaluated {first} of {prompts(ev)} (exit {code}: "
                  f"{answer(ev)[:40]!r}{err.strip()[-200:] if code else ''}); "
                  f"follow-up evaluated {follow} of {prompts(ev2)} (exit {code2}: "
                  f"{answer(ev2)[:40]!r}{err2.strip()[-200:] if code2 else ''})")
        finally:
            server.terminate()
            server.wait(timeout=30)
    print("(server logs in the temp dir)")


if __name__ == "__main__":
    main()
