"""A request-size limit enforced before anything parses the body, and HEAD answered as GET (pure ASGI);
the path as the app's routes match it, for the pure-ASGI parts that pick requests by path."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from l3mp.service.errors import error_response


class BodyLimit:
    """Refuse bodies over ``limit`` bytes with 413: by Content-Length up front, else while streaming."""

    def __init__(self, app: ASGIApp, limit: int, streamed: tuple[str, ...] = ()) -> None:
        self.app = app
        self.limit = limit
        # paths (route templates such as /memories/{memory}/x) whose route streams its body under its own limit
        self.streamed = tuple(compile_path(path)[0] for path in streamed)

    def _streams(self, path: str) -> bool:
        return any(pattern.match(path) for pattern in self.streamed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._streams(route_path(scope)):
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(scope, receive, send)
            return
        # read the whole (bounded) body first, so a chunked body over the limit never reaches the app
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left before its body ended: what came is no request, and nobody waits
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        await self.app(scope, replayed(b"".join(chunks), receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        await too_large(self.limit)(scope, receive, send)


def too_large(limit: int) -> Response:
    """The answer to a body over ``limit`` bytes; the connection closes, as the rest of it is not read."""
    response = error_response(413, "too_large", f"the request body exceeds {limit} bytes")
    response.headers["Connection"] = "close"
    return response


def route_path(scope: Scope) -> str:
    """The path as the app's routes match it. Behind a proxy that mounts the service under a prefix
    (``root_path``), the server may put the prefix in front of the path, and routing takes it off."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if not root or not path.startswith(root):
        return path
    if path == root:
        return ""
    return path[len(root) :] if path[len(root)] == "/" else path


def replayed(body: bytes, receive: Receive) -> Receive:
    """``receive`` for an app whose request body was read already: that body, then whatever comes next
    (a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class HeadAsGet:
    """``HEAD`` on any route answers as ``GET`` would, headers included, without the body.

    FastAPI registers GET routes for GET only, so ``HEAD /health`` (what load balancers and
    uptime checks send) got 405.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if not message.get("more_body", False):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)
