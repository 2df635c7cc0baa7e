#!/usr/bin/env python3
"""A terminal that goes away, for Navi's tests.

Usage: hangup.py MARK TEXT MARK2 -- CMD ARGS...

Runs CMD on a fresh pty (as the session leader, the pty its controlling
terminal), answers cursor-position queries like a terminal, waits until MARK
shows up in its output, then (when TEXT is not empty) types TEXT and waits for
MARK2. One second later the pty's master is closed: the terminal is gone, as
when an SSH connection drops. Then waits up to 20 s for CMD to end and prints
`exit N`, `signal N` or `alive`.
"""
import os
import pty
import select
import sys
import time


def main():
    mark, text, mark2 = sys.argv[1], sys.argv[2], sys.argv[3]
    cmd = sys.argv[5:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    seen = bytearray()
    answered = 0

    def wait(needle, start):
        nonlocal answered
        deadline = time.time() + 30
        while needle.encode() not in seen[start:]:
            if time.time() > deadline:
                sys.exit("timed out waiting for %r; output: %r" % (needle, bytes(seen[-800:])))
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    sys.exit("the pty closed early; output: %r" % bytes(seen[-800:]))
                seen.extend(chunk)
                while answered < seen.count(b"\x1b[6n"):
                    os.write(fd, b"\x1b[1;1R")
                    answered += 1

    wait(mark, 0)
    if text:
        start = len(seen)
        os.write(fd, text.encode())
        wait(mark2, start)
    time.sleep(1)
    os.close(fd)
    deadline = time.time() + 20
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFEXITED(status):
                print("exit %d" % os.WEXITSTATUS(status), flush=True)
            else:
                print("signal %d" % os.WTERMSIG(status), flush=True)
            return
        time.sleep(0.1)
    print("alive", flush=True)


if __name__ == "__main__":
    main()
