"""The application factory: ``create_app(settings)``; the store opens and closes with the app."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from fastapi import FastAPI
from starlette.routing import NoMatchFound, Route
from starlette.types import Receive, Scope, Send

from l3mp.gc_freeze import gc_frozen
from l3mp.llm import LanguageModel
from l3mp.mcp.http import METHODS, PATH, mcp_door
from l3mp.operations.gate import ModelGate
from l3mp.operations.services import Services
from l3mp.service import dashboard, errors
from l3mp.service.gate import EarlyRefusal
from l3mp.service.hot_writes import HotWrites
from l3mp.service.limits import BodyLimit, HeadAsGet
from l3mp.service.routes import entities, health, history, memories, plans, state, updates
from l3mp.settings import Settings
from l3mp.wiring import open_store
from retrieval.context import count_tokens

API_PREFIX = "/v1"


def _build_routes(app: FastAPI) -> None:
    """FastAPI builds an included router's routes (their pydantic fields) when a request first
    walks past them: that cost ~0.1 s of GIL inside the first burst of model-bound requests.
    Resolving a name that no route has walks past every route, so they are all built now."""
    with suppress(NoMatchFound):
        app.url_path_for("no route has this name")


class ServiceApp(FastAPI):
    """The service's FastAPI app, with :class:`HotWrites` in front of its whole stack when it has one.

    The door stands aside when the app's requests are traced (FastAPI's telemetry is configured),
    so those writes are traced through their routes like every request, and when middleware was
    added after the service's own, which every request must pass.
    """

    hot: HotWrites | None = None
    own_middleware = 0  # how many entries of user_middleware the service added itself

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hot = self.hot
        if hot is None or scope["type"] != "http" or len(self.user_middleware) != self.own_middleware:
            await super().__call__(scope, receive, send)
            return
        telemetry = getattr(self, "_native_telemetry", None)
        if telemetry is None or telemetry.enabled():
            await super().__call__(scope, receive, send)
            return
        if self.root_path:  # as FastAPI sets it for its own routing
            scope["root_path"] = self.root_path
        await hot(scope, receive, send)

    async def past_hot_writes(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The whole of FastAPI's stack: what the door hands every other request to."""
        await super().__call__(scope, receive, send)


def create_app(
    settings: Settings | None = None, *, model: LanguageModel | None = None, hot_writes: bool = True
) -> FastAPI:
    """The REST service over the configured store; ``model`` replaces the one built from settings.
    ``hot_writes=False`` leaves the robots' frequent writes to their FastAPI routes alone (the
    reference :class:`~l3mp.service.hot_writes.HotWrites` is held to)."""
    settings = settings or Settings()
    mcp = mcp_door(settings, lambda: app.state.services)  # one MCP server per app, at /mcp

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = Services(settings=settings, store=open_store(settings), model=model)
        app.state.services = services
        # the token tables load once, in seconds, holding the GIL in stretches: before the first
        # request rather than inside the first burst of model-bound ones (GET /health waited 1.3 s)
        await asyncio.to_thread(count_tokens, "warm up")
        await asyncio.to_thread(services.warm_up)
        await asyncio.to_thread(_build_routes, app)
        try:
            # what start-up left alive (domains, models, routes) stays out of the collector's full
            # passes, which would otherwise stall every request in flight while they walk it
            with gc_frozen():
                async with mcp.running():
                    yield
        finally:
            services.close()

    app = ServiceApp(
        title="l3mp",
        summary="A lifelong world-state memory for service robots",
        version="1",
        lifespan=lifespan,
    )
    errors.install(app)
    app.include_router(health.router)
    for router in (
        # first: a request walks the routes in order, and robots post observations and deltas the
        # most often (every path of it has a segment after the memory's, so none shadows another)
        updates.writes,
        history.writes,  # before memories: /memories/import.jsonl is not a memory named import.jsonl
        history.reads,
        entities.writes,
        memories.writes,
        memories.reads,
        state.reads,
        state.writes,
        updates.reads,
        plans.router,
    ):
        app.include_router(router, prefix=API_PREFIX)
    dashboard.install(app)  # the page at / and its read-only data under /dashboard
    # the same operations for agents (MCP), behind the same keys; Route serves an ASGI app as it is
    app.router.routes.append(Route(PATH, mcp.asgi, methods=METHODS, include_in_schema=False))
    streamed = (f"{API_PREFIX}/memories/import.jsonl", f"{API_PREFIX}{entities.PATH}")
    app.add_middleware(BodyLimit, limit=settings.max_request_bytes, streamed=streamed)

    def gate() -> ModelGate | None:
        services: Services | None = getattr(app.state, "services", None)
        return services.gate if services is not None else None

    app.add_middleware(EarlyRefusal, gate=gate)  # a busy refusal costs next to nothing
    app.add_middleware(HeadAsGet)
    app.own_middleware = len(app.user_middleware)
    if hot_writes:
        limit = settings.max_request_bytes
        app.hot = HotWrites(app.past_hot_writes, fastapi=app, prefix=API_PREFIX, routes=updates.HOT, limit=limit)
    return app
