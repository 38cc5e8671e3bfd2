"""What a running l3mp holds, whichever door it serves: the store, the settings, the language model
(built once, on first use), the retriever (its embeddings model loads once), the model slots, the
gatherer of fast writes into groups (or, with group commit off, one writer lock per memory), one
bound memory (its domain and verifier) per memory, and its planning world, kept in step with its history."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from threading import Lock

from kg_memory import GraphStore, L3mpError, WorldMemory
from kg_memory.store import StagesGroups
from l3mp.llm import LanguageModel
from l3mp.operations.gate import ModelGate
from l3mp.operations.group import WriteGroups
from l3mp.pipelines.nl_update import sized_retriever
from l3mp.settings import Settings
from l3mp.wiring import configured_model
from planning.memory_world import MemoryWorld
from retrieval import KeepsPerMemory, Retriever

logger = logging.getLogger(__name__)


@dataclass(kw_only=True)
class Services:
    """What the app holds while it runs (opened by the lifespan, see ``app.py``)."""

    settings: Settings
    store: GraphStore
    model: LanguageModel | None = None
    _retriever: Retriever | None = None
    gate: ModelGate = field(init=False)
    groups: WriteGroups = field(init=False)
    _lock: Lock = field(default_factory=Lock)
    _writers: dict[str, Lock] = field(default_factory=dict)
    _worlds: dict[str, tuple[str, datetime, WorldMemory]] = field(default_factory=dict)
    _planning: dict[str, MemoryWorld] = field(default_factory=dict)

    def __post_init__(self) -> None:
        s = self.settings
        self.gate = ModelGate(s.model_concurrency, s.model_route_deadline, s.model_rate_per_minute)
        on_loop = s.group_commit_on_loop and isinstance(self.store, StagesGroups)  # only a store that stages
        self.groups = WriteGroups(wait_s=s.group_commit_wait_ms / 1000, max_items=s.group_commit_max, on_loop=on_loop)

    def close(self) -> None:
        self.gate.close()
        self.groups.close()
        self.store.close()

    def writer(self, memory: str) -> Lock:
        """One lock per memory for this process's fast writes (observations, deltas) when group
        commit is off.

        The store stays optimistic, so other processes are still safe; inside one process, twenty
        writers racing for the same version mostly lost and retried with backoff, which cost both
        throughput and tail latency (see the service benchmark); taking turns is faster.
        """
        with self._lock:
            return self._writers.setdefault(memory, Lock())

    def world(self, name: str) -> WorldMemory:
        """The memory named ``name`` (any spelling of it), bound to its domain once per process.

        A memory deleted and created again under the same name is another memory: the entry is
        kept only while the stored record's domain and creation time are the ones it was built for.
        """
        record = self.store.get_memory(name)
        with self._lock:
            found = self._worlds.get(record.name)
        if found is not None and found[:2] == (record.domain, record.created):
            return found[2]
        world = WorldMemory(self.store, record.name, self.store.domains.get(record.domain), created=record.created)
        with self._lock:
            self._worlds[record.name] = (record.domain, record.created, world)
        return world

    def forget(self, name: str) -> None:
        """Drop what this process holds for the memory ``name`` (stored spelling), deleted: its
        planning world holds its whole state, the search retriever its entities' embeddings."""
        with self._lock:
            self._worlds.pop(name, None)
            self._planning.pop(name, None)
            self._writers.pop(name, None)
            retriever = self._retriever
        if isinstance(retriever, KeepsPerMemory):
            retriever.forget(self.store, name)

    def planning_world(self, world: WorldMemory) -> MemoryWorld:
        """``world``'s planning world, shared by the requests that plan on it: each syncs it from the
        history since the last one instead of reading the whole state."""
        with self._lock:
            kept = self._planning.get(world.name)
            if kept is None or kept.memory is not world:  # a memory made again under its name
                kept = self._planning[world.name] = MemoryWorld(world)
            return kept

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
                self._retriever = sized_retriever(
                    self.settings.retriever, self.settings.context_facts, embedder=self.settings.embedder
                )
            return self._retriever
