"""The three retrievers of the paper, chosen by name: ``full`` (R-), ``entities`` (R+), ``search`` (RS).

Each takes a :class:`WorldMemory` and plain data (entity names, a query graph), never a
language model, and returns a :class:`Context`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

from kg_memory.history import HistoryQuery
from kg_memory.memory import WorldMemory
from kg_memory.model import Entity, Fact, Neighbourhood, UpdateStatus
from retrieval._search import MatchParams
from retrieval._text_cache import CachedEmbedder, shared_cache
from retrieval.context import Context, Found, Provenance
from retrieval.embedding import Embedder, EmbeddingBackend, EntityEmbeddings, SentenceTransformerEmbedder, StoreBackend
from retrieval.errors import InvalidParameters, InvalidQuery, UnknownRetriever
from retrieval.matcher import Candidates, Matcher, MatchResult
from retrieval.query import QueryGraph


@runtime_checkable
class Retriever(Protocol):
    @property
    def name(self) -> str: ...

    def retrieve(
        self, memory: WorldMemory, *, names: Sequence[str] = (), query: QueryGraph | None = None
    ) -> Context: ...


@runtime_checkable
class KeepsPerMemory(Protocol):
    """A retriever that keeps something for each memory it served (entity embeddings), to be let
    go of when the memory is deleted: a long-running service creates and deletes many."""

    def forget(self, store: object, memory: str) -> None:
        """Drop what is kept for the memory named ``memory`` (as stored) of ``store``."""
        ...


def _check(retriever: str, params: Any, limits: Mapping[str, int]) -> None:
    low = [f"{key} must be at least {bound}" for key, bound in limits.items() if getattr(params, key) < bound]
    if low:
        raise InvalidParameters(retriever, asdict(params), "; ".join(low))


@dataclass(frozen=True, slots=True)
class FullParams:
    """R- has no knobs: it is the whole state, the baseline the others are measured against."""


@dataclass(frozen=True, slots=True)
class EntityParams:
    hops: int = 2
    max_facts: int = 200

    def __post_init__(self) -> None:
        _check("entities", self, {"hops": 0, "max_facts": 0})


@dataclass(frozen=True, slots=True)
class SearchParams:
    """Context size (``hops``, ``max_facts``) and the matcher's knobs (:class:`MatchParams`)."""

    hops: int = 2
    max_facts: int = 80  # near-full recall at a small share of the full state's tokens (retrieval benchmark)
    match: MatchParams = field(default_factory=MatchParams)

    def __post_init__(self) -> None:
        _check("search", self, {"hops": 0, "max_facts": 0})

    @classmethod
    def of(cls, **params: Any) -> SearchParams:
        """From flat keywords: ``hops``, ``max_facts`` and any :class:`MatchParams` field."""
        own = {key: params.pop(key) for key in ("hops", "max_facts") if key in params}
        return cls(**own, match=MatchParams(**params))


def _neighbourhood_context(
    retriever: str, hood: Neighbourhood, seeds: Mapping[str, Provenance], match: MatchResult | None = None
) -> Context:
    provenance = {
        name: seeds.get(name) or Provenance(Found.NEIGHBOUR, distance=hood.distance.get(name)) for name in hood.entities
    }
    return Context(
        retriever=retriever,
        entities=hood.entities,
        facts=hood.facts,
        provenance=provenance,
        truncated=hood.truncated,
        match=match,
    )


class FullRetriever:
    """R-: every entity and fact of the memory."""

    name = "full"

    def __init__(self, params: FullParams | None = None) -> None:
        self.params = params or FullParams()

    def retrieve(self, memory: WorldMemory, *, names: Sequence[str] = (), query: QueryGraph | None = None) -> Context:
        entities = memory.entities()
        facts = sorted(memory.facts(), key=lambda f: (f.predicate, f.args))
        return Context(
            retriever=self.name,
            entities=entities,
            facts=tuple(facts),
            provenance=dict.fromkeys(entities, Provenance(Found.ALL)),
        )


