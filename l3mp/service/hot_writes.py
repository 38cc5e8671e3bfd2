"""The robots' most frequent writes answered without FastAPI's per-request machinery (pure ASGI).

``POST .../observations``, ``.../observations/batch`` and ``.../deltas`` arrive many times a second
from every robot. For these, FastAPI's middleware, routing, dependency solving and two-step body
validation (``json.loads``, then the model) cost the event loop more than the write itself.
:class:`HotWrites` stands in front of the app's whole stack: it matches the paths itself, parses the
body with the model's own JSON validator and calls the same route function with the same operations,
so the answer is the route's own.

Whatever is not the plain, valid, authorised case goes to the app untouched, before anything was
done for it: a body that does not validate or that declares no length or one over the limit, a
content type other than JSON, a missing or wrong API key, a service still starting. The app then
answers as it answers every request, so errors keep one source. An error of the operation itself
answers through the app's own exception handlers.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from fastapi import FastAPI, Request, Response
from pydantic import BaseModel
from starlette.types import ASGIApp, Receive, Scope, Send

from l3mp.operations import Operations
from l3mp.operations.services import Services
from l3mp.service.deps import write_refusal
from l3mp.service.limits import replayed, route_path, too_large

Handler = Callable[..., Awaitable[Response]]


@dataclass(frozen=True, kw_only=True)
class HotRoute:
    """A write route served here: its path under the memory's, its body's model and its function,
    called as ``function(body=..., memory=..., ops=...)`` (how its FastAPI route calls it too)."""

    tail: str
    body: type[BaseModel]
    function: Handler


class HotWrites:
    """Serves ``routes`` under ``{prefix}/memories/{memory}/`` (see the module's doc); ``app`` (the
    whole stack of ``fastapi``, the app they belong to) answers everything else, and ``fastapi`` gives
    its exception handlers. A body over ``limit`` bytes is the app's to refuse."""

    def __init__(
        self, app: ASGIApp, *, fastapi: FastAPI, prefix: str, routes: tuple[HotRoute, ...], limit: int
    ) -> None:
        self.app = app
        self.fastapi = fastapi
        self.limit = limit
        self.routes: Mapping[str, HotRoute] = {route.tail: route for route in routes}
        tails = "|".join(re.escape(tail) for tail in sorted(self.routes, key=len, reverse=True))
        # {memory} as FastAPI matches it: one non-empty path segment
        self.pattern = re.compile(rf"{re.escape(prefix)}/memories/([^/]+)/({tails})")
        self.served = 0  # requests answered here (the rest went to the app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        matched = self._match(scope)
        if matched is None:
            await self.app(scope, receive, send)
            return
        memory, route = matched
        if not _length_within(scope, self.limit):  # refused, or read as it streams, by the app's own limit
            await self.app(scope, receive, send)
            return
        body = await _whole_body(receive, self.limit)
        if body is None:
            return  # the client left before its body arrived: nobody to answer
        if len(body) > self.limit:  # more than it declared
            await too_large(self.limit)(scope, receive, send)
            return
        services: Services | None = getattr(self.fastapi.state, "services", None)
        parsed = None if services is None else self._parsed(scope, services, route, body)
        if services is None or parsed is None:  # the app answers it as it answers any request
            await self.app(scope, replayed(body, receive), send)
            return
        self.served += 1
        try:
            response = await route.function(body=parsed, memory=memory, ops=Operations(services=services))
        except Exception as exc:
            response = await self._error(scope, exc)
        await response(scope, receive, send)

    def _match(self, scope: Scope) -> tuple[str, HotRoute] | None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return None
        found = self.pattern.fullmatch(route_path(scope))
        if found is None:
            return None
        return found.group(1), self.routes[found.group(2)]

    def _parsed(self, scope: Scope, services: Services, route: HotRoute, body: bytes) -> BaseModel | None:
        """The body as the route's model, when the request is one this door answers; else None."""
        if not body:
            return None
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, value)  # the first of a repeated header, as Starlette reads it
        if not _json_content(headers.get(b"content-type")):
            return None
        key = headers.get(b"x-api-key")
        if write_refusal(services.settings, key.decode("latin-1") if key is not None else None) is not None:
            return None
        try:
            return route.body.model_validate_json(body)
        except Exception:  # answered by the app, worded as for every request
            return None

    async def _error(self, scope: Scope, exc: Exception) -> Response:
        """``exc`` answered by the app's handler for the nearest class of its MRO that has one."""
        handlers = self.fastapi.exception_handlers
        handler = next(handlers[cls] for cls in type(exc).__mro__ if cls in handlers)
        response = handler(Request(scope), exc)
        return await response if inspect.isawaitable(response) else response


def _length_within(scope: Scope, limit: int) -> bool:
    """Whether the request declares a body length of at most ``limit`` bytes (the server holds the
    body to the length it declares)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            return value.isdigit() and int(value) <= limit
    return False


def _json_content(value: bytes | None) -> bool:
    """``application/json``, with or without parameters (FastAPI takes other types differently)."""
    return value is not None and value.split(b";", 1)[0].strip().lower() == b"application/json"


async def _whole_body(receive: Receive, limit: int) -> bytes | None:
    """The request's body (no more of it once past ``limit`` bytes), or None when the client
    disconnected first."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > limit or not message.get("more_body", False):
            return b"".join(chunks)
