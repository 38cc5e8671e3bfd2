"""A mutable, closed world over a domain: typed objects and the facts that hold.

The simulator steps one and plan validation runs actions against a copy of one, so it is
built for thousands of objects: membership is a set lookup, ``objects_of`` is cached per
type (quantifiers iterate it), and the by-argument and by-predicate indexes are built on
first use and then kept up to date, so copies that never query them stay cheap.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from kg_memory.domain import Domain
from kg_memory.model import Delta, Entity, Fact
from planning.errors import PlanningError


class WorldError(PlanningError, ValueError):
    """A change the world cannot take: it names the fact or entity at fault.

    A ``ValueError`` for callers that treat it as bad input, a ``PlanningError`` like
    everything else the project raises on purpose.
    """


class _Index:
    """Facts bucketed by a key (an argument, or the predicate), built lazily from a fact set."""

    __slots__ = ("_buckets", "_by_args")

    def __init__(self, by_args: bool) -> None:
        self._by_args = by_args
        self._buckets: dict[str, set[Fact]] | None = None

    def keys_of(self, fact: Fact) -> Iterable[str]:
        return set(fact.args) if self._by_args else (fact.predicate,)

    def get(self, key: str, facts: Iterable[Fact]) -> frozenset[Fact]:
        return frozenset(self._built(facts).get(key, ()))

    def size(self, key: str, facts: Iterable[Fact]) -> int:
        return len(self._built(facts).get(key, ()))

    def _built(self, facts: Iterable[Fact]) -> dict[str, set[Fact]]:
        if self._buckets is None:
            self._buckets = {}
            for fact in facts:
                self._add(fact)
        return self._buckets

    def add(self, fact: Fact) -> None:
        if self._buckets is not None:
            self._add(fact)

    def remove(self, fact: Fact) -> None:
        if self._buckets is None:
            return
        for key in self.keys_of(fact):
            bucket = self._buckets[key]
            bucket.discard(fact)
            if not bucket:
                del self._buckets[key]

    def copy(self) -> _Index:
        twin = _Index(self._by_args)
        if self._buckets is not None:
            twin._buckets = {key: set(bucket) for key, bucket in self._buckets.items()}
        return twin

    def _add(self, fact: Fact) -> None:
        assert self._buckets is not None
        for key in self.keys_of(fact):
            self._buckets.setdefault(key, set()).add(fact)


class World:
    """A mutable world for simulation and plan validation: a fixed set of typed objects (the
    domain's constants plus the given entities) and the facts that hold (closed world).

    Every fact must name known objects, and every object a type the domain defines: a
    quantifier ranges over ``objects_of`` its variable's type, so a fact about an object the
    world does not know, or of a type outside the hierarchy, would silently escape it.
    """

    def __init__(self, domain: Domain, entities: Iterable[Entity], facts: Iterable[Fact]) -> None:
        self.domain = domain
        self._entities: dict[str, Entity] = {}
        self._by_type: dict[str, set[str]] = {}  # exact type -> names
        self._objects: dict[str, tuple[str, ...]] = {}  # type -> names of it and its subtypes, sorted
        self._subtype: dict[tuple[str, str], bool] = {}  # a function of the domain: copies share it
        self._facts: set[Fact] = set()
        self._by_arg = _Index(by_args=True)
        self._by_predicate = _Index(by_args=False)
        self._values: dict[tuple[str, tuple[str, ...]], float] | None = None  # numeric facts, built on use
        self.add_entities(domain.constant_entities())
        self.add_entities(entities)
        for fact in facts:
            self._check_objects(fact)
            self._facts.add(fact)

    # -- reading ------------------------------------------------------------------------------

    @property
    def facts(self) -> frozenset[Fact]:
        """A snapshot: later changes to the world do not show in it."""
        return frozenset(self._facts)

    @property
    def entities(self) -> MappingProxyType[str, Entity]:
        """Every object by name, the domain's constants included (a read-only view)."""
        return MappingProxyType(self._entities)

    def holds(self, fact: Fact) -> bool:
        return fact in self._facts

    def entity(self, name: str) -> Entity | None:
        return self._entities.get(name)

    def type_of(self, name: str) -> str | None:
        entity = self._entities.get(name)
        return entity.type if entity is not None else None

    def is_a(self, name: str, type_: str) -> bool:
        """Whether object ``name`` is of ``type_`` or a subtype (``False`` for an unknown object)."""
        entity = self._entities.get(name)
        if entity is None:
            return False
        key = (entity.type, type_)
        known = self._subtype.get(key)
        if known is None:
            known = self._subtype[key] = self.domain.is_subtype(entity.type, type_)
        return known

    def objects_of(self, type_: str) -> tuple[str, ...]:
        """Every object whose type is ``type_`` or a subtype, sorted (so iteration is reproducible)."""
        found = self._objects.get(type_)
        if found is None:
            is_subtype = self.domain.is_subtype
            names = (n for t, ns in self._by_type.items() if is_subtype(t, type_) for n in ns)
            found = self._objects[type_] = tuple(sorted(names))
        return found

    def value(self, function: str, args: tuple[str, ...]) -> float | None:
        """The value of a numeric fact (an action cost such as a distance), ``None`` if unknown."""
        if self._values is None:
            self._values = {(f.predicate, f.args): f.value for f in self._facts if f.value is not None}
        return self._values.get((function, args))

    def facts_about(self, name: str) -> frozenset[Fact]:
        """Facts with ``name`` among their arguments: O(those facts) once the index is built (on first use)."""
        return self._by_arg.get(name, self._facts)

    def count_about(self, name: str) -> int:
        """How many facts :meth:`facts_about` ``name`` holds, without copying them."""
        return self._by_arg.size(name, self._facts)

    def facts_of(self, predicate: str) -> frozenset[Fact]:
        """Facts of ``predicate``: O(those facts) once the index is built (on first use)."""
        return self._by_predicate.get(predicate, self._facts)

    def __len__(self) -> int:
        return len(self._facts)

    def __repr__(self) -> str:
        return f"World({self.domain.name}: {len(self._entities)} objects, {len(self._facts)} facts)"

    # -- changing -----------------------------------------------------------------------------

    def add_entities(self, entities: Iterable[Entity]) -> None:
        """Add objects, all or none; one already known is accepted again only with the same type."""
        checked = self._checked(entities)
        for entity in checked:
            if entity.name not in self._entities:
                self._by_type.setdefault(entity.type, set()).add(entity.name)
                for type_ in self.domain.lineage(entity.type):  # the cached lists it joins
                    self._objects.pop(type_, None)
            self._entities[entity.name] = entity

    def apply(self, delta: Delta) -> None:
        """Add ``delta``'s entities, then remove its facts, then add its facts; all or nothing.

        Raises :class:`WorldError` naming the fact if one to remove does not hold or one to
        add already holds (after the removals), or if an added fact names an unknown object.
        """
        self._checked(delta.new_entities)
        for fact in delta.remove:
            if fact not in self._facts:
                raise WorldError(f"cannot remove {fact}: it does not hold")
        new_names = {e.name for e in delta.new_entities}
        for fact in delta.add:
            if fact in self._facts and fact not in delta.remove:
                raise WorldError(f"cannot add {fact}: it already holds")
            self._check_objects(fact, new_names)
        self.add_entities(delta.new_entities)
        if any(f.value is not None for f in (*delta.remove, *delta.add)):
            self._values = None
        for fact in delta.remove:
            self._facts.remove(fact)
            self._by_arg.remove(fact)
            self._by_predicate.remove(fact)
        for fact in delta.add:
            self._facts.add(fact)
            self._by_arg.add(fact)
            self._by_predicate.add(fact)

    def copy(self) -> World:
        """An independent world with the same objects and facts (entities are immutable, shared)."""
        twin = object.__new__(World)
        twin.domain = self.domain
        twin._entities = dict(self._entities)
        twin._by_type = {type_: set(names) for type_, names in self._by_type.items()}
        twin._objects = dict(self._objects)
        twin._subtype = self._subtype
        twin._facts = set(self._facts)
        twin._by_arg = self._by_arg.copy()
        twin._by_predicate = self._by_predicate.copy()
        twin._values = self._values  # replaced, never changed in place, when numeric facts change
        return twin

    def _checked(self, entities: Iterable[Entity]) -> list[Entity]:
        checked = list(entities)
        seen: dict[str, Entity] = {}
        for entity in checked:
            known = seen.setdefault(entity.name, self._entities.get(entity.name, entity))
            if known.type != entity.type:
                raise WorldError(f"{entity.name} is already a {known.type}; it cannot also be a {entity.type}")
            if entity.type not in self.domain.types:
                raise WorldError(f"{entity.name} has type {entity.type}, which domain {self.domain.name} lacks")
        return checked

    def _check_objects(self, fact: Fact, also: frozenset[str] | set[str] = frozenset()) -> None:
        for name in fact.args:
            if name not in self._entities and name not in also:
                raise WorldError(f"{fact} names {name}, which is not an object of this world")