class EntityRetriever:
    """R+: the caller names entities (the language model, in ``l3mp``); we return their k-hop context."""

    name = "entities"

    def __init__(self, params: EntityParams | None = None) -> None:
        self.params = params or EntityParams()

    def retrieve(self, memory: WorldMemory, *, names: Sequence[str] = (), query: QueryGraph | None = None) -> Context:
        if isinstance(names, str):
            raise InvalidQuery("entity names", names, "pass a list of names, not one string")
        wanted = [str(n).strip().lower() for n in names]
        hood = memory.neighbourhood(wanted, self.params.hops, self.params.max_facts)
        seeds = {n: Provenance(Found.NAMED, distance=0) for n in wanted if n in hood.entities}
        missing = tuple(dict.fromkeys(n for n in wanted if n not in hood.entities))
        return replace(_neighbourhood_context(self.name, hood, seeds), missing=missing)


class StoreConnectivity:
    """The matcher's view of a memory's facts, read through its store."""

    def __init__(self, memory: WorldMemory) -> None:
        self._memory = memory

    def facts_about(self, names: Iterable[str]) -> Iterable[Fact]:
        return self._memory.store.facts_about(self._memory.name, names)


BackendFactory = Callable[[WorldMemory], EmbeddingBackend]


@dataclass(slots=True)
class _Synced:
    created: datetime  # which memory of the name they are of (one made again starts afresh)
    version: int  # the memory's version the embeddings reflect
    cursor: int  # the last history seq read
    embeddings: EntityEmbeddings


def _last_seq(memory: WorldMemory) -> int:
    """The newest update's ``seq``, read through the history's index (not the whole log)."""
    newest = memory.query_history(HistoryQuery(newest_first=True, limit=1))
    return newest[0].seq if newest else 0


VOCABULARY_SHARE = 2  # at most 1/2 of the text cache goes to pre-embedded words


def vocabulary(entities: Iterable[Entity], predicates: Iterable[str], limit: int) -> list[str]:
    """What a model's query graph most often says: entity labels (the most shared first), type
    names and predicate names in words, at most ``limit`` texts."""
    entities = list(entities)
    labels = Counter(e.label for e in entities if e.label)
    kinds = {e.type for e in entities} | set(predicates)
    words = [label for label, _ in labels.most_common()] + sorted({k.replace("_", " ") for k in kinds})
    return list(dict.fromkeys(words))[:limit]


