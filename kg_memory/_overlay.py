"""A state view of a write group: a stored state plus the group's accepted deltas so far.

A group's proposals are computed and verified one after another against this view, so each
sees the earlier ones as committed. The base is read once per name and kept: the group's commit
checks the version, so a base that moved meanwhile fails the whole group, which is proposed again
on a fresh view. Once the group has committed, :meth:`Overlay.settle` makes what the view holds
the state at the group's last version, which the next group may start from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kg_memory.model import Delta, Entity, Fact
from kg_memory.verifier import StateView


class Overlay:
    """``base`` with deltas applied on top (a :class:`StateView`); the base is never written."""

    def __init__(self, base: StateView) -> None:
        self._base = base
        self._added: set[Fact] = set()  # facts the base lacks
        self._removed: set[Fact] = set()  # facts the base holds
        self._new: dict[str, Entity] = {}
        # what the base answered: facts per entity name, the nullary facts, entities (None: absent)
        self._facts_of: dict[str, frozenset[Fact]] = {}
        self._nullary: frozenset[Fact] | None = None
        self._entities: dict[str, Entity | None] = {}
        self._facts_read = 0  # facts the base answered, counted once per name that holds them

    def prefetch(self, names: Iterable[str]) -> None:
        """Read what the base holds of ``names`` at once, for proposers that will ask one by one."""
        wanted = set(names)
        self.entities(wanted)
        self._base_facts(wanted)

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        wanted = list(dict.fromkeys(names))
        unread = [n for n in wanted if n not in self._new and n not in self._entities]
        if unread:
            found = self._base.entities(unread)
            self._entities.update({n: found.get(n) for n in unread})
        found_entities: dict[str, Entity] = {}
        for name in wanted:
            entity = self._new.get(name) or self._entities.get(name)
            if entity is not None:
                found_entities[name] = entity
        return found_entities

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        wanted = set(names)
        base = self._base_facts(wanted)
        mine = {f for f in self._added if not f.args or not wanted.isdisjoint(f.args)}
        return frozenset((base - self._removed) | mine)

    def _base_facts(self, names: set[str]) -> frozenset[Fact]:
        unread = names - self._facts_of.keys()
        if unread or self._nullary is None:
            read = self._base.facts_about(sorted(unread))
            self._nullary = frozenset(f for f in read if not f.args)
            by_name: dict[str, set[Fact]] = {n: set() for n in unread}
            for fact in read:
                for arg in set(fact.args) & unread:
                    by_name[arg].add(fact)
            self._facts_of.update((n, frozenset(fs)) for n, fs in by_name.items())
            self._facts_read += sum(len(fs) for fs in by_name.values())
        return self._nullary.union(*(self._facts_of[n] for n in names))

    @property
    def held(self) -> int:
        """About how much the view holds: the names it read, and the facts it holds for them."""
        return len(self._entities) + len(self._facts_of) + self._facts_read

    def settle(self) -> None:
        """Take the deltas into what the base answered, once they are committed: the view is then
        the state they left, with nothing on top."""
        gone: dict[str, set[Fact]] = {}
        came: dict[str, set[Fact]] = {}
        for changed, facts in ((gone, self._removed), (came, self._added)):
            for fact in facts:
                for arg in fact.args:
                    if arg in self._facts_of:
                        changed.setdefault(arg, set()).add(fact)
        for name in gone.keys() | came.keys():
            self._facts_of[name] = (self._facts_of[name] - gone.get(name, set())) | came.get(name, set())
            self._facts_read += len(came.get(name, ()))
        if self._nullary is not None and any(not f.args for f in (*self._added, *self._removed)):
            self._nullary = (self._nullary - self._removed) | {f for f in self._added if not f.args}
        self._entities.update(self._new)
        self._added, self._removed, self._new = set(), set(), {}

    def apply(self, delta: Delta) -> None:
        """Take an accepted delta into the view (it applies: it was verified against this view)."""
        self._new.update((e.name, e) for e in delta.new_entities)
        for fact in delta.remove:
            if fact in self._added:
                self._added.discard(fact)
            else:
                self._removed.add(fact)
        for fact in delta.add:
            if fact in self._removed:
                self._removed.discard(fact)
            else:
                self._added.add(fact)
