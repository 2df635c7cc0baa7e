#!/usr/bin/env python3
"""Writes benches/startup-order.txt: the functions of the navi binary that a
one-shot `navi run` executes, for the linker to lay out side by side
(`--symbol-ordering-file`, see build.rs and docs/performance.md).

Usage: benches/startup_order.py [BINARY]   (default: target/release/navi)

Runs the binary under valgrind's callgrind against the fake Ollama server
of benches/run_rss.py: a first `navi run` (creates the database), a second,
one with --json and one continuing the session (-c); then the same against
the llama-server-like fake of benches/loopback_llm.py through the
OpenAI-compatible backend, with the default profile and with the one of
benches/run_vs_aichat.py. Every function that ran and is defined in the
binary is written (mangled names, six a line).
Names go stale quietly (the linker ignores names that no longer exist):
they carry navi's crate hash, which changes with any dependency or
toolchain change, and ThinLTO names local functions after their module's
hash (`.llvm.N`), which changes with the code. So re-run it on a release
build of the final source of a change that touches the hot path, and build
again with the new list; the docs record the page faults to compare.
"""
import http.server
import os
import re
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from run_rss import Fake  # noqa: E402
import loopback_llm  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/navi")
OUT = os.path.join(ROOT, "benches/startup-order.txt")


def executed(env, args, out):
    subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no",
                    f"--callgrind-out-file={out}", BIN, *args],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    names, ran = {}, set()
    for line in open(out):
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == "fn":
                ran.add(m.group(2))
    return {names[i] for i in ran if i in names}


def main():
    defined = set()
    nm = subprocess.run(["nm", "--defined-only", BIN], capture_output=True, text=True, check=True)
    for line in nm.stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "tTwW":
            defined.add(p[2])
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    ran = set()
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NAVI_DATA_DIR=d, NAVI_CONFIG_DIR=os.path.join(d, "cfg"),
                   HOME=d, OLLAMA_HOST=url, NAVI_BACKEND="ollama",
                   OLLAMA_DEFAULT_MODEL="bench-model")
        env.pop("NO_COLOR", None)
        out = os.path.join(d, "callgrind.out")
        for args in (["run", "hi"], ["run", "hi"], ["run", "--json", "hi"], ["run", "-c", "again"]):
            ran |= executed(env, args, out)
    srv.shutdown()
    with tempfile.TemporaryDirectory() as d:
        base = f"http://127.0.0.1:{loopback_llm.start(0)}/v1"
        env = dict(os.environ, NAVI_DATA_DIR=d, NAVI_CONFIG_DIR=os.path.join(d, "cfg"),
                   HOME=d, OPENAI_BASE_URL=base)
        env.pop("NO_COLOR", None)
        env.pop("NAVI_BACKEND", None)
        out = os.path.join(d, "callgrind.out")
        openai = ["--backend", "openai", "--model", loopback_llm.MODEL]
        for args in (["run", "hi"], ["run", "-c", "again"], ["run", "-c", "--json", "more"]):
            ran |= executed(env, openai[:2] + [args[0]] + openai[2:] + args[1:], out)
        # The profile of benches/run_vs_aichat.py: no tools, no planning.
        prof = os.path.join(d, "cfg", "profiles", "bench")
        os.makedirs(prof)
        with open(os.path.join(prof, "config.json"), "w") as f:
            f.write('{"id":"bench","name":"Bench","description":"bench","model":["%s"],'
                    '"enabled_tools":[],"planning_phase1_enabled":false,'
                    '"planning_phase3_enabled":false}' % loopback_llm.MODEL)
        with open(os.path.join(prof, "system_prompt.txt"), "w") as f:
            f.write("Answer briefly.")
        for args in (["run", "--profile", "bench", "hello"], ["run", "-c", "hello again"]):
            ran |= executed(env, openai[:2] + args, out)
    order = sorted(n for n in ran if n in defined)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    # Six names a line (the file stays short); build.rs splits them.
    with open(OUT, "w") as f:
        for i in range(0, len(order), 6):
            f.write(" ".join(order[i:i + 6]) + "\n")
    print(f"{len(order)} functions written to {OUT}")


if __name__ == "__main__":
    main()
