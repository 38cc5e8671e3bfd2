"""Unknown is not false: the entities whose whereabouts the memory has lost, and where they were last seen.

Representation. An entity's location is *unknown* when the domain's rules say it must be somewhere
(an ``at_least_one`` invariant over its type, e.g. "an item is on or inside a receptacle, held or in a
hand") and the memory holds none of the facts that would place it. There is no marker fact: the
verifier already refuses every source except perception leaving an entity nowhere, and lets
perception drop a location it can no longer vouch for (``SOURCES_LOSING_TRACK``), so an absence that
breaks an ``at_least_one`` invariant is always a deliberate "I do not know", never a forgotten fact.
The invariants stay honest (no pseudo-receptacle that every rule would have to special-case), the
planner never sees a fake place it could plan to, and the closed world holds for everything else.

An update that makes a location unknown says so: :func:`lost_track` names the entities a delta leaves
unplaced that were placed before it, each with the placing fact it dropped, so perception's update
can record the outcome (its meta) instead of leaving a reader to find the absence.

Where an entity was last seen comes from history: the newest update that removed one of its placing
facts, i.e. the location it had when the memory lost track. ``last_seen`` is the one function to point
at a store's own history query when one exists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from kg_memory.domain import Domain
from kg_memory.model import Delta, Entity, Fact, Update, UpdateStatus
from kg_memory.rules import Invariant, InvariantKind, Pattern
from kg_memory.verifier import StateView


class _History(Protocol):
    def history(self, since_seq: int = 0, limit: int | None = None) -> list[Update]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class LastSeen:
    """Where ``entity`` was when the memory lost track of it: ``fact`` (e.g. ``(on mug_1 table_1)``)."""

    entity: str
    fact: Fact
    version: int  # the version at which the location was dropped
    time: datetime
    source: str

    @property
    def place(self) -> str:
        return self.fact.args[-1]

    def to_json(self) -> dict[str, Any]:
        return {
            "fact": str(self.fact),
            "place": self.place,
            "version": self.version,
            "time": self.time.isoformat(),
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class Unknown:
    """An entity whose location is unknown, with where it was last seen (``None``: never, per history)."""

    entity: Entity
    last_seen: LastSeen | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "entity": self.entity.name,
            "label": self.entity.label,
            "type": self.entity.type,
            "location": "unknown",
            "last_seen": self.last_seen.to_json() if self.last_seen else None,
        }

    def describe(self) -> str:
        """One line for prompts and reports: unknown, not absent."""
        label = f" ({self.entity.label})" if self.entity.label else ""
        where = (
            f"; last seen: {self.last_seen.fact.display()} at version {self.last_seen.version}"
            if self.last_seen
            else "; never seen"
        )
        return f"{self.entity.name}{label}: location unknown{where}"


def placing_invariants(domain: Domain) -> tuple[Invariant, ...]:
    """The ``at_least_one`` invariants: what says where an entity of a type must be."""
    return domain.derived(_placing_invariants)


def _placing_invariants(domain: Domain) -> tuple[Invariant, ...]:
    return tuple(i for i in domain.rules.invariants if i.kind is InvariantKind.AT_LEAST_ONE)


def _placing_patterns(domain: Domain) -> dict[str, tuple[tuple[Invariant, Pattern], ...]]:
    """Per predicate, the placing invariants' patterns of it: most facts place nothing and match none."""
    found: dict[str, list[tuple[Invariant, Pattern]]] = {}
    for invariant in placing_invariants(domain):
        for pattern in invariant.patterns:
            found.setdefault(pattern.predicate, []).append((invariant, pattern))
    return {predicate: tuple(pairs) for predicate, pairs in found.items()}


def is_placing(domain: Domain, entity: Entity, fact: Fact) -> bool:
    """Whether ``fact`` is one that places ``entity`` (satisfies one of its type's invariants)."""
    for invariant in placing_invariants(domain):
        if not domain.is_subtype(entity.type, invariant.type):
            continue
        for pattern in invariant.patterns:
            binding = pattern.match(fact)
            if binding is not None and binding.get(invariant.var) == entity.name:
                return True
    return False


def unplaced(domain: Domain, entities: Mapping[str, Entity], facts: Iterable[Fact]) -> tuple[Entity, ...]:
    """Entities that some ``at_least_one`` invariant says must be somewhere but no fact places."""
    invariants = placing_invariants(domain)
    if not invariants:
        return ()
    patterns = domain.derived(_placing_patterns)
    placed: set[str] = set()
    for fact in facts:
        for invariant, pattern in patterns.get(fact.predicate, ()):
            binding = pattern.match(fact)
            if binding is not None and invariant.var in binding:
                placed.add(binding[invariant.var])
    return tuple(
        entity
        for name, entity in sorted(entities.items())
        if name not in placed and any(domain.is_subtype(entity.type, i.type) for i in invariants)
    )


@dataclass(frozen=True, slots=True)
class LostTrack:
    """An entity a delta leaves with no location, and the placing fact it dropped (the last one known)."""

    entity: str
    last: Fact

    def warning(self) -> str:
        return f"{self.entity}: location now unknown (last {self.last})"


def lost_track(domain: Domain, delta: Delta, state: StateView) -> tuple[LostTrack, ...]:
    """The entities whose location ``delta`` makes unknown against ``state`` (before the delta).

    Only a removal can do it, so only the arguments of removed facts are looked at: each one the
    invariants placed before the delta and do not after it, by name.
    """
    names = sorted({a for f in delta.remove for a in f.args})
    entities = state.entities(names)
    if not entities or not placing_invariants(domain):
        return ()
    before = state.facts_about(names)
    after = (before - delta.remove) | delta.add
    unplaced_before = {e.name for e in unplaced(domain, entities, before)}
    return tuple(
        LostTrack(entity.name, _dropped(domain, entity, delta.remove))
        for entity in unplaced(domain, entities, after)
        if entity.name not in unplaced_before
    )


def _dropped(domain: Domain, entity: Entity, removed: Iterable[Fact]) -> Fact:
    """The placing fact of ``entity`` among ``removed`` (the first by text, when it had several)."""
    mentioning = (f for f in removed if entity.name in f.args)  # it is among the removed facts' arguments
    return min(mentioning, key=lambda f: (not is_placing(domain, entity, f), str(f)))


def last_seen(memory: _History, domain: Domain, entity: Entity) -> LastSeen | None:
    """Where ``entity`` was last known to be: the newest applied update that removed a placing fact of it.

    Reads the memory's history through its public API (newest first); replace the body with the
    store's own history query when there is one.
    """
    return _last_seen_in(memory.history(), domain, entity)


def _last_seen_in(history: list[Update], domain: Domain, entity: Entity) -> LastSeen | None:
    for update in reversed(history):
        if update.status is not UpdateStatus.APPLIED:
            continue
        dropped = sorted(
            (f for f in update.delta.remove if entity.name in f.args and is_placing(domain, entity, f)), key=str
        )
        if dropped:
            return LastSeen(
                entity=entity.name,
                fact=dropped[0],
                version=update.version,
                time=update.time,
                source=update.source.value,
            )
    return None


def unknown_locations(
    memory: _History, domain: Domain, entities: Mapping[str, Entity], facts: Iterable[Fact]
) -> tuple[Unknown, ...]:
    """Every entity of the state whose location is unknown, each with where it was last seen."""
    missing = unplaced(domain, entities, facts)
    history = memory.history() if missing else []  # one read for all of them
    return tuple(Unknown(e, _last_seen_in(history, domain, e)) for e in missing)
