#!/usr/bin/env python3
"""`navi run -c` against aichat on the same loopback server, interleaved.

Usage: benches/run_vs_aichat.py [NAVI] [AICHAT] [RUNS] [--url URL]
       (defaults: target/release/navi, aichat on PATH, 30 runs each)

Without --url it starts `loopback_llm.py` (llama-server's OpenAI-compatible
API with one short streamed answer), so the figures are the clients' own
cost. Both speak the OpenAI chat API to the same server: navi through
`--backend openai` (a profile with planning off, one warm-up run that makes
the session and fills navi's server cache), aichat through an
`openai-compatible` client in a temporary config dir. The runs alternate
navi, aichat, navi, … so that machine noise hits both alike. Wall time is
measured around each process (the /usr/bin/time wrapper included, the same
for both), peak RSS is `/usr/bin/time -f %M`. Prints medians and the ratio navi / aichat, and how many HTTP
requests each navi run sent (from the server's log).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import loopback_llm  # noqa: E402

args = [a for a in sys.argv[1:]]
url = None
if "--url" in args:
    i = args.index("--url")
    url = args[i + 1]
    del args[i:i + 2]
NAVI = args[0] if len(args) > 0 else os.path.join(ROOT, "target/release/navi")
AICHAT = args[1] if len(args) > 1 else "aichat"
RUNS = int(args[2]) if len(args) > 2 else 30
MODEL = os.environ.get("BENCH_MODEL", loopback_llm.MODEL)


def timed(cmd, env):
    """Wall seconds and peak RSS (MB) of one run; fails loudly.

    The peak comes from /usr/bin/time (`%M`), which execs the command from
    its own small process: `ru_maxrss` of a child forked straight from this
    Python process would count Python's pages and floor both clients at
    Python's size."""
    t0 = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-f", "navi-bench-rss %M"] + cmd, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")
    status = p.wait()
    wall = time.perf_counter() - t0
    p.stderr.close()
    if status != 0:
        sys.exit(f"{cmd[0]} failed: {err}")
    rss = [l for l in err.splitlines() if l.startswith("navi-bench-rss ")]
    return wall, int(rss[-1].split()[1]) / 1024.0


def main():
    d = tempfile.mkdtemp(prefix="navi-vs-aichat-")
    log = os.path.join(d, "requests.log")
    base = url or f"http://127.0.0.1:{loopback_llm.start(0, log)}/v1"
    cfg = os.path.join(d, "cfg")
    prof = os.path.join(cfg, "profiles", "bench")
    os.makedirs(prof)
    with open(os.path.join(prof, "config.json"), "w") as f:
        f.write('{"id":"bench","name":"Bench","description":"bench","model":["%s"],'
                '"enabled_tools":[],"planning_phase1_enabled":false,'
                '"planning_phase3_enabled":false}' % MODEL)
    with open(os.path.join(prof, "system_prompt.txt"), "w") as f:
        f.write("Answer briefly.")
    aichat_dir = os.path.join(d, "aichat")
    os.makedirs(aichat_dir)
    with open(os.path.join(aichat_dir, "config.yaml"), "w") as f:
        f.write(f"model: local:{MODEL}\nstream: true\nsave: false\nhighlight: false\n"
                f"clients:\n- type: openai-compatible\n  name: local\n  api_base: {base}\n"
                f"  models:\n  - name: {MODEL}\n")
    env = dict(os.environ, NAVI_DATA_DIR=os.path.join(d, "data"), NAVI_CONFIG_DIR=cfg,
               OPENAI_BASE_URL=base, AICHAT_CONFIG_DIR=aichat_dir, HOME=d)
    env.pop("NO_COLOR", None)
    navi = [NAVI, "--backend", "openai", "run", "--profile", "bench"]
    timed(navi + ["hello"], env)  # the session and the server cache
    timed([AICHAT, "hello"], env)
    nw, nr, aw, ar, reqs = [], [], [], [], []
    for _ in range(RUNS):
        before = sum(1 for _ in open(log)) if os.path.exists(log) else 0
        w, r = timed(navi + ["-c", "hello again"], env)
        nw.append(w)
        nr.append(r)
        if os.path.exists(log):
            reqs.append(sum(1 for _ in open(log)) - before)
        w, r = timed([AICHAT, "hello again"], env)
        aw.append(w)
        ar.append(r)
    med = statistics.median
    print(f"server: {base}, {RUNS} runs each, interleaved")
    print(f"{'':14}{'wall ms (median)':>18}{'wall ms (min)':>15}{'peak RSS MB (median)':>22}")
    print(f"{'navi run -c':14}{med(nw) * 1000:>18.1f}{min(nw) * 1000:>15.1f}{med(nr):>22.1f}")
    print(f"{'aichat':14}{med(aw) * 1000:>18.1f}{min(aw) * 1000:>15.1f}{med(ar):>22.1f}")
    print(f"navi / aichat: wall {med(nw) / med(aw):.2f}x, peak RSS {med(nr) / med(ar):.2f}x")
    if reqs:
        print(f"HTTP requests per navi run: {sorted(set(reqs))}")


if __name__ == "__main__":
    main()
