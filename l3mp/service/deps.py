"""Dependencies of the routes: the store, the memory named in the path, the model and API keys."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field
from threading import Lock
from typing import Annotated

from fastapi import Depends, HTTPException, Request, Security
from fastapi.security import APIKeyHeader
from pydantic import SecretStr

from kg_memory import GraphStore, L3mpError, WorldMemory
from l3mp.llm import LanguageModel
from l3mp.pipelines.nl_update import sized_retriever
from l3mp.service.gate import ModelGate, client_key
from l3mp.settings import Settings
from l3mp.wiring import configured_model
from retrieval import Retriever

logger = logging.getLogger(__name__)


@dataclass(kw_only=True)
class Services:
    """What the app holds while it runs (opened by the lifespan, see ``app.py``)."""

    settings: Settings
    store: GraphStore
    model: LanguageModel | None = None
    _retriever: Retriever | None = None
    gate: ModelGate = field(init=False)
    _lock: Lock = field(default_factory=Lock)
    _writers: dict[str, Lock] = field(default_factory=dict)

    def __post_init__(self) -> None:
        s = self.settings
        self.gate = ModelGate(s.model_concurrency, s.model_route_deadline, s.model_rate_per_minute)

    def close(self) -> None:
        self.gate.close()
        self.store.close()

    def writer(self, memory: str) -> Lock:
        """One lock per memory for this process's fast writes (observations, deltas).

        The store stays optimistic, so other processes are still safe; inside one process, twenty
        writers racing for the same version mostly lost and retried with backoff, which cost both
        throughput and tail latency (see the service benchmark); taking turns is faster.
        """
        with self._lock:
            return self._writers.setdefault(memory, Lock())

    def warm_up(self) -> None:
        """Build the configured model before the first request, so that no request pays for it; a
        model that cannot be built is reported by the requests that need it, not at start-up."""
        try:
            self.language_model()
        except L3mpError as exc:
            logger.warning("the language model is not ready: %s", exc)

    def language_model(self) -> LanguageModel:
        with self._lock:
            if self.model is None:
                self.model = configured_model(self.settings)
            return self.model

    def retriever(self) -> Retriever:
        """One retriever per app, so the search retriever's embeddings model loads once."""
        with self._lock:
            if self._retriever is None:
                self._retriever = sized_retriever(self.settings.retriever, self.settings.context_facts)
            return self._retriever


async def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(_services)]


async def _store(services: ServicesDep) -> GraphStore:
    return services.store


StoreDep = Annotated[GraphStore, Depends(_store)]


# the cheap dependencies are async: a sync one takes a thread from the pool the routes share, and
# fifty requests waiting for threads made GET /health wait too


def _memory(memory: str, store: StoreDep) -> WorldMemory:
    return WorldMemory.open(store, memory)


MemoryDep = Annotated[WorldMemory, Depends(_memory)]

_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="the API key (read-only keys: GET only)")


def _matches(given: str, key: SecretStr | None) -> bool:
    return key is not None and secrets.compare_digest(given.encode(), key.get_secret_value().encode())


async def require_read(services: ServicesDep, key: Annotated[str | None, Security(_key_header)]) -> None:
    """Reads are open unless a read-only key is configured; then either key is needed."""
    settings = services.settings
    if settings.read_only_api_key is None:
        return
    if not key:
        raise HTTPException(401, "this route needs an API key in the X-API-Key header")
    if not (_matches(key, settings.api_key) or _matches(key, settings.read_only_api_key)):
        raise HTTPException(403, "the API key is not valid")


async def require_write(services: ServicesDep, key: Annotated[str | None, Security(_key_header)]) -> None:
    """Writes need the full API key when one is configured (a read-only key gets 403)."""
    settings = services.settings
    if settings.api_key is None and settings.read_only_api_key is None:
        return
    if not key:
        raise HTTPException(401, "this route changes state: it needs the API key in the X-API-Key header")
    if not _matches(key, settings.api_key):
        raise HTTPException(403, "the API key is not valid for writes")


async def _caller(request: Request, key: Annotated[str | None, Security(_key_header)]) -> str:
    return client_key(key, request.client.host if request.client else None)


CallerDep = Annotated[str, Depends(_caller)]  # whom the model-spending rate limit counts against

ReadAccess = Depends(require_read)
WriteAccess = Depends(require_write)
