"""A real local OpenAI-compatible HTTP server with canned chat completions, for the writer tests.

Like the VLM tests' faulty servers (tests/evaluation/vlm/test_backend_openai.py), it is stdlib HTTP in a
thread: the writer under test talks to it over a socket exactly as to vLLM. It answers the ``i``-th chat
request with ``replies[min(i, len - 1)]`` and keeps every request body.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def fenced(program: str, plan: str = "Plan: a program.") -> str:
    """A writer's reply: a plan, then the program in a python block."""
    return f"{plan}\n```python\n{program}```\n"


class CannedChatServer:
    """Serves model ``model``; ``bodies`` are the chat request bodies received, in order."""

    def __init__(self, replies: list[str], model: str = "writer") -> None:
        self.replies, self.model = list(replies), model
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self._send(200, {"data": [{"id": server.model}]})

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.bodies.append(body)
                    reply = server.replies[min(len(server.bodies) - 1, len(server.replies) - 1)]
                self._send(200, {"choices": [{"message": {"role": "assistant", "content": reply}}]})

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.spec = f"openai:{self.url}#{model}"

    def __enter__(self) -> "CannedChatServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
