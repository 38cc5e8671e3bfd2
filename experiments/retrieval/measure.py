"""Timing and scoring one retrieval."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from experiments.harness import timed
from experiments.retrieval.probes import Probe, StepKind
from kg_memory import WorldMemory
from retrieval import (
    CachedEmbedder,
    Context,
    Embedder,
    EntityParams,
    EntityRetriever,
    FullRetriever,
    Retriever,
    SearchParams,
    SearchRetriever,
)
from retrieval.embedding import Vectors, vector_space

# -- measurement -----------------------------------------------------------------------------------


class TimedEmbedder:
    """An :class:`Embedder` that counts the texts it embeds and the seconds it takes."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.texts = 0

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def vector_space(self) -> str:
        return vector_space(self.inner)

    def embed(self, texts: Sequence[str]) -> Vectors:
        start = time.perf_counter()
        vectors = self.inner.embed(texts)
        self.seconds += time.perf_counter() - start
        self.texts += len(texts)
        return vectors


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    """One retriever on one probe."""

    retriever: str
    step: int
    kind: StepKind
    needed: int
    found: int  # needed facts in the context
    facts: int
    tokens: int
    seconds: float
    embed_seconds: float  # spent embedding query texts (search), inside ``seconds``
    texts_embedded: int
    sync_seconds: float = 0.0  # bringing entity embeddings up to date (search), inside ``seconds``
    missing: tuple[str, ...] = ()
    unmatched: int = 0
    budget_exhausted: bool = False
    full_tokens: int = 0  # the full graph's tokens at this step

    @property
    def recall(self) -> float:
        return self.found / self.needed if self.needed else 1.0

    @property
    def precision(self) -> float:
        return self.found / self.facts if self.facts else 0.0

    @property
    def token_ratio(self) -> float:
        return self.tokens / self.full_tokens if self.full_tokens else 0.0


@dataclass(frozen=True, slots=True)
class Retrievers:
    full: FullRetriever
    entities: EntityRetriever
    search: SearchRetriever
    clock: TimedEmbedder

    def items(self) -> tuple[tuple[str, Retriever], ...]:
        return (("full", self.full), ("entities", self.entities), ("search", self.search))


def make_retrievers(
    embedder: Embedder,
    entity_params: Mapping[str, Any] | None = None,
    search_params: Mapping[str, Any] | None = None,
    *,
    cold: bool = False,
) -> Retrievers:
    """The three retrievers; the search's query texts go through a cache of its own (the clock
    sees only what the model embeds), or with ``cold`` through none and nothing pre-embedded."""
    clock = TimedEmbedder(embedder)
    search = SearchRetriever(
        SearchParams.of(**(search_params or {})),
        embedder=clock,
        text_cache=CachedEmbedder(clock, size=0) if cold else None,
        preembed=not cold,
    )
    return Retrievers(FullRetriever(), EntityRetriever(EntityParams(**(entity_params or {}))), search, clock)


def sample(name: str, probe: Probe, context: Context, seconds: float, embed: tuple[float, int]) -> Sample:
    facts = set(context.facts)
    missing = tuple(sorted(str(f) for f in probe.needed - facts))
    match = context.match
    return Sample(
        retriever=name,
        step=probe.step,
        kind=probe.kind,
        needed=len(probe.needed),
        found=len(probe.needed) - len(missing),
        facts=len(facts),
        tokens=context.token_estimate(),
        seconds=seconds,
        embed_seconds=embed[0],
        texts_embedded=embed[1],
        missing=missing,
        unmatched=len(match.unmatched) if match else 0,
        budget_exhausted=bool(match and match.budget_exhausted),
    )


def retrieve(name: str, chosen: Retriever, probe: Probe, memory: WorldMemory, clock: TimedEmbedder) -> Sample:
    """One timed retrieval. For ``search`` the entity-embedding sync (which ``retrieve`` does
    first when the memory's version moved) is timed apart, then added to the latency."""
    sync = 0.0
    if isinstance(chosen, SearchRetriever):
        sync, _ = timed(lambda: chosen.embeddings(memory))
    seconds, texts = clock.seconds, clock.texts
    elapsed, context = timed(lambda: chosen.retrieve(memory, names=probe.names, query=probe.query))
    found = sample(name, probe, context, sync + elapsed, (clock.seconds - seconds, clock.texts - texts))
    return replace(found, sync_seconds=sync)


def measure(probe: Probe, retrievers: Retrievers, memory: WorldMemory) -> list[Sample]:
    """Each retriever once on ``probe``; every sample learns the full graph's token count."""
    samples = [retrieve(name, chosen, probe, memory, retrievers.clock) for name, chosen in retrievers.items()]
    full_tokens = samples[0].tokens
    return [replace(s, full_tokens=full_tokens) for s in samples]
