"""Dependencies of the routes: the store, the memory named in the path, the model and API keys."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, HTTPException, Request, Security
from fastapi.security import APIKeyHeader
from pydantic import SecretStr

from kg_memory import GraphStore, WorldMemory
from l3mp.operations import Operations
from l3mp.operations.gate import client_key
from l3mp.operations.services import Services
from l3mp.settings import Settings


def _services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def _services(request: Request) -> Services:
    return _services_of(request)


ServicesDep = Annotated[Services, Depends(_services)]


async def _store(services: ServicesDep) -> GraphStore:
    return services.store


StoreDep = Annotated[GraphStore, Depends(_store)]


async def _operations(request: Request) -> Operations:
    return Operations(services=_services_of(request))


OpsDep = Annotated[Operations, Depends(_operations)]


# the cheap dependencies are async: a sync one takes a thread from the pool the routes share, and
# fifty requests waiting for threads made GET /health wait too. Those every request solves read the
# app's state from the request rather than through a shared dependency: each node of the tree costs
# the event loop time per request, which the hot write routes feel.


def _memory(memory: str, store: StoreDep) -> WorldMemory:
    return WorldMemory.open(store, memory)


MemoryDep = Annotated[WorldMemory, Depends(_memory)]

_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="the API key (read-only keys: GET only)")


def _matches(given: str, key: SecretStr | None) -> bool:
    return key is not None and secrets.compare_digest(given.encode(), key.get_secret_value().encode())


async def require_read(request: Request, key: Annotated[str | None, Security(_key_header)]) -> None:
    """Reads are open unless a read-only key is configured; then either key is needed."""
    settings = _services_of(request).settings
    if settings.read_only_api_key is None:
        return
    if not key:
        raise HTTPException(401, "this route needs an API key in the X-API-Key header")
    if not (_matches(key, settings.api_key) or _matches(key, settings.read_only_api_key)):
        raise HTTPException(403, "the API key is not valid")


def write_refusal(settings: Settings, key: str | None) -> HTTPException | None:
    """Why a write with ``key`` (the X-API-Key header's value, if any) is refused, or None: writes
    need the full API key when one is configured (a read-only key gets 403)."""
    if settings.api_key is None and settings.read_only_api_key is None:
        return None
    if not key:
        return HTTPException(401, "this route changes state: it needs the API key in the X-API-Key header")
    if not _matches(key, settings.api_key):
        return HTTPException(403, "the API key is not valid for writes")
    return None


async def require_write(request: Request, key: Annotated[str | None, Security(_key_header)]) -> None:
    """Writes need the full API key when one is configured (see :func:`write_refusal`)."""
    refusal = write_refusal(_services_of(request).settings, key)
    if refusal is not None:
        raise refusal


async def _caller(request: Request, key: Annotated[str | None, Security(_key_header)]) -> str:
    return client_key(key, request.client.host if request.client else None)


CallerDep = Annotated[str, Depends(_caller)]  # whom the model-spending rate limit counts against

ReadAccess = Depends(require_read)
WriteAccess = Depends(require_write)
