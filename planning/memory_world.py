"""A memory's state as a planning :class:`World`, kept in step with the memory's history.

Reading a whole memory (every entity and fact) and indexing it again for every plan request costs
time that grows with the building, while between two requests only a few updates are applied. A
:class:`MemoryWorld` keeps the last world it built and, when the memory's version moved, applies the
deltas of the updates applied since (read through the history's ``seq`` cursor). Whatever does not
add up (a version the deltas do not reach, a delta the world refuses, history compacted away) reads the
whole state again, so a snapshot is always the memory's state at its ``version``.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType

from kg_memory.history import HistoryQuery
from kg_memory.memory import WorldMemory
from kg_memory.model import Delta, Entity, Update, UpdateStatus
from planning.world import World, WorldError


@dataclass(frozen=True, slots=True, kw_only=True)
class WorldSnapshot:
    """The memory at ``version``: its entities (as ``memory.state()`` has them) and a world of them.

    Valid while it is read (:meth:`MemoryWorld.reading`): validate on a copy (as the evaluator does),
    never apply to ``world``.
    """

    world: World
    entities: Mapping[str, Entity]
    version: int


@dataclass(frozen=True, slots=True, kw_only=True)
class _Kept:
    snapshot: WorldSnapshot
    entities: dict[str, Entity]  # behind ``snapshot.entities``
    cursor: int  # the last history seq the snapshot includes


class MemoryWorld:
    """One memory's latest :class:`WorldSnapshot`, synced from its history whenever it is read.

    Copying a building's world costs about as much as building it, so the updates are applied to the
    kept world in place, unless a request is still reading it: then to a copy, which is kept instead.
    """

    def __init__(self, memory: WorldMemory) -> None:
        self.memory = memory
        self.full_reads = 0  # whole-state reads (the first, and any the history could not replace)
        self.synced = 0  # updates applied from the history
        self.copies = 0  # syncs that copied the world because a request was reading it
        self._kept: _Kept | None = None
        self._readers: dict[int, int] = {}  # id(world) -> requests reading it
        self._lock = threading.Lock()

    @contextmanager
    def reading(self) -> Iterator[WorldSnapshot]:
        """The memory's current snapshot, unchanged until the block ends."""
        with self._lock:
            snapshot = self._current()
            key = id(snapshot.world)
            self._readers[key] = self._readers.get(key, 0) + 1
        try:
            yield snapshot
        finally:
            with self._lock:
                self._readers[key] -= 1
                if not self._readers[key]:
                    del self._readers[key]

    def _current(self) -> WorldSnapshot:
        kept = self._kept
        if kept is not None and kept.snapshot.version == self.memory.version:
            return kept.snapshot
        self._kept = (self._synced(kept) if kept is not None else None) or self._read()
        return self._kept.snapshot

    def _read(self) -> _Kept:
        self.full_reads += 1
        cursor = _last_seq(self.memory)  # before the state: an update in between is applied again, not lost
        state = self.memory.state()
        constants = self.memory.domain.constants
        world = World(self.memory.domain, (e for n, e in state.entities.items() if n not in constants), state.facts)
        entities = dict(state.entities)
        snapshot = WorldSnapshot(world=world, entities=MappingProxyType(entities), version=state.version)
        return _Kept(snapshot=snapshot, entities=entities, cursor=_seq_at(self.memory, state.version, cursor))

    def _synced(self, kept: _Kept) -> _Kept | None:
        """``kept`` moved forward by the updates applied since its cursor; ``None`` if they do not add up
        (the kept world may then be half changed: it is dropped, and nobody is reading it)."""
        updates = [u for u in self.memory.history(since_seq=kept.cursor) if u.status is UpdateStatus.APPLIED]
        if not updates or not _consecutive(kept.snapshot.version, updates):
            return None
        world, entities = kept.snapshot.world, kept.entities
        if id(world) in self._readers:
            world, entities = world.copy(), dict(entities)
            self.copies += 1
        constants = self.memory.domain.constants
        try:
            for update in updates:
                world.apply(_without(update.delta, constants))
                entities.update((e.name, e) for e in update.delta.new_entities)
        except WorldError:
            return None
        self.synced += len(updates)
        last = updates[-1]
        snapshot = WorldSnapshot(world=world, entities=MappingProxyType(entities), version=last.version)
        return _Kept(snapshot=snapshot, entities=entities, cursor=last.seq)


def _without(delta: Delta, constants: Collection[str]) -> Delta:
    """``delta`` without the domain's constants among its new entities: the world has its own (as ``_read``)."""
    if not any(e.name in constants for e in delta.new_entities):
        return delta
    kept = tuple(e for e in delta.new_entities if e.name not in constants)
    return Delta(remove=delta.remove, add=delta.add, new_entities=kept)


def _consecutive(version: int, updates: list[Update]) -> bool:
    """Whether the applied updates take the memory from ``version`` one version at a time."""
    return [u.version for u in updates] == list(range(version + 1, version + 1 + len(updates)))


def _last_seq(memory: WorldMemory) -> int:
    newest = memory.query_history(HistoryQuery(newest_first=True, limit=1))
    return newest[0].seq if newest else 0


def _seq_at(memory: WorldMemory, version: int, cursor: int) -> int:
    """The seq of the update that made ``version``, when it was logged after ``cursor`` (a write in between)."""
    later = [u for u in memory.history(since_seq=cursor) if u.status is UpdateStatus.APPLIED and u.version <= version]
    return later[-1].seq if later else cursor
