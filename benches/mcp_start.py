#!/usr/bin/env python3
"""How long MCP servers configured as their READMEs show take to start
(issue 35, item 1): `navi mcp check` on `npx -y` (filesystem, everything),
`uvx` and `python -m` (time), each in a fresh HOME (nothing installed: npx
and uvx install from the cache) and then warm, unsandboxed (the default) and
with `sandbox = true` plus the `writable` list the error message asks for.

Usage: benches/mcp_start.py [BINARY] [RUNS]
       (default: target/debug/navi, 3 runs; navi's own start-up is ~10 ms
       of these figures, so the profile hardly matters)

Needs tests/mcp_support/fill_caches.sh to have run (tests/setup.sh does);
npm and uv run offline from copies of those caches, like tests/mcp_readme.rs.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/debug/navi")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
M = os.path.join(ROOT, "target/mcp-servers")


def pinned(key):
    with open(os.path.join(ROOT, "tests/mcp_support/servers.env")) as f:
        for line in f:
            if line.startswith(key + "="):
                return line.split("=", 1)[1].strip()
    sys.exit(f"{key} not in servers.env")


def entry(name, command, args, extra=""):
    quoted = ", ".join(f'"{a}"' for a in args)
    return (f"[mcp_servers.{name}]\ncommand = \"{command}\"\nargs = [{quoted}]\n"
            f"startup_timeout_secs = 300\n{extra}")


def fresh_home(d):
    """A HOME with nothing installed and copies of the filled caches."""
    os.makedirs(os.path.join(d, "cfg"))
    shutil.copytree(os.path.join(M, "npm-cache/_cacache"), os.path.join(d, "npm/_cacache"))
    os.makedirs(os.path.join(d, "uv"))
    for name in os.listdir(os.path.join(M, "uv-cache")):
        if not name.startswith(("environments-", "interpreter-")):
            src = os.path.join(M, "uv-cache", name)
            dst = os.path.join(d, "uv", name)
            (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, dst)
    os.makedirs(os.path.join(d, "files"))


def check(d, config):
    with open(os.path.join(d, "cfg/config.toml"), "w") as f:
        f.write(config)
    env = {
        "PATH": f"{M}/py/bin:{M}/uv/bin:" + os.environ["PATH"],
        "HOME": d, "NAVI_CONFIG_DIR": os.path.join(d, "cfg"),
        "NAVI_DATA_DIR": os.path.join(d, "data"),
        "npm_config_cache": os.path.join(d, "npm"), "npm_config_offline": "true",
        "npm_config_update_notifier": "false",
        "UV_CACHE_DIR": os.path.join(d, "uv"), "UV_OFFLINE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
    }
    t = time.monotonic()
    r = subprocess.run([BIN, "mcp", "check"], env=env, capture_output=True, text=True)
    ms = (time.monotonic() - t) * 1000
    if r.returncode != 0:
        sys.exit(f"navi mcp check failed:\n{r.stdout}{r.stderr}")
    return ms


def main():
    fs, everything = pinned("FS_PKG"), pinned("EVERYTHING_PKG")
    time_spec = "mcp-server-time@" + pinned("TIME_PKG").split("==")[1]
    cases = [
        ("npx -y server-filesystem DIR", lambda d: entry("fs", "npx", ["-y", fs, f"{d}/files"])),
        ("… sandbox = true, writable = [cache, DIR]", lambda d: entry(
            "fs", "npx", ["-y", fs, f"{d}/files"],
            f"sandbox = true\nwritable = [\"{d}/npm\", \"{d}/files\"]\n")),
        ("npx -y server-everything", lambda d: entry("ev", "npx", ["-y", everything])),
        ("uvx mcp-server-time", lambda d: entry("time", "uvx", [time_spec])),
        ("python -m mcp_server_time", lambda d: entry("time", "python", ["-m", "mcp_server_time"])),
    ]
    print(f"{'configuration':<44} {'fresh HOME':>12} {'warm':>10}")
    for label, config in cases:
        fresh, warm = [], []
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory() as d:
                fresh_home(d)
                fresh.append(check(d, config(d)))
                warm.append(check(d, config(d)))
        print(f"{label:<44} {statistics.median(fresh):>9.0f} ms {statistics.median(warm):>7.0f} ms")


if __name__ == "__main__":
    main()
