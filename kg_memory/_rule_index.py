"""The domain's rules as counters over a replayed state, so an imported update is checked in the
size of its delta rather than of the facts around it.

:meth:`RuleIndex.clean` answers whether :meth:`Verifier.verify` would find no issue with a delta;
it is conservative: whatever it cannot decide from the counters (new entities, numeric facts, a
``requires`` invariant's predicates) it leaves to the verifier, and so does every doubt, so a
refused update is always refused by the verifier itself, in its own words. The counters follow
every applied update, checked or not, so each update is checked against the state at its own
position."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet

from kg_memory.domain import Domain
from kg_memory.model import Delta, Entity, Fact, UpdateSource
from kg_memory.rules import GroupKind, InvariantKind
from kg_memory.verifier import SOURCES_CHANGING_STATIC, SOURCES_LOSING_TRACK

# (group number, key): how many facts of each of the group's patterns hold for that key
_Bucket = tuple[int, tuple[str, ...]]
# (invariant number, entity): how many facts make the entity satisfy an at-least-one invariant
_Holder = tuple[int, str]
_UNKEYED: _Bucket = (-1, ())  # a fact of a group's predicate that matches none of its patterns


class RuleIndex:
    """Per rule group and key, the count of each pattern's facts; per at-least-one invariant and
    entity, the count of the facts that satisfy it."""

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self._groups = domain.rules.groups
        self._at_least_one = [i for i in domain.rules.invariants if i.kind is InvariantKind.AT_LEAST_ONE]
        self._required = frozenset(
            p for i in domain.rules.invariants if i.kind is InvariantKind.REQUIRES for p in i.predicates()
        )
        self._buckets: dict[_Bucket, list[int]] = {}
        self._holders: dict[_Holder, int] = defaultdict(int)
        self._effects: dict[Fact, tuple[tuple[tuple[_Bucket, int], ...], tuple[_Holder, ...]]] = {}
        self._fits: dict[tuple[str, tuple[str, ...]], bool] = {}  # (predicate, argument types)
        self._subtype: dict[tuple[str, str], bool] = {}

    # -- the counters ----------------------------------------------------------------------

    def apply(self, delta: Delta) -> None:
        """Count an applied delta's changes (whether or not it was checked here)."""
        for fact, step in _steps(delta.remove, delta.add):
            buckets, holders = self._effect(fact)
            for bucket, pattern in buckets:
                if bucket is not _UNKEYED:
                    self._counts(bucket)[pattern] += step
            for holder in holders:
                self._holders[holder] += step

    def _counts(self, bucket: _Bucket) -> list[int]:
        counts = self._buckets.get(bucket)
        if counts is None:
            counts = self._buckets[bucket] = [0] * len(self._groups[bucket[0]].patterns)
        return counts

    def _effect(self, fact: Fact) -> tuple[tuple[tuple[_Bucket, int], ...], tuple[_Holder, ...]]:
        """The buckets a fact counts in (with its pattern) and the holders it makes; facts recur
        through a history, so each is worked out once."""
        found = self._effects.get(fact)
        if found is None:
            buckets = []
            for number, group in enumerate(self._groups):
                if all(p.predicate != fact.predicate for p in group.patterns):
                    continue
                hit = group.key_of(fact)
                buckets.append((_UNKEYED, 0) if hit is None else ((number, hit[1]), hit[0]))
            holders = []
            for number, invariant in enumerate(self._at_least_one):
                names = {b[invariant.var] for p in invariant.patterns if (b := p.match(fact)) and invariant.var in b}
                holders += [(number, name) for name in sorted(names)]
            found = self._effects[fact] = (tuple(buckets), tuple(holders))
        return found

    # -- the check ---------------------------------------------------------------------------

    def clean(
        self, delta: Delta, entities: Mapping[str, Entity], present: AbstractSet[Fact], source: UpdateSource
    ) -> bool:
        """Whether the verifier would find nothing wrong with ``delta`` on the state whose
        entities and facts these are (``False`` means: ask the verifier)."""
        remove, add = delta.remove, delta.add
        if delta.new_entities or not remove.isdisjoint(add):
            return False
        if any(f not in present for f in remove) or any(f in present for f in add):
            return False
        changing_static = source in SOURCES_CHANGING_STATIC
        for fact in (*remove, *add):
            if fact.value is not None or fact.predicate in self._required:
                return False
            if not self._fits_schema(fact, entities, changing_static):
                return False
        return self._groups_hold(remove, add) and (
            source in SOURCES_LOSING_TRACK or self._holders_kept(remove, add, entities)
        )

    def _fits_schema(self, fact: Fact, entities: Mapping[str, Entity], changing_static: bool) -> bool:
        types = []
        for name in fact.args:
            entity = entities.get(name)
            if entity is None:
                return False
            types.append(entity.type)
        key = (fact.predicate, tuple(types))
        fits = self._fits.get(key)
        if fits is None:
            fits = self._fits[key] = self._types_fit(fact.predicate, key[1])
        if not fits:
            return False
        return changing_static or not self.domain.predicates[fact.predicate].static

    def _types_fit(self, predicate: str, types: tuple[str, ...]) -> bool:
        schema = self.domain.predicates.get(predicate)
        if schema is None or schema.numeric or schema.arity != len(types):
            return False
        return all(self._is_subtype(t, p.type) for t, p in zip(types, schema.parameters, strict=True))

    def _is_subtype(self, type_: str, ancestor: str) -> bool:
        key = (type_, ancestor)
        found = self._subtype.get(key)
        if found is None:
            found = self._subtype[key] = self.domain.is_subtype(type_, ancestor)
        return found

    def _groups_hold(self, remove: AbstractSet[Fact], add: AbstractSet[Fact]) -> bool:
        """No bucket an added fact lands in breaks its group after the delta."""
        after: dict[_Bucket, list[int]] = {}
        landed: list[_Bucket] = []
        for fact, step in _steps(remove, add):
            for bucket, pattern in self._effect(fact)[0]:
                if bucket is _UNKEYED:
                    return False  # the verifier expects every fact of a group's predicate to match it
                counts = after.get(bucket)
                if counts is None:
                    counts = after[bucket] = list(self._counts(bucket))
                counts[pattern] += step
                if step > 0:
                    landed.append(bucket)
        for bucket in landed:
            counts = after[bucket]
            if self._groups[bucket[0]].kind is GroupKind.FUNCTIONAL:
                if sum(counts) > 1:
                    return False
            elif sum(1 for c in counts if c) > 1:
                return False
        return True

    def _holders_kept(self, remove: AbstractSet[Fact], add: AbstractSet[Fact], entities: Mapping[str, Entity]) -> bool:
        """No entity that satisfied an at-least-one invariant is left without a holder."""
        change: dict[_Holder, int] = defaultdict(int)
        for fact, step in _steps(remove, add):
            for holder in self._effect(fact)[1]:
                change[holder] += step
        for (number, name), step in change.items():
            before = self._holders.get((number, name), 0)
            if step < 0 and before > 0 and before + step == 0:
                entity = entities.get(name)
                if entity is not None and self._is_subtype(entity.type, self._at_least_one[number].type):
                    return False
        return True


def _steps(remove: Iterable[Fact], add: Iterable[Fact]) -> Iterable[tuple[Fact, int]]:
    yield from ((f, -1) for f in remove)
    yield from ((f, 1) for f in add)
