"""What a run of applied updates changes in a memory's state, taken together.

A write group's updates are written as their net change: a fact one update adds and a later one
removes is never written, and a store writes each kind of change once for the whole run. Every
check a one-by-one write makes still holds: a fact removed must hold, a fact added must not, the
entities a fact names must exist by then, an entity created must be new. The run is followed
fact by fact here, from what it takes the stored state to be where it first touches each fact;
the store checks those assumptions (:attr:`NetChange.assumed`), with the writes themselves where
the run changes the fact and with one read where it leaves it as it found it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kg_memory.errors import NotApplicable
from kg_memory.model import Delta, Entity, Fact, Update, UpdateStatus

Key = tuple[str, tuple[str, ...]]  # a fact's predicate and arguments: one value each in a state


def key_of(fact: Fact) -> Key:
    return fact.predicate, fact.args


@dataclass(slots=True)
class NetChange:
    """What a run of deltas of ``memory``, taken in order, changes in the stored state."""

    memory: str
    # per fact key the run touched: the fact it takes to be stored before it (None: none), and after it
    before: dict[Key, Fact | None] = field(default_factory=dict)
    after: dict[Key, Fact | None] = field(default_factory=dict)
    # the fact the run first added where it took nothing to be stored (named when that is wrong)
    first_added: dict[Key, Fact] = field(default_factory=dict)
    created: dict[str, Entity] = field(default_factory=dict)
    # entities that facts added in the run name, not created in the run before them: they must be stored
    named: set[str] = field(default_factory=set)

    def take(self, delta: Delta) -> None:
        """Follow ``delta`` (its removals first, as a store applies them); :class:`NotApplicable`
        when it does not apply after the run so far."""
        for entity in delta.new_entities:
            if entity.name in self.created:
                raise NotApplicable(self.memory, f"an entity to create already exists ({entity.name})")
            self.created[entity.name] = entity
        for fact in delta.remove:
            key = key_of(fact)
            if key not in self.after:
                self.before[key] = self.after[key] = fact
            if self.after[key] != fact:
                raise NotApplicable(self.memory, f"{fact} does not hold, so it cannot be removed")
            self.after[key] = None
        for fact in delta.add:
            key = key_of(fact)
            if key not in self.after:
                self.before[key] = self.after[key] = None
                self.first_added[key] = fact
            if self.after[key] is not None:
                raise NotApplicable(self.memory, f"{fact} already holds")
            self.after[key] = fact
            self.named.update(arg for arg in fact.args if arg not in self.created)

    @property
    def removed(self) -> list[Fact]:
        """Stored facts the run removes (each must hold), in key order."""
        return [fact for key, fact in sorted(self.before.items()) if fact is not None and self.after[key] != fact]

    @property
    def added(self) -> list[Fact]:
        """Facts the run adds (none may hold where it removes nothing first), in key order."""
        return [fact for key, fact in sorted(self.after.items()) if fact is not None and self.before[key] != fact]

    @property
    def assumed(self) -> dict[Key, Fact | None]:
        """What the run takes to be stored where it leaves a fact as it found it: nothing writes
        there, so the store checks it by reading."""
        return {k: fact for k, fact in self.before.items() if self.after[k] == fact}

    def refusal(self, stored: dict[Key, Fact]) -> NotApplicable | None:
        """Why the run does not apply, given the facts ``stored`` at the keys of :attr:`assumed`."""
        for key, fact in sorted(self.assumed.items()):
            if fact is not None and stored.get(key) != fact:
                return NotApplicable(self.memory, f"{fact} does not hold, so it cannot be removed")
            if fact is None and key in stored:
                return NotApplicable(self.memory, f"{self.first_added[key]} already holds")
        return None

    @property
    def named_before_created(self) -> set[str]:
        """Entities a fact names before the update that creates them (which must not have existed)."""
        return self.named & self.created.keys()

    @property
    def is_empty(self) -> bool:
        return not (self.before or self.created)


@dataclass(frozen=True, slots=True)
class Run:
    """A group's updates between two checkpoints: their net change, and the version whose
    checkpoint is due once it is written (None: no checkpoint ends it)."""

    change: NetChange
    checkpoint: int | None


def in_runs(
    memory: str, updates: Sequence[Update], *, version: int, seq: int, checkpoint_every: int
) -> tuple[list[Update], list[Run]]:
    """``updates`` stamped from ``seq`` at the versions they reach from ``version``, and what they
    change in runs, each ending where a checkpoint is due (it holds the state at its version)."""
    stored: list[Update] = []
    runs: list[Run] = []
    change = NetChange(memory)
    for update in updates:
        applied = update.status is UpdateStatus.APPLIED
        version += applied
        stored.append(update.stamped(seq=seq + len(stored), version=version))
        if applied:
            change.take(update.delta)
        if applied and version % checkpoint_every == 0:
            runs.append(Run(change, version))
            change = NetChange(memory)
    runs.append(Run(change, None))
    return stored, runs
