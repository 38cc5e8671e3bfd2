"""The one protocol every world-state backend implements.

Backends store and fetch; they do not verify. ``WorldMemory`` verifies a delta and then
commits it, and the backends only guarantee that a commit is atomic, version-checked and
applicable (a fact to remove is present, one to add is absent, its entities exist).
Generic operations built on these primitives (k-hop neighbourhood, replay to a past
version, export/import) live in :mod:`kg_memory.operations`.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from kg_memory.domain import DomainRegistry
from kg_memory.errors import InvalidValue
from kg_memory.history import Checkpoint, HistoryQuery
from kg_memory.model import Delta, Entity, Fact, Memory, Update


def fact_order(fact: Fact) -> tuple[str, tuple[str, ...]]:
    """The order stores cut a limited read in: by predicate, then by arguments.

    Names are [a-z0-9_-], all above the space, so this equals both SQLite's order of
    space-joined argument text and Cypher's element-wise order of argument lists.
    """
    return (fact.predicate, fact.args)


# name -> (hash of the embedded text, vector)
Embeddings = dict[str, tuple[str, tuple[float, ...]]]


def float32_vector(memory: str, name: str, vector: Sequence[float]) -> tuple[float, ...]:
    """``vector`` as stored: float32 values, non-empty, finite and not all zero.

    Cosine similarity (and Neo4j's vector index) is undefined for a zero vector.
    """
    try:
        values = array("f", vector)
    except (TypeError, OverflowError) as exc:
        raise InvalidValue(f"embedding of {name!r} in memory {memory!r}", vector, str(exc)) from exc
    if not values or not all(math.isfinite(v) for v in values) or not any(values):
        raise InvalidValue(
            f"embedding of {name!r} in memory {memory!r}",
            vector,
            "need a non-empty vector of finite, not all zero, floats",
        )
    return tuple(values)


def embedding_rows(memory: str, rows: Mapping[str, tuple[str, Sequence[float]]]) -> Embeddings:
    """Check rows for :meth:`GraphStore.put_embeddings`: one dimension, float32 vectors."""
    checked: Embeddings = {}
    for name, (text_hash, vector) in rows.items():
        if not isinstance(text_hash, str) or not text_hash:
            raise InvalidValue(
                f"embedding text hash of {name!r} in memory {memory!r}", text_hash, "need a non-empty str"
            )
        checked[name] = (text_hash, float32_vector(memory, name, vector))
    dimensions = sorted({len(v) for _, v in checked.values()})
    if len(dimensions) > 1:
        raise InvalidValue(f"embeddings for memory {memory!r}", dimensions, "vectors differ in dimension")
    return checked


def dimension_clash(memory: str, new: int, stored: Iterable[int]) -> None:
    """Raise if embeddings kept in the memory have another dimension than the new ones."""
    others = sorted(set(stored) - {new})
    if others:
        raise InvalidValue(
            f"embeddings for memory {memory!r}",
            new,
            f"the memory holds embeddings of dimension {others}; replace those too or use one model",
        )


@runtime_checkable
class GraphStore(Protocol):
    backend: str
    domains: DomainRegistry  # resolves each memory's domain by name
    checkpoint_every: int  # a checkpoint of the state every this many versions

    def create_memory(self, name: str, domain: str, *, importing: bool = False) -> Memory:
        """Create an empty memory (holding the domain's constants) at version 0.

        ``importing``: the memory an import fills. Until :meth:`load_state` writes its final state
        it is hidden: reads and writes do not find it, and creating its name raises
        :class:`MemoryExists`; only :meth:`load_history`, :meth:`load_state` and
        :meth:`delete_memory` (which abandons the import) reach it."""
        ...

    def get_memory(self, name: str) -> Memory:
        """The memory's record; :class:`UnknownMemory` if there is none."""
        ...

    def list_memories(self) -> list[Memory]: ...

    def delete_memory(self, name: str, *, importing: bool | None = None) -> None:
        """Delete the memory, its state and its history.

        ``importing`` says which memory may go, checked in the transaction that deletes it:
        ``None`` whichever holds the name (a memory being imported too; its import then fails),
        ``False`` only one in use, ``True`` only one being imported (an import abandoned by its
        process). The other kind raises :class:`MemoryExists` and is kept; no memory of the name
        raises :class:`UnknownMemory`."""
        ...

    def entities(self, memory: str, names: Iterable[str] | None = None) -> dict[str, Entity]:
        """All entities, or those among ``names`` that exist."""
        ...

    def facts(self, memory: str, predicate: str | None = None, entity: str | None = None) -> frozenset[Fact]:
        """Facts, optionally only of one predicate and/or mentioning one entity."""
        ...

    def facts_about(self, memory: str, names: Iterable[str], limit: int | None = None) -> frozenset[Fact]:
        """Facts with any of ``names`` as an argument, plus every nullary fact.

        With ``limit``, only the first ``limit`` of them in :func:`fact_order`.
        """
        ...

    def embeddings(self, memory: str, names: Iterable[str] | None = None) -> Embeddings:
        """Stored entity embeddings, all or those of ``names``: name -> (text hash, vector).

        Embeddings are derived data, not world state: a cache of what an embedding model
        made of each entity's text (from its label, name and type), keyed by a hash of that
        text so a caller recomputes only the embeddings whose text changed. Vectors come
        back as float32 values.
        """
        ...

    def put_embeddings(self, memory: str, rows: Mapping[str, tuple[str, Sequence[float]]]) -> None:
        """Store (replace) the embeddings of existing entities, in one transaction.

        Writing them is not an :class:`Update`: it is not logged and does not bump the
        memory's version. Raises :class:`NotApplicable` naming entities that do not exist
        and :class:`InvalidValue` if a vector is empty, not finite or all zero, or if the
        memory would hold vectors of different dimensions (replace all of them to change
        models); in all cases nothing is written.
        """
        ...

    def nearest(self, memory: str, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """Up to ``k`` embedded entities most similar to ``vector``: (name, cosine), best first.

        Cosine similarity is in [-1, 1]. Neo4j answers from its approximate vector index
        where it can, so near-ties may come back in another order than SQLite's exact scan.
        """
        ...

    def commit(self, update: Update, expected_version: int, *, created: datetime | None = None) -> Update:
        """Apply an update's delta and log it in one transaction.

        Raises :class:`VersionConflict` if the memory is not at ``expected_version`` and
        :class:`NotApplicable` if the delta does not apply; in both cases nothing is written.
        Returns the update with its ``seq`` and new ``version``.

        ``created``, the creation time of the memory the writer means, is checked in the same
        transaction: a memory of that name made at another time (the writer's was deleted, and
        another made under its name) raises :class:`UnknownMemory`, and nothing is written.
        """
        ...

    def commit_group(
        self, memory: str, updates: Sequence[Update], expected_version: int, *, created: datetime | None = None
    ) -> list[Update]:
        """Log several updates in order, with consecutive ``seq``, in one transaction, applying
        the deltas of the applied ones one after another.

        Each applied update leaves the version one higher than the one before it; a rejected
        or no-op update is stamped with the version current at its place in the group. A
        checkpoint is written, in the same transaction, after each applied update whose
        version is a multiple of ``checkpoint_every``. Raises :class:`VersionConflict` if
        the memory is not at ``expected_version`` and :class:`NotApplicable` if any applied
        delta does not apply; in both cases nothing of the group is written. Returns the
        updates as stored. ``created`` as for :meth:`commit`.
        """
        ...

    def record(self, update: Update, *, created: datetime | None = None) -> Update:
        """Log a rejected or no-op update without changing the state. ``created`` as for
        :meth:`commit`."""
        ...

    def history(self, memory: str, since_seq: int = 0, limit: int | None = None) -> list[Update]:
        """Updates with ``seq > since_seq`` in order."""
        ...

    def get_update(self, memory: str, update_id: str) -> Update: ...

    # -- the history's indexes (see kg_memory.history) ----------------------------------------

    def query_history(self, memory: str, query: HistoryQuery) -> list[Update]:
        """One page of updates matching ``query``, through an index (never a scan of the log)."""
        ...

    def nearest_checkpoint(self, memory: str, version: int) -> Checkpoint | None:
        """The latest checkpoint at or before ``version``. :meth:`commit` and :meth:`commit_group`
        write one, in their own transaction, whenever a new version is a multiple of ``checkpoint_every``."""
        ...

    def replay_from(self, memory: str, version: int) -> tuple[Checkpoint | None, list[Delta]]:
        """What rebuilds the state after ``version``, read in one snapshot: the latest checkpoint
        at or before it, and the deltas of the applied updates after that checkpoint up to
        ``version``, in order (only the deltas: replay needs nothing else of an update)."""
        ...

    def horizon(self, memory: str) -> tuple[int, datetime, dict[str, Any]] | None:
        """Version, time and per-entity summaries of the last compaction, if the history was compacted."""
        ...

    def load_history(self, memory: str, updates: Sequence[Update], checkpoints: Sequence[Checkpoint] = ()) -> None:
        """Append verified, stamped updates (consecutive ``seq`` from the memory's next one) and
        checkpoints without changing the state: an import's batch. Duplicate ids raise
        :class:`NotApplicable` naming one, and nothing of the batch is written."""
        ...

    def load_state(self, memory: str, entities: Iterable[Entity], facts: Iterable[Fact]) -> None:
        """Write an imported memory's final state (the entities not there yet, and the facts); a
        memory being imported is then found like any other, in the same transaction."""
        ...

    def compact(
        self,
        memory: str,
        checkpoint: Checkpoint,
        when: datetime,
        summaries: dict[str, Any],
        *,
        created: datetime | None = None,
    ) -> int:
        """Drop the log up to ``checkpoint.version``, keeping that checkpoint and ``summaries``;
        the number of updates dropped. ``created`` as for :meth:`commit`."""
        ...

    def close(self) -> None: ...


class StagedCommit(Protocol):
    """A group's transaction with every statement run and only its COMMIT left (see :class:`StagesGroups`)."""

    def finish(self) -> list[Update]:
        """COMMIT, from any thread (it may wait on the disk); the updates as stored. On failure the
        transaction is rolled back, nothing of the group is written, and the error is raised."""
        ...

    def abandon(self) -> None:
        """Roll the transaction back: nothing of the group is written."""
        ...


@runtime_checkable
class StagesGroups(Protocol):
    """A store that can write a group in two steps: its statements now, on the caller's thread, and
    its COMMIT (the wait for the disk) later, on another. A caller on an event loop then keeps the
    interpreter's work of a group on its own thread and waits for nothing but the disk elsewhere."""

    def stage_group(
        self, memory: str, updates: Sequence[Update], expected_version: int, *, created: datetime | None = None
    ) -> StagedCommit | None:
        """:meth:`GraphStore.commit_group` up to its COMMIT, or None, with nothing done, when it
        cannot be done without waiting or would fail: the write lock is another writer's, a group
        is already staged, or the group would raise (a conflict, a delta that does not apply, an
        unknown memory). The caller then commits the group the usual way, which waits for the lock
        and raises what there is to raise. Until the staged commit is finished or abandoned, the
        store stages nothing else."""
        ...
