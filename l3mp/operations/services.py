"""What a running l3mp holds, whichever door it serves: the store, the settings, the language model
(built once, on first use), the retriever (its embeddings model loads once), the model slots, and one
writer lock per memory."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from threading import Lock

from kg_memory import GraphStore, L3mpError
from l3mp.llm import LanguageModel
from l3mp.operations.gate import ModelGate
from l3mp.pipelines.nl_update import sized_retriever
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
