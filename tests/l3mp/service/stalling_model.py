"""A model server that stalls: it speaks the OpenAI chat-completions protocol on 127.0.0.1 but holds
every request ``stall`` seconds (or until stopped) before answering. For the service's load tests."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class StallingModel:
    """``with StallingModel(stall=30) as model: ... model.base_url ...``; ``model.received`` counts calls."""

    def __init__(self, stall: float = 30.0) -> None:
        self.stall = stall
        self.received = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with model._lock:
                    model.received += 1
                model._stop.wait(model.stall)
                body = json.dumps(_completion('{"edits": []}')).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up waiting, as it should

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> StallingModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stall",
        "object": "chat.completion",
        "created": 0,
        "model": "stall",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
