"""What a run of applied updates changes in a memory's state, taken together.

A write group's updates are written as their net change: a fact one update adds and a later one
removes is never written, and a store writes each kind of change once for the whole run. Every
check a one-by-one write makes still holds: a fact removed must hold, a fact added must not, the
entities a fact names must exist by then, an entity created must be new. What can be told within
the run is checked here; what needs the stored state, by the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kg_memory.errors import NotApplicable
from kg_memory.model import Delta, Entity, Fact


@dataclass(slots=True)
class NetChange:
    """What a run of deltas of ``memory``, taken in order, changes in the stored state.

    :meth:`take` checks what can be checked within the run (a fact removed twice, added twice,
    an entity created twice); what needs the stored state is the store's to check.
    """

    memory: str
    removed: dict[Fact, None] = field(default_factory=dict)  # held before the run, not after
    added: dict[Fact, None] = field(default_factory=dict)  # held after the run, not before
    created: dict[str, Entity] = field(default_factory=dict)
    # entities that facts added in the run name, not created in the run before them: they must be stored
    named: set[str] = field(default_factory=set)

    def take(self, delta: Delta) -> None:
        for entity in delta.new_entities:
            if entity.name in self.created:
                raise NotApplicable(self.memory, f"an entity to create already exists ({entity.name})")
            self.created[entity.name] = entity
        for fact in delta.remove:
            if fact in self.added:
                del self.added[fact]
            elif fact in self.removed:
                raise NotApplicable(self.memory, f"{fact} does not hold, so it cannot be removed")
            else:
                self.removed[fact] = None
        for fact in delta.add:
            if fact in self.removed:
                del self.removed[fact]
            elif fact in self.added:
                raise NotApplicable(self.memory, f"{fact} already holds")
            else:
                self.added[fact] = None
            self.named.update(arg for arg in fact.args if arg not in self.created)

    @property
    def named_before_created(self) -> set[str]:
        """Entities a fact names before the update that creates them (which must not have existed)."""
        return self.named & self.created.keys()

    @property
    def is_empty(self) -> bool:
        return not (self.removed or self.added or self.created)
