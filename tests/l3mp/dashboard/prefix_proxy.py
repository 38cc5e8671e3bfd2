"""A reverse proxy that serves a service under a path prefix, as nginx's
``location /robots/home/ { proxy_pass http://127.0.0.1:8000/; }`` does: it takes the prefix off each
request's path before forwarding it, answers 301 for the prefix without its slash (or, with
``redirect_bare=False``, forwards it as ``/``, as Traefik's StripPrefix does) and 404 for anything
outside it. Plain HTTP/1.1 over sockets on 127.0.0.1, one request per connection (it asks both sides
to close after it), so a streamed answer (server-sent events) flows through as it is written.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import urlsplit

_HEAD_LIMIT = 65536


class PrefixProxy:
    def __init__(self, prefix: str, upstream: str, *, redirect_bare: bool = True) -> None:
        self.prefix = prefix
        self.redirect_bare = redirect_bare
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.forwarded: list[str] = []  # the paths forwarded, as the upstream saw them
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> PrefixProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.listener.close()
        with self._lock:
            for conn in self._open:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
                conn.close()
        self._thread.join(timeout=5)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed: the proxy stops
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _track(self, conn: socket.socket) -> socket.socket:
        with self._lock:
            self._open.add(conn)
        return conn

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.discard(conn)
        conn.close()

    def _serve(self, client: socket.socket) -> None:
        self._track(client)
        upstream: socket.socket | None = None
        try:
            head, rest = _read_head(client)
            if head is None:
                return
            line, *headers = head.split(b"\r\n")
            method, target, version = line.split(b" ", 2)
            path = target.decode("latin-1")
            bare = path == self.prefix or path.startswith(self.prefix + "?")
            if bare and self.redirect_bare:
                client.sendall(_answer(301, f"Location: {self.prefix}/{path[len(self.prefix) :]}\r\n"))
                return
            if not bare and not path.startswith(self.prefix + "/"):
                client.sendall(_answer(404))
                return
            forwarded = "/" + path[len(self.prefix) :].lstrip("/")
            with self._lock:
                self.forwarded.append(forwarded)
            kept = [h for h in headers if h.split(b":", 1)[0].strip().lower() not in (b"connection", b"keep-alive")]
            new_head = b"\r\n".join([b" ".join([method, forwarded.encode("latin-1"), version]), *kept])
            upstream = self._track(socket.create_connection(self.upstream))
            upstream.sendall(new_head + b"\r\nConnection: close\r\n\r\n" + rest)
            to_upstream = threading.Thread(target=_pipe, args=(client, upstream), daemon=True)
            to_upstream.start()
            _pipe(upstream, client)
            to_upstream.join()
        except OSError:
            return
        finally:
            for conn in (client, upstream):
                if conn is not None:
                    self._untrack(conn)


def _read_head(conn: socket.socket) -> tuple[bytes | None, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk or len(data) > _HEAD_LIMIT:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    """Bytes from ``source`` to ``sink`` until ``source`` ends; then ``sink`` hears the end too."""
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _answer(status: int, extra: str = "") -> bytes:
    reason = {301: "Moved Permanently", 404: "Not Found"}[status]
    return f"HTTP/1.1 {status} {reason}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n".encode()