class SearchRetriever:
    """RS: match a query graph to the memory, then return the k-hop context of the mapped entities.

    Entity embeddings are kept per memory and re-synced only when the memory's version moved,
    so a warm retriever embeds just the query's mentions and relation phrases.
    """

    name = "search"

    def __init__(
        self,
        params: SearchParams | None = None,
        *,
        embedder: Embedder | None = None,
        backend: BackendFactory | None = None,
        text_cache: CachedEmbedder | None = None,
        preembed: bool = True,
    ) -> None:
        self.params = params or SearchParams()
        self.embedder: Embedder = embedder or SentenceTransformerEmbedder()
        # query texts: the process's cache for this model unless one is given (size 0: none)
        self.text_cache = text_cache if text_cache is not None else shared_cache(self.embedder)
        self.preembed = preembed
        self._backend = backend or (lambda memory: StoreBackend(memory.store, memory.name))
        self._embeddings: dict[tuple[int, str], _Synced] = {}
        self._matchers: dict[str, Matcher] = {}

    def embeddings(self, memory: WorldMemory) -> EntityEmbeddings:
        """The memory's entity embeddings, brought up to date if the memory changed.

        The first call syncs every entity. Later ones read only the updates logged since
        (a cursor on the history's ``seq``) and embed the entities those created: updates
        only ever add entities, so re-reading and re-hashing all of them on every change
        would cost tens of milliseconds at 10,000 entities for nothing.
        """
        key = (id(memory.store), memory.name)
        record = memory.record
        version = record.version
        cached = self._embeddings.get(key)
        if cached is not None and cached.created != record.created:
            cached = None  # the memory was deleted and another made under its name
        if cached is not None and cached.version == version:
            return cached.embeddings
        if cached is None:
            cursor = _last_seq(memory)  # before reading entities: a later update is then seen again, not missed
            embeddings = EntityEmbeddings(self.embedder, self._backend(memory))
            entities = list(memory.entities().values())
            embeddings.sync(entities)
            self._preembed(memory, entities)
        else:
            embeddings, cursor = cached.embeddings, cached.cursor
            for update in memory.history(since_seq=cursor):
                if update.status is UpdateStatus.APPLIED and update.delta.new_entities:
                    embeddings.sync(update.delta.new_entities, prune=False)
                    self._preembed(memory, update.delta.new_entities)
                cursor = update.seq
        self._embeddings[key] = _Synced(record.created, version, cursor, embeddings)
        return embeddings

    def forget(self, store: object, memory: str) -> None:
        self._embeddings.pop((id(store), memory), None)

    def _preembed(self, memory: WorldMemory, entities: Iterable[Entity]) -> None:
        """Put the memory's words (labels, type and predicate names) in the text cache in large
        batches, so that a query naming things as the memory does embeds nothing: a text's
        vector does not depend on when it was embedded (up to float rounding), so matches are unchanged."""
        if not self.preembed:
            return
        self.matcher(memory).prepare()
        if self.text_cache.size:
            predicates = memory.domain.language.predicates
            limit = self.text_cache.size // VOCABULARY_SHARE
            self.text_cache.warm(vocabulary(entities, predicates, limit))

    def matcher(self, memory: WorldMemory) -> Matcher:
        domain = memory.domain
        if domain.name not in self._matchers:
            self._matchers[domain.name] = Matcher(
                self.text_cache,
                domain.language.predicates,
                is_subtype=domain.is_subtype,
                known_types=domain.types,
                params=self.params.match,
            )
        return self._matchers[domain.name]

    def match(self, memory: WorldMemory, query: QueryGraph) -> MatchResult:
        candidates = Candidates.from_embeddings(self.embeddings(memory))
        return self.matcher(memory).match(query, candidates, StoreConnectivity(memory))

    def retrieve(self, memory: WorldMemory, *, names: Sequence[str] = (), query: QueryGraph | None = None) -> Context:
        if not isinstance(query, QueryGraph):
            raise InvalidQuery("query graph", query, "the search retriever needs a QueryGraph")
        result = self.match(memory, query)
        ranked = sorted(result.mapping.items(), key=lambda item: -result.node_scores[item[0]])
        seeds = {entity: Provenance(Found.MATCHED, 0, result.node_scores[node], node) for node, entity in ranked}
        hood = memory.neighbourhood(list(seeds), self.params.hops, self.params.max_facts)
        return _neighbourhood_context(self.name, hood, seeds, result)


_PARAMS: dict[str, type[Any]] = {"full": FullParams, "entities": EntityParams, "search": SearchParams}
RETRIEVERS = tuple(_PARAMS)
DEFAULT_RETRIEVER = "search"  # RS: the paper's L3M+P retrieval


def _known(name: str) -> str:
    names = [f.name for f in fields(_PARAMS[name]) if f.name != "match"]
    if name == "search":
        names += [f.name for f in fields(MatchParams)]
    return ", ".join(names) or "none"


def retriever(
    name: str, *, embedder: Embedder | None = None, backend: BackendFactory | None = None, **params: Any
) -> Retriever:
    """A retriever by name with typed parameters, e.g. ``retriever("search", hops=1, budget=500)``.

    ``embedder`` and ``backend`` apply to ``search`` only (the model and where vectors persist).
    """
    if name == "full":
        return FullRetriever(_typed(name, FullParams, params))
    if name == "entities":
        return EntityRetriever(_typed(name, EntityParams, params))
    if name == "search":
        return SearchRetriever(_typed(name, SearchParams.of, params), embedder=embedder, backend=backend)
    raise UnknownRetriever(name, RETRIEVERS)


T = TypeVar("T")


def _typed(name: str, build: Callable[..., T], params: Mapping[str, Any]) -> T:
    try:
        return build(**params)
    except TypeError as exc:
        raise InvalidParameters(name, dict(params), f"{exc}; known parameters: {_known(name)}") from exc
