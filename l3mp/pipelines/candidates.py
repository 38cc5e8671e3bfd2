"""The changes a report could mean, built from the domain and the state instead of written by a model.

For the entities a report names, every fluent fact the domain's types allow over them (and over the
domain's constants) is a candidate: one that holds now may stop (a light goes off), one that does not
may start (a mug is now on the table). A new fact is completed by the domain's rules: what a
functional rule allows only once (an item's place, a person's room, a cup's liquid) retires the old
value, and an exclusive rule retires the fact that cannot hold beside it. Facts an ``at_least_one``
invariant needs (an item's place) never just stop: they only move. What holds already is kept as a
"no change" reading, so a report that confirms the state can be told from one that changes it.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kg_memory.domain import Domain, PredicateSchema
from kg_memory.model import Delta, Entity, Fact
from kg_memory.rules import GroupKind, InvariantKind

MAX_CANDIDATES = 2_000  # a report naming very many things is not read by enumeration


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One reading of a report: ``fact`` starts (``becomes``) or stops holding; ``retired`` go with it.

    ``already`` readings change nothing: the report says what the memory holds."""

    fact: Fact
    becomes: bool
    retired: frozenset[Fact] = frozenset()
    already: bool = False

    @property
    def delta(self) -> Delta:
        if self.already:
            return Delta()
        removed = self.retired | (frozenset() if self.becomes else {self.fact})
        return Delta(remove=removed, add=frozenset({self.fact}) if self.becomes else frozenset())

    @property
    def entities(self) -> frozenset[str]:
        """Every entity the reading speaks of, the retired facts' included ("from the desk")."""
        return frozenset(a for f in (self.fact, *self.retired) for a in f.args)

    def english(self, domain: Domain, labels: Mapping[str, str]) -> str:
        language = domain.language
        return language.fact(self.fact, labels) if self.becomes else language.no_longer(self.fact, labels)

    def __str__(self) -> str:
        sign = "=" if self.already else ("+" if self.becomes else "-")
        retired = f" (retires {', '.join(sorted(map(str, self.retired)))})" if self.retired else ""
        return f"{sign}{self.fact}{retired}"


@dataclass(frozen=True, slots=True)
class _StateIndex:
    facts: frozenset[Fact]
    by_predicate: Mapping[str, tuple[Fact, ...]]

    @classmethod
    def of(cls, facts: Iterable[Fact]) -> _StateIndex:
        every = frozenset(facts)
        grouped: dict[str, list[Fact]] = defaultdict(list)
        for fact in every:
            grouped[fact.predicate].append(fact)
        return cls(every, {p: tuple(fs) for p, fs in grouped.items()})


def fluent_predicates(domain: Domain) -> tuple[str, ...]:
    """The predicates whose facts change (not static), in name order."""
    return tuple(sorted(p for p in domain.predicates if p not in domain.static_predicates))


def candidate_changes(
    domain: Domain,
    state: Iterable[Fact],
    entities: Mapping[str, Entity],
    named: Sequence[str],
) -> tuple[Change, ...]:
    """The readings over the ``named`` entities (see the module), in a stable order."""
    index = _StateIndex.of(state)
    named_set = frozenset(n for n in named if n in entities)
    constants = {e.name: e for e in domain.constant_entities()}
    located = _located_predicates(domain)
    found: list[Change] = []
    for predicate in fluent_predicates(domain):
        schema = domain.predicates[predicate]
        for args in _bindings(domain, schema, entities, named_set, constants):
            fact = Fact(predicate, args)
            found.extend(_readings(domain, index, fact, removable=predicate not in located))
            if len(found) > MAX_CANDIDATES:
                return tuple(found[:MAX_CANDIDATES])
    return tuple(found)


def _readings(domain: Domain, index: _StateIndex, fact: Fact, *, removable: bool) -> list[Change]:
    if fact in index.facts:
        stops = [Change(fact=fact, becomes=False)] if removable else []
        return [Change(fact=fact, becomes=True, already=True), *stops]
    readings = [Change(fact=fact, becomes=True, retired=_retired_by(domain, index, fact))]
    if removable:
        readings.append(Change(fact=fact, becomes=False, already=True))
    return readings


def _bindings(
    domain: Domain,
    schema: PredicateSchema,
    entities: Mapping[str, Entity],
    named: frozenset[str],
    constants: Mapping[str, Entity],
) -> Iterable[tuple[str, ...]]:
    """Argument tuples of the right types: named entities, or constants where no named one fits
    (any liquid for "filled"), with at least one named entity among them."""
    options: list[list[str]] = []
    for position, parameter in enumerate(schema.parameters):
        fits = [n for n in sorted(named) if domain.is_subtype(entities[n].type, parameter.type)]
        if not fits and position > 0:
            fits = [c for c, e in sorted(constants.items()) if domain.is_subtype(e.type, parameter.type)]
        if not fits:
            return
        options.append(fits)
    for args in itertools.product(*options):
        if any(a in named and a not in constants for a in args) and len(set(args)) == len(args):
            yield tuple(args)


def _retired_by(domain: Domain, index: _StateIndex, fact: Fact) -> frozenset[Fact]:
    """The facts the rules say cannot hold beside ``fact``: the old value of a functional rule's key,
    the other side of an exclusive rule."""
    retired: set[Fact] = set()
    for group in domain.rules.groups:
        placed = group.key_of(fact)
        if placed is None:
            continue
        pattern_index, key = placed
        for predicate in {p.predicate for p in group.patterns}:
            for other in index.by_predicate.get(predicate, ()):
                other_placed = group.key_of(other)
                if other == fact or other_placed is None or other_placed[1] != key:
                    continue
                if group.kind is GroupKind.FUNCTIONAL or other_placed[0] != pattern_index:
                    retired.add(other)
    return frozenset(retired)


def _located_predicates(domain: Domain) -> frozenset[str]:
    """Predicates an ``at_least_one`` invariant needs: their facts move, they never just stop."""
    return frozenset(
        p.predicate
        for invariant in domain.rules.invariants
        if invariant.kind is InvariantKind.AT_LEAST_ONE
        for p in invariant.patterns
    )


__all__ = ["MAX_CANDIDATES", "Change", "candidate_changes", "fluent_predicates"]
