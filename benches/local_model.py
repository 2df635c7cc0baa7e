#!/usr/bin/env python3
"""Prompt tokens a real llama-server evaluates for navi's requests.

Usage: benches/local_model.py LLAMA_SERVER MODEL.gguf [NAVI] [--np N] [--template FILE]

Starts llama-server on 127.0.0.1 (-t 1 --jinja, the ChatML tools template from
../shared/llama, -c 4096, default 4 slots or --np N), then drives `navi run`
through the OpenAI-compatible backend and reads, for every chat request, the
prompt tokens the server evaluated (its `prompt eval time = … / N tokens` log
line) and the prompt's total size (navi's `token_usage` event). Prints one
line per measured step; docs/performance.md quotes the figures.
Nothing leaves the machine; the server is stopped at the end.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

PORT = 18080


def arg(flag, default=None):
    if flag in sys.argv:
        i = sys.argv.index(flag)
        v = sys.argv[i + 1]
        del sys.argv[i : i + 2]
        return v
    return default


NP = arg("--np")
HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = arg(
    "--template", os.path.join(HERE, "..", "..", "shared", "llama", "chatml-tools.jinja")
)
SERVER, MODEL = sys.argv[1], sys.argv[2]
NAVI = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "..", "target", "debug", "navi")


def start_server(log):
    cmd = [SERVER, "-m", MODEL, "-t", "1", "--jinja", "--chat-template-file", TEMPLATE,
           "-c", "4096", "--port", str(PORT), "--host", "127.0.0.1"]
    if NP:
        cmd += ["-np", NP]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health", timeout=1)
            return p
        except Exception:
            time.sleep(0.2)
    p.kill()
    raise SystemExit("llama-server did not start")


class Navi:
    def __init__(self, config=""):
        self.dir = tempfile.mkdtemp(prefix="navi-bench-")
        os.makedirs(os.path.join(self.dir, "cfg"))
        with open(os.path.join(self.dir, "cfg", "config.toml"), "w") as f:
            f.write(config)

    def run(self, *args, stdin=None):
        env = {
            "PATH": os.environ["PATH"],
            "HOME": self.dir,
            "NAVI_DATA_DIR": os.path.join(self.dir, "data"),
            "NAVI_CONFIG_DIR": os.path.join(self.dir, "cfg"),
            "OPENAI_BASE_URL": f"http://127.0.0.1:{PORT}/v1",
        }
        t = time.time()
        out = subprocess.run([NAVI, "--backend", "openai", "run", "--json", "--max-tokens", "48", *args],
                             env=env, input=stdin, capture_output=True, text=True, timeout=600)
        wall = time.time() - t
        events = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
        return out.returncode, events, out.stderr, wall


def evaluated(log_path, since):
    with open(log_path) as f:
        f.seek(since)
        text = f.read()
    return [int(n) for n in re.findall(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens", text)]


def answer(events):
    return "".join(e.get("delta", "") for e in events if e["type"] == "stream_delta")


def prompts(events):
    return [e["prompt_tokens"] for e in events if e["type"] == "token_usage"]


def main():
    logf = tempfile.NamedTemporaryFile(prefix="llama-", suffix=".log", delete=False)
    server = start_server(logf)
    pos = lambda: os.path.getsize(logf.name)
    try:
        profiles = ["developer", "discuss", "modeler_3d", "secretary", "server_admin", "tool_developer"]
        q = "Name a large river in Germany."
        print(f"# llama-server -c 4096, slots: {NP or 'default (4)'}, template: {os.path.basename(TEMPLATE)}")
        for p in ([] if os.environ.get("NAVI_BENCH_QUICK") else profiles):
            navi = Navi()
            at = pos()
            code, ev, err, wall = navi.run("--profile", p, q)
            first = evaluated(logf.name, at)
            at = pos()
            navi2 = Navi()
            code2, ev2, _, wall2 = navi2.run("--profile", p, q + " Answer briefly.")
            second = evaluated(logf.name, at)
            at = pos()
            code3, ev3, _, _ = navi.run("-c", "--profile", p, "And in France?")
            follow = evaluated(logf.name, at)
            print(f"{p}: first request {prompts(ev)[:1]} tokens (evaluated {first}, {wall:.1f} s, exit {code}); "
                  f"new session on the warm server evaluated {second} of {prompts(ev2)[:1]} (exit {code2}); "
                  f"follow-up evaluated {follow} of {prompts(ev3)} (exit {code3})")
        # Three MCP servers: what they add to the default profile's first request.
        node = os.environ.get("NAVI_BENCH_MCP_NODE")
        tbin = os.environ.get("NAVI_BENCH_MCP_TIME")
        if node and tbin:
            mods = os.path.join(node, "@modelcontextprotocol")
            cfg = (
                f'[mcp_servers.everything]\ncommand = "node"\nargs = ["{mods}/server-everything/dist/index.js"]\n'
                f'[mcp_servers.files]\ncommand = "node"\nargs = ["{mods}/server-filesystem/dist/index.js", "/tmp"]\n'
                f'[mcp_servers.time]\ncommand = "{tbin}"\n'
            )
            base = Navi().run(q)[1]
            withm = Navi(cfg).run(q)[1]
            tools = [e for e in withm if e["type"] == "warning"]
            print(f"three MCP servers: first request {prompts(withm)[:1]} vs {prompts(base)[:1]} without "
                  f"(warnings: {[t['message'][:80] for t in tools]})")
        # Two sessions used in turn keep their caches.
        a, b = Navi(), Navi()
        a.run("Tell me a fact about the Rhine.")
        b.run("Tell me a fact about the Danube.")
        at = pos(); a.run("-c", "Another one?"); ea = evaluated(logf.name, at)
        at = pos(); _, evb, _, _ = b.run("-c", "Another one?"); eb = evaluated(logf.name, at)
        print(f"two sessions in turn: follow-ups evaluated A {ea}, B {eb} of {prompts(evb)}")
        if os.environ.get("NAVI_BENCH_QUICK"):
            return
        # Loop notes never leak: ten questions.
        leaks = 0
        qs = ["What is the capital of Italy?", "Name a fruit.", "What colour is the sky?",
              "Say hello.", "What is 2 plus 2?", "Name a planet.", "What do bees make?",
              "Name an ocean.", "What is ice made of?", "Name a musical instrument."]
        n = Navi()
        for i, qq in enumerate(qs):
            _, ev, _, _ = n.run(*(["-c"] if i else []), qq)
            text = answer(ev)
            if "[navi]" in text or "Iteration" in text or "tool round" in text:
                leaks += 1
        print(f"note leaks in ten answers: {leaks}")
        # A 3,000-word paste at -c 4096, then five follow-ups.
        words = " ".join(f"word{i % 97}" for i in range(3000))
        p = Navi()
        codes = [p.run("-", stdin=f"Summarise this text:\n{words}")[0]]
        for i in range(5):
            codes.append(p.run("-c", f"Follow-up {i}: one more sentence?")[0])
        print(f"3,000-word paste and five follow-ups: exit codes {codes}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        print(f"(server log: {logf.name})")


if __name__ == "__main__":
    main()
