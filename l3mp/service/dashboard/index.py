"""The state a dashboard view reads, indexed once per version: where each entity is drawn, its room,
and each room's floor. A past version never changes, and the page asks for the outline, then a room or
a floor of the same version, so a few versions per store are kept; a newer version starts from the
newest kept one and the updates since, rather than reading a large state again."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from kg_memory import Domain, Entity, Fact, GraphStore, HistoryQuery, Memory, State, UpdateStatus, WorldMemory
from kg_memory.unknowns import unplaced

# a placement chain longer than this is a cycle in bad data, not a real home
_MAX_DEPTH = 6
_CACHED_VERSIONS = 3  # per store: now, and a version or two being looked at
_CATCH_UP = 200  # updates read to bring a cached state up to date; more, and the state is read whole


def placement(entities: Mapping[str, Entity], facts: Iterable[Fact], domain: Domain) -> dict[str, str]:
    """Where each entity is drawn: entity -> the entity it sits in or on (rooms are the roots).

    Generic over domains: an entity is placed by a binary fact ``(p a b)`` whose ``b`` is a room or is
    itself placed (``in_room``, ``on``, ``inside``, ``held``, ``person_in``...). Facts to unplaced things
    (a liquid a cup is filled with, another room) never place anything, so rooms stay roots.
    """
    room_types = _room_types(domain, {e.type for e in entities.values()})
    rooms = {n for n, e in entities.items() if e.type in room_types}
    pairs: dict[str, list[tuple[str, str]]] = {}
    for fact in facts:
        if len(fact.args) == 2 and fact.args[0] != fact.args[1] and fact.args[0] not in rooms:
            pairs.setdefault(fact.args[0], []).append((fact.predicate, fact.args[1]))
    for options in pairs.values():
        if len(options) > 1:  # the facts' order decides between two places, never a set's order
            options.sort()
    parent: dict[str, str] = {}
    placed = set(rooms)
    waiting = pairs
    for _ in range(_MAX_DEPTH):  # one level of nesting a round: rooms, then what is in them, ...
        found: dict[str, str] = {}
        still: dict[str, list[tuple[str, str]]] = {}
        for child, options in waiting.items():
            where = next((b for _, b in options if b in placed), None)
            if where is not None:
                found[child] = where
            elif child not in placed:
                still[child] = options
        if not found:
            break
        parent.update(found)
        placed.update(found)
        waiting = still
    return parent


UNPLACED = "__unplaced"  # what is in no room, as if it were a room (no PDDL name starts so)


@dataclass(frozen=True, kw_only=True)
class Indexed:
    """A state with where everything is drawn, its room and each room's floor; the groupings the
    views need are computed on first use and kept with it."""

    memory: str
    seq: int  # the newest update it holds (or a newer one it may already hold)
    state: State
    domain: Domain
    parent: Mapping[str, str]
    room_of: Mapping[str, str]  # every placed entity (and every room) -> its room
    floor_of: Mapping[str, str]  # room -> floor ("" when the rooms carry no floor)
    memo: dict[str, object] = field(default_factory=dict, compare=False)  # what a view derived from it

    @cached_property
    def members(self) -> Mapping[str, list[str]]:
        """Room (or ``UNPLACED``) -> its entities, the room first; the domain's constants are in none."""
        found: dict[str, list[str]] = {r: [r] for r in self.floor_of}
        constants = self.domain.constants
        for name in self.state.entities:
            room = self.room_of.get(name)
            if room is None and name not in constants:
                found.setdefault(UNPLACED, []).append(name)
            elif room is not None and room != name:
                found[room].append(name)
        return found

    @cached_property
    def facts_of(self) -> Mapping[str, list[Fact]]:
        """Room (or ``UNPLACED``) -> the facts whose first argument is in it."""
        found: dict[str, list[Fact]] = {}
        for fact in self.state.facts:
            if fact.args:
                found.setdefault(self.room_of.get(fact.args[0], UNPLACED), []).append(fact)
        return found

    @cached_property
    def unknown(self) -> frozenset[str]:
        """Entities that must be somewhere but whose location the memory does not know."""
        return frozenset(e.name for e in unplaced(self.domain, self.state.entities, self.state.facts))


