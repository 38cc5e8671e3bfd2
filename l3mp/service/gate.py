"""The early refusal of model-bound requests when every model slot is taken (the slots themselves
are :class:`l3mp.operations.gate.ModelGate`)."""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from l3mp.operations.gate import ModelGate
from l3mp.service.errors import error_response


def is_model_bound(scope: Scope) -> bool:
    """``POST .../updates/nl`` and ``POST .../plans`` (the routes that run in the gate)."""
    path: str = scope.get("path", "")
    return scope.get("method") == "POST" and path.endswith(("/updates/nl", "/plans"))


class EarlyRefusal:
    """Refuses model-bound requests before routing, validation or the body when no slot is left.

    Under a burst of fifty, the full FastAPI path of each refusal (body, dependencies, handler)
    kept the event loop busy long enough to delay ``GET /health`` by most of a second. A slot is
    only taken once the body is parsed, so the gate alone let a whole burst in before it filled:
    requests admitted here and not yet answered are counted as taken too.
    """

    def __init__(self, app: ASGIApp, gate: Callable[[], ModelGate | None]) -> None:
        self.app = app
        self.gate = gate
        self._admitted = 0  # touched only on the event loop's thread

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gate = self.gate() if scope["type"] == "http" and is_model_bound(scope) else None
        if gate is None:
            await self.app(scope, receive, send)
            return
        if gate.full or self._admitted >= gate.concurrency:
            exc = gate.refusal()
            response = error_response(exc.status, exc.code, str(exc))
            response.headers["Retry-After"] = str(exc.retry_after)
            await response(scope, receive, send)
            return
        self._admitted += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self._admitted -= 1
