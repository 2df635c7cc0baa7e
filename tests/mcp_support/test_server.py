#!/usr/bin/env python3
"""A small, deliberately misbehaving MCP stdio server for Navi's tests.

Usage: test_server.py MODE
  normal          answers like a real server; tools below
  crash-on-start  writes to stderr and exits before answering anything
  no-init         reads requests but never answers `initialize`
If MCP_TEST_LOG is set, every message received is appended to that file.

Tools (normal mode): echo, peek (readOnlyHint), big (10 MB of text),
picture (an image block), slow (never answers by itself), crash (the process
exits mid-call), write (writes a file, reports the error), environ (names of
its environment variables), badutf8 (the answer line is not UTF-8), broken (its
inputSchema is not a valid JSON Schema), needs_task (must run as an MCP task:
`execution.taskSupport = "required"`; a plain call is refused), progress
(sends three `notifications/progress` for the call's progress token, 0.4 s
apart, then answers).
If MCP_TEST_PIDFILE is set, the server appends its pid to that file.
"""
import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "normal"
LOG = os.environ.get("MCP_TEST_LOG")
PNG_1PX = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
           "hQGAhKmMIQAAAABJRU5ErkJggg==")

ARG = {"type": "object", "properties": {"text": {"type": "string"}}}
TOOLS = [
    {"name": "echo", "description": "Echo the text back", "inputSchema": ARG},
    {"name": "peek", "description": "Read-only echo", "inputSchema": ARG,
     "annotations": {"readOnlyHint": True}},
    {"name": "big", "description": "Ten megabytes of text", "inputSchema": {"type": "object"}},
    {"name": "picture", "description": "A tiny PNG", "inputSchema": {"type": "object"}},
    {"name": "slow", "description": "Never finishes", "inputSchema": {"type": "object"}},
    {"name": "crash", "description": "Kills the server", "inputSchema": {"type": "object"}},
    {"name": "badutf8", "description": "Answers with bytes that are not UTF-8",
     "inputSchema": {"type": "object"}},
    {"name": "write", "description": "Writes text to a file; answers ok or the error",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"},
                                                      "text": {"type": "string"}}}},
    {"name": "environ", "description": "The names of the server's environment variables",
     "inputSchema": {"type": "object"}},
    {"name": "broken", "description": "Invalid schema",
     "inputSchema": {"type": "object", "properties": "oops"}},
    {"name": "needs_task", "description": "Runs only as an MCP task",
     "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
    {"name": "progress", "description": "Reports progress, then answers",
     "inputSchema": {"type": "object"}},
]


def log(raw):
    if LOG:
        with open(LOG, "ab") as f:
            f.write(raw.rstrip(b"\n") + b"\n")


def send(obj):
    sys.stdout.buffer.write(json.dumps(obj).encode() + b"\n")
    sys.stdout.buffer.flush()


def result(mid, res):
    send({"jsonrpc": "2.0", "id": mid, "result": res})


def text(s):
    return {"content": [{"type": "text", "text": s}]}


def call(mid, name, args, meta):
    if name == "progress":
        token = meta.get("progressToken")
        for i in range(1, 4):
            time.sleep(0.4)
            if token is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": i, "total": 3,
                                 "message": "step %d of 3" % i}})
        result(mid, text("progress done (token %s)" % json.dumps(token)))
    elif name == "needs_task":
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601,
                        "message": "Tool needs_task requires task augmentation (taskSupport: 'required')"}})
    elif name in ("echo", "peek"):
        result(mid, text("echo: " + str(args.get("text", ""))))
    elif name == "big":
        result(mid, text("B" * (10 * 1024 * 1024)))
    elif name == "picture":
        result(mid, {"content": [{"type": "text", "text": "here it is"},
                                 {"type": "image", "mimeType": "image/png", "data": PNG_1PX}]})
    elif name == "slow":
        pass  # never answers; the client must time out or cancel
    elif name == "crash":
        sys.stderr.write("test server: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "badutf8":
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":' + json.dumps(mid).encode()
                                + b',"result":{"content":[{"type":"text","text":"\xff\xfe bad"}]}}\n')
        sys.stdout.buffer.flush()
    elif name == "write":
        try:
            with open(args.get("path", ""), "w") as f:
                f.write(args.get("text", ""))
            result(mid, text("written"))
        except OSError as e:
            result(mid, text("write failed: %s" % e))
    elif name == "environ":
        result(mid, text(" ".join(sorted(os.environ))))
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32602, "message": "unknown tool " + name}})


def main():
    if os.environ.get("MCP_TEST_PIDFILE"):
        with open(os.environ["MCP_TEST_PIDFILE"], "a") as f:
            f.write("%d\n" % os.getpid())
    sys.stderr.write("test server started in mode %s\n" % MODE)
    sys.stderr.flush()
    if MODE == "crash-on-start":
        sys.stderr.write("test server: cannot start, missing API key\n")
        sys.exit(1)
    for raw in sys.stdin.buffer:
        log(raw)
        if MODE == "no-init":
            continue
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            continue  # a notification
        if method == "initialize":
            result(mid, {"protocolVersion": "2025-06-18",
                         "capabilities": {"tools": {}},
                         "serverInfo": {"name": "navi-test-server",
                                        "version": os.environ.get("MCP_TEST_VERSION", "1.0")}})
        elif method == "tools/list":
            result(mid, {"tools": TOOLS})
        elif method == "tools/call":
            p = msg.get("params") or {}
            call(mid, p.get("name"), p.get("arguments") or {}, p.get("_meta") or {})
        elif method == "ping":
            result(mid, {})
        else:
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32601, "message": "method not found"}})


if __name__ == "__main__":
    main()
