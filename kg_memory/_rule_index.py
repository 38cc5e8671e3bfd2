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
from dataclasses import dataclass, replace

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
        # per predicate, the numbers of the groups and at-least-one invariants it takes part in
        self._rules_of: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
            predicate: (
                tuple(n for n, g in enumerate(self._groups) if any(p.predicate == predicate for p in g.patterns)),
                tuple(n for n, i in enumerate(self._at_least_one) if any(p.predicate == predicate for p in i.patterns)),
            )
            for predicate in domain.predicates
        }
        self._buckets: dict[_Bucket, list[int]] = {}
        self._holders: dict[_Holder, int] = defaultdict(int)
        # facts recur through a history, so what each one counts in is worked out once; a fact
        # once found to fit its predicate stays fit (entities are never removed nor retyped)
        self._effects: dict[Fact, _Effect] = {}
        # the delta last found clean, with its buckets' counts after it and its holders' changes
        self._checked: tuple[Delta, dict[_Bucket, list[int]], dict[_Holder, int]] | None = None

    # -- the counters ----------------------------------------------------------------------

    def apply(self, delta: Delta) -> None:
        """Count an applied delta's changes (whether or not it was checked here)."""
        checked, self._checked = self._checked, None
        if checked is not None and checked[0] is delta:  # counted by the check that passed it
            self._buckets.update(checked[1])
            for holder, step in checked[2].items():
                self._holders[holder] += step
            return
        for facts, step in ((delta.remove, -1), (delta.add, 1)):
            for fact in facts:
                effect = self._effects.get(fact) or self._effect(fact)
                for bucket, pattern in effect.buckets:
                    if bucket is not _UNKEYED:
                        self._counts(bucket)[pattern] += step
                for holder in effect.holders:
                    self._holders[holder] += step

    def _counts(self, bucket: _Bucket) -> list[int]:
        counts = self._buckets.get(bucket)
        if counts is None:
            counts = self._buckets[bucket] = [0] * len(self._groups[bucket[0]].patterns)
        return counts

    def _effect(self, fact: Fact, entities: Mapping[str, Entity] | None = None) -> _Effect:
        """The buckets a fact counts in (with its pattern) and the holders it makes; with the
        state's entities, also whether it fits its predicate."""
        groups, invariants = self._rules_of.get(fact.predicate, ((), ()))
        buckets = []
        for number in groups:
            hit = self._groups[number].key_of(fact)
            buckets.append((_UNKEYED, 0) if hit is None else ((number, hit[1]), hit[0]))
        holders = []
        for number in invariants:
            invariant = self._at_least_one[number]
            names = {b[invariant.var] for p in invariant.patterns if (b := p.match(fact)) and invariant.var in b}
            holders += [(number, name) for name in sorted(names)]
        schema = self.domain.predicates.get(fact.predicate)
        effect = self._effects[fact] = _Effect(
            fits=entities is not None and self._fits_schema(fact, entities),
            static=schema is not None and schema.static,
            buckets=tuple(buckets),
            holders=tuple(holders),
        )
        return effect

    # -- the check ---------------------------------------------------------------------------

    def clean(
        self, delta: Delta, entities: Mapping[str, Entity], present: AbstractSet[Fact], source: UpdateSource
    ) -> bool:
        """Whether the verifier would find nothing wrong with ``delta`` on the state whose
        entities and facts these are (``False`` means: ask the verifier)."""
        self._checked = None
        remove, add = delta.remove, delta.add
        # a fact both removed and added fails one of these two (it cannot be present and absent)
        if delta.new_entities or any(f not in present for f in remove) or any(f in present for f in add):
            return False
        changing_static = source in SOURCES_CHANGING_STATIC
        after: dict[_Bucket, list[int]] = {}
        landed: list[_Bucket] = []
        change: dict[_Holder, int] = {}
        for facts, step in ((remove, -1), (add, 1)):
            for fact in facts:
                effect = self._effects.get(fact) or self._effect(fact, entities)
                if not effect.fits:
                    if not self._fits_schema(fact, entities):
                        return False
                    effect = self._effects[fact] = replace(effect, fits=True)
                if effect.static and not changing_static:
                    return False
                for bucket, pattern in effect.buckets:
                    if bucket is _UNKEYED:
                        return False  # the verifier expects every fact of a group's predicate to match it
                    counts = after.get(bucket)
                    if counts is None:
                        counts = after[bucket] = list(self._counts(bucket))
                    counts[pattern] += step
                    if step > 0:
                        landed.append(bucket)
                for holder in effect.holders:
                    change[holder] = change.get(holder, 0) + step
        if not self._groups_hold(after, landed):
            return False
        if source not in SOURCES_LOSING_TRACK and not self._holders_kept(change, entities):
            return False
        self._checked = (delta, after, change)
        return True

    def _fits_schema(self, fact: Fact, entities: Mapping[str, Entity]) -> bool:
        """Schema, arity and argument types as the verifier checks them; numeric facts and the
        predicates of ``requires`` invariants are left to it."""
        schema = self.domain.predicates.get(fact.predicate)
        if schema is None or schema.numeric or fact.value is not None or fact.predicate in self._required:
            return False
        if schema.arity != len(fact.args):
            return False
        for name, parameter in zip(fact.args, schema.parameters, strict=True):
            entity = entities.get(name)
            if entity is None or not self.domain.is_subtype(entity.type, parameter.type):
                return False
        return True

    def _groups_hold(self, after: Mapping[_Bucket, list[int]], landed: Iterable[_Bucket]) -> bool:
        """No bucket an added fact lands in breaks its group after the delta."""
        for bucket in landed:
            counts = after[bucket]
            if self._groups[bucket[0]].kind is GroupKind.FUNCTIONAL:
                if sum(counts) > 1:
                    return False
            elif sum(1 for c in counts if c) > 1:
                return False
        return True

    def _holders_kept(self, change: Mapping[_Holder, int], entities: Mapping[str, Entity]) -> bool:
        """No entity that satisfied an at-least-one invariant is left without a holder."""
        for (number, name), step in change.items():
            before = self._holders.get((number, name), 0)
            if step < 0 and before > 0 and before + step == 0:
                entity = entities.get(name)
                if entity is not None and self.domain.is_subtype(entity.type, self._at_least_one[number].type):
                    return False
        return True


@dataclass(frozen=True, slots=True, kw_only=True)
class _Effect:
    """What one fact counts in: its buckets (each with its pattern's number), the holders it
    makes, whether its predicate is static, and whether it is known to fit its predicate."""

    fits: bool
    static: bool
    buckets: tuple[tuple[_Bucket, int], ...]
    holders: tuple[_Holder, ...]
