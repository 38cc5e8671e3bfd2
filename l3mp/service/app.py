"""The application factory: ``create_app(settings)``; the store opens and closes with the app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from l3mp.llm import LanguageModel
from l3mp.service import dashboard, errors
from l3mp.service.deps import Services
from l3mp.service.limits import BodyLimit
from l3mp.service.routes import health, history, memories, plans, state, updates
from l3mp.settings import Settings
from l3mp.wiring import open_store

API_PREFIX = "/v1"


def create_app(settings: Settings | None = None, *, model: LanguageModel | None = None) -> FastAPI:
    """The REST service over the configured store; ``model`` replaces the one built from settings."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = open_store(settings)
        app.state.services = Services(settings, store, model)
        try:
            yield
        finally:
            store.close()

    app = FastAPI(
        title="l3mp",
        summary="A lifelong world-state memory for service robots",
        version="1",
        lifespan=lifespan,
    )
    errors.install(app)
    app.include_router(health.router)
    for router in (
        history.writes,  # before memories: /memories/import.jsonl is not a memory named import.jsonl
        history.reads,
        memories.writes,
        memories.reads,
        state.reads,
        state.writes,
        updates.reads,
        updates.writes,
        plans.router,
    ):
        app.include_router(router, prefix=API_PREFIX)
    dashboard.install(app)  # the page at / and its read-only data under /dashboard
    app.add_middleware(BodyLimit, limit=settings.max_request_bytes, streamed=(f"{API_PREFIX}/memories/import.jsonl",))
    return app
