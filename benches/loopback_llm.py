#!/usr/bin/env python3
"""A minimal loopback model server for client-side benchmarks: llama-server's
OpenAI-compatible API (`/v1/models`, `/props`, `/apply-template`,
`/tokenize`, streamed `/v1/chat/completions`) and Ollama's (`/api/tags`,
`/api/show`, `/api/chat`). Every answer is the same short text, so what is
measured is the client. Each request's method and path are appended to the
file named by `--log` (one line each), so a caller can count them.

Usage: benches/loopback_llm.py [--port N] [--log FILE]   (prints the port)
"""
import http.server
import json
import sys
import threading

MODEL = "bench-model"
LOG = None
LOCK = threading.Lock()


class Fake(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def note(self):
        if LOG:
            with LOCK, open(LOG, "a") as f:
                f.write(f"{self.command} {self.path}\n")

    def reply(self, body, ctype="application/json"):
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.note()
        if self.path.startswith("/api/tags"):
            self.reply(json.dumps({"models": [{"name": MODEL, "digest": "d1", "modified_at": "t1"}]}))
        elif self.path.startswith("/v1/models"):
            self.reply(json.dumps({"object": "list", "data": [
                {"id": MODEL, "object": "model", "meta": {"n_ctx_train": 8192, "n_params": 1000000000}}]}))
        elif self.path.startswith("/props"):
            self.reply(json.dumps({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1,
                                   "build_info": "b1-bench", "model_path": MODEL,
                                   "chat_template_caps": {"supports_tools": True}}))
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def do_POST(self):
        self.note()
        n = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(n) or b"{}")
        if self.path.startswith("/api/show"):
            self.reply(json.dumps({"model_info": {"bench.context_length": 8192}, "capabilities": ["completion"]}))
        elif self.path.startswith("/apply-template"):
            text = "".join(str(m.get("content", "")) for m in body.get("messages", []))
            self.reply(json.dumps({"prompt": text}))
        elif self.path.startswith("/tokenize"):
            self.reply(json.dumps({"tokens": list(range(len(body.get("content", "")) // 4))}))
        elif self.path.startswith("/api/chat"):
            lines = [
                {"model": MODEL, "message": {"role": "assistant", "content": "ok"}, "done": False},
                {"model": MODEL, "message": {"role": "assistant", "content": ""}, "done": True,
                 "prompt_eval_count": 100, "eval_count": 1},
            ]
            self.reply("".join(json.dumps(l) + "\n" for l in lines), "application/x-ndjson")
        else:
            chunks = [
                {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 100, "completion_tokens": 1}},
            ]
            self.reply("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n",
                       "text/event-stream")


def start(port=0, log=None):
    """Starts the server in a thread; returns its port."""
    global LOG
    LOG = log
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Fake)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


if __name__ == "__main__":
    args = sys.argv[1:]
    port = int(args[args.index("--port") + 1]) if "--port" in args else 0
    log = args[args.index("--log") + 1] if "--log" in args else None
    print(start(port, log), flush=True)
    threading.Event().wait()
