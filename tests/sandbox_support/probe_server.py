"""A stdio MCP server with one tool, `probe`, that runs probe.py inside the
server process itself (so what the server inherited is what is probed)."""
import contextlib, io, json, os, sys

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")
TOOLS = [{"name": "probe", "description": "Runs the sandbox probe",
          "inputSchema": {"type": "object", "properties": {"args": {"type": "string"}}}}]


def send(obj):
    sys.stdout.buffer.write(json.dumps(obj).encode() + b"\n")
    sys.stdout.buffer.flush()


def probe(args):
    sys.argv = ["probe", args]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = compile(open(PROBE).read(), PROBE, "exec")
        exec(code, {"__name__": "probe"})
    return buf.getvalue()


def main():
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "navi-probe", "version": "1.0"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            args = ((msg.get("params") or {}).get("arguments") or {}).get("args", "{}")
            try:
                out = probe(args)
            except Exception as e:  # noqa: BLE001 - reported to the client
                out = "probe failed: %r" % e
            send({"jsonrpc": "2.0", "id": mid,
                  "result": {"content": [{"type": "text", "text": out}]}})
        else:
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32601, "message": "method not found"}})


if __name__ == "__main__":
    main()
