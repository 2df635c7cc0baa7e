#!/usr/bin/env python3
"""A minimal MCP streamable-HTTP server on 127.0.0.1 for Navi's tests.

Prints its port on the first line of stdout, then serves POST /mcp with plain
JSON answers (no SSE). Tool `whoami` returns the Authorization header of the
request, so a test can check configured headers arrive. Tool `research`
needs MCP tasks (`execution.taskSupport = "required"`).
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SESSION = "navi-test-session"
TOOLS = [{"name": "whoami", "description": "Echo the Authorization header",
          "inputSchema": {"type": "object", "properties": {}}},
         # Must run as an MCP task: navi skips it (answered in plain JSON,
         # which rmcp's typed tool list cannot show).
         {"name": "research", "description": "A task-only tool",
          "inputSchema": {"type": "object", "properties": {}},
          "execution": {"taskSupport": "required"}}]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, code, body=None, session=False):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        if session:
            self.send_header("Mcp-Session-Id", SESSION)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(405)

    def do_DELETE(self):
        self.reply(200)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        msg = json.loads(self.rfile.read(n) or b"{}")
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            self.reply(202)
            return
        if method == "initialize":
            res = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "navi-http-test", "version": "1.0"}}
            self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": res}, session=True)
        elif method == "tools/list":
            self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            who = self.headers.get("Authorization", "(none)")
            res = {"content": [{"type": "text", "text": "authorization: " + who}]}
            self.reply(200, {"jsonrpc": "2.0", "id": mid, "result": res})
        else:
            self.reply(200, {"jsonrpc": "2.0", "id": mid,
                             "error": {"code": -32601, "message": "method not found"}})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