_Key = tuple[str, datetime, int]  # memory, its creation time, version
_cache: weakref.WeakKeyDictionary[GraphStore, OrderedDict[_Key, Indexed]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def indexed(memory: WorldMemory, version: int | None = None) -> Indexed:
    """The memory's state now (or at ``version``), indexed; built once per version and store. The
    state now comes from an older one cached plus the updates since, when they are few."""
    record = memory.record  # its creation time tells a memory from one deleted and made again
    wanted = record.version if version is None else version
    with _lock:
        entries = _cache.get(memory.store, OrderedDict())
        found = entries.get((memory.name, record.created, wanted))
        older = [i for (n, c, v), i in entries.items() if n == memory.name and c == record.created and v < wanted]
    if found is not None:
        return found
    built = _caught_up(memory, max(older, key=lambda i: i.seq), wanted) if older and version is None else None
    if built is None:
        seq = _newest_seq(memory)  # before the state: updates after it may be in it, never missing from it
        state = memory.state() if version is None else memory.state_at(version)
        built = _index(memory.name, state, memory.domain, seq)
    with _lock:
        entries = _cache.setdefault(memory.store, OrderedDict())
        entries[(memory.name, record.created, built.state.version)] = built
        while len(entries) > _CACHED_VERSIONS:
            entries.popitem(last=False)
    return built


def _newest_seq(memory: WorldMemory) -> int:
    newest = memory.query_history(HistoryQuery(newest_first=True, limit=1))
    return newest[0].seq if newest else 0


def _caught_up(memory: WorldMemory, base: Indexed, version: int) -> Indexed | None:
    """``base`` brought up to ``version`` by the applied updates after it, or None when they are many.

    Replaying updates the base may already hold is harmless: each fact ends as the last update to
    touch it left it, and entities are only ever added."""
    updates = memory.query_history(HistoryQuery(after=base.seq, limit=_CATCH_UP))
    applied = [u for u in updates if u.status is UpdateStatus.APPLIED]
    if len(updates) == _CATCH_UP or not applied or applied[-1].version != version:
        return None
    entities = dict(base.state.entities)
    facts = set(base.state.facts)
    for update in applied:
        entities.update((e.name, e) for e in update.delta.new_entities)
        facts.difference_update(update.delta.remove)
        facts.update(update.delta.add)
    state = State(entities=entities, facts=frozenset(facts), version=version)
    return _index(memory.name, state, memory.domain, updates[-1].seq)


def _index(memory: str, state: State, domain: Domain, seq: int) -> Indexed:
    parent = placement(state.entities, state.facts, domain)
    room_types = _room_types(domain, {e.type for e in state.entities.values()})
    rooms = [n for n, e in state.entities.items() if n not in parent and e.type in room_types]
    room_of = {r: r for r in rooms}
    for name in parent:
        chain = [name]
        while chain[-1] not in room_of and chain[-1] in parent and len(chain) < 16:
            chain.append(parent[chain[-1]])
        room = room_of.get(chain[-1])
        if room is not None:
            room_of.update(dict.fromkeys(chain, room))
    floor_of = {r: _floor(state.entities[r]) for r in rooms}
    return Indexed(
        memory=memory, seq=seq, state=state, domain=domain, parent=parent, room_of=room_of, floor_of=floor_of
    )


def _room_types(domain: Domain, types: Iterable[str]) -> set[str]:
    return {t for t in types if domain.is_subtype(t, "room")} if "room" in domain.types else set()


def _floor(room: Entity) -> str:
    value = room.attrs.get("floor")
    return "" if value is None else str(value)


def cached_counts(store: GraphStore, record: Memory) -> tuple[int, int] | None:
    """Entities and facts of the memory at its version if a view indexed that state, else None."""
    with _lock:
        found = _cache.get(store, OrderedDict()).get((record.name, record.created, record.version))
    return None if found is None else (len(found.state.entities), len(found.state.facts))
