#!/usr/bin/env python3
"""Peak memory of a one-shot `navi run "hi"` (issue 26, item 16).

Usage: benches/run_rss.py [BINARY] [RUNS]
       (default: target/release/navi, 15 runs)

Starts a minimal Ollama-compatible server on 127.0.0.1 (one streamed
answer per chat request, as in benches/run_continue.py), then runs
`navi run hi` RUNS times under /usr/bin/time in one data dir (the first run
creates the database; it is reported apart) and prints the median and the
largest peak RSS (`%M`) of the later runs, and the median wall time. The
binary is dropped from the page cache first (see `evict`).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import http.server

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/navi")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 15

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_continue import Fake  # noqa: E402  (Ollama's endpoints, one streamed "ok")


def once(env):
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", BIN, "run", "hi"],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"navi run failed: {r.stderr}")
    e, m = r.stderr.strip().splitlines()[-1].split()
    return float(e) * 1000, int(m) / 1024


def evict(path):
    """Drops the binary from the page cache: it is then read back as `exec`
    reads it (a binary just written by the linker or `cp` sits in the cache
    differently, and its resident text differs by ~2 MB)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def main():
    evict(BIN)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, NAVI_DATA_DIR=d, NAVI_CONFIG_DIR=os.path.join(d, "cfg"),
                   HOME=d, OLLAMA_HOST=url, NAVI_BACKEND="ollama",
                   OLLAMA_DEFAULT_MODEL="bench-model")
        env.pop("NO_COLOR", None)
        first_wall, first_rss = once(env)
        walls, rss = [], []
        for _ in range(RUNS):
            w, m = once(env)
            walls.append(w)
            rss.append(m)
    srv.shutdown()
    print(f"first run (creates the database): {first_wall:.0f} ms, {first_rss:.1f} MB")
    print(f"later runs ({RUNS}): median {statistics.median(walls):.0f} ms, "
          f"peak RSS median {statistics.median(rss):.1f} MB, max {max(rss):.1f} MB")


if __name__ == "__main__":
    main()
