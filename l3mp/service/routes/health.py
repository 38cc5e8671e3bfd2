"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter

from l3mp.service.deps import StoreDep
from l3mp.service.errors import RESPONSES
from l3mp.service.schemas import HealthOut

router = APIRouter(tags=["health"])


@router.get("/health", response_model=HealthOut)
async def health() -> HealthOut:
    """The process is up (nothing else is checked). Async: it never waits for a thread."""
    return HealthOut(status="ok")


@router.get("/ready", response_model=HealthOut, responses={503: RESPONSES[503]})
def ready(store: StoreDep) -> HealthOut:
    """The store answers (503 with ``store_unavailable`` when it does not)."""
    store.list_memories()
    return HealthOut(status="ready")
