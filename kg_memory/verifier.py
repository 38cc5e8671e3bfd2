"""Verification of a delta against the domain and the current state.

``verify`` never raises for bad content: it returns every issue it finds, each with a
code, the offending fact and a sentence a person or a language model can act on.
Rules are checked on the state after the delta, and a violation is reported only when
this delta causes or worsens it, so an update is never blamed for an older problem.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Protocol

from kg_memory.domain import Domain
from kg_memory.model import Delta, Entity, Fact, Issue, IssueCode, UpdateSource
from kg_memory.rules import GroupKind, Invariant, InvariantKind, RuleGroup

# Perception is the only source that may create entities; static facts are perception's
# too, and a revert may undo whatever an earlier (verified) update did.
SOURCES_CREATING_ENTITIES = frozenset({UpdateSource.SENSOR})
SOURCES_CHANGING_STATIC = frozenset({UpdateSource.SENSOR, UpdateSource.REVERT})
# Perception may lose track of an entity: an item expected in view but not seen has unknown
# whereabouts, and the memory records that by keeping no location rather than a false one. So
# for these sources an invariant broken by a removal is allowed; one broken by an addition or
# a new entity (a new item with no place) is still an issue.
SOURCES_LOSING_TRACK = frozenset({UpdateSource.SENSOR})


class StateView(Protocol):
    """The narrow read access verification needs (stores provide it)."""

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        """The stored entities among ``names``."""
        ...

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        """Every fact with one of ``names`` as an argument, plus every nullary fact."""
        ...


class _Vars(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class Verifier:
    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        # Everything below is derived once from the (frozen) domain: verify runs once per update,
        # and a verified import runs it for every update of a long history.
        self._constants = {e.name: e for e in domain.constant_entities()}
        invariants = domain.rules.invariants
        self._placed_types = [i.type for i in invariants if i.kind is InvariantKind.AT_LEAST_ONE]
        self._scanning = [i.predicates() for i in invariants if i.kind is not InvariantKind.AT_LEAST_ONE]

    def verify(self, delta: Delta, state: StateView, source: UpdateSource) -> tuple[Issue, ...]:
        issues: list[Issue] = []
        mentioned = delta.mentioned()
        stored = state.entities(mentioned)
        known = {**self._constants, **stored}
        issues += self._check_new_entities(delta.new_entities, known, source)
        known.update({e.name: e for e in delta.new_entities})
        malformed: set[Fact] = set()
        for fact in sorted(delta.remove | delta.add, key=str):
            fact_issues = self._check_schema(fact, known)
            if fact_issues:
                malformed.add(fact)
                issues += fact_issues
            elif source not in SOURCES_CHANGING_STATIC and self.domain.predicates[fact.predicate].static:
                issues.append(
                    self._issue(
                        IssueCode.STATIC_PREDICATE,
                        fact,
                        "is static: no action changes it, so only perception may change it; leave it out",
                    )
                )
        before = state.facts_about(self._entities_read(delta, mentioned, known, malformed))
        issues += self._check_presence(delta, before, malformed)
        after = (before - delta.remove) | (delta.add - malformed)
        added = delta.add - malformed - before
        # a delta that mentions many entities asks about each: index every argument from the start
        eager = len(mentioned) > _SCANS_BEFORE_INDEXING
        before_index, after_index = _Index(before, eager=eager), _Index(after, eager=eager)
        issues += self._check_groups(before_index, after_index, added)
        issues += self._check_invariants(delta, mentioned, before_index, after_index, known, source)
        return tuple(issues)

    def _entities_read(
        self, delta: Delta, mentioned: frozenset[str], known: Mapping[str, Entity], malformed: set[Fact]
    ) -> AbstractSet[str]:
        """The entities whose facts the checks below look at; every other mentioned entity's facts
        cannot change a verdict, and a delta moving items between furniture would otherwise read
        everything standing on that furniture.

        That is the first argument of each fact in the delta (whether it holds, and a function's
        old value, are facts about it), each rule group's key entity for an added fact (its
        bucket), and every mentioned entity of a type an at-least-one invariant covers. An
        invariant of another kind whose predicates change scans the whole neighbourhood: then it
        is every mentioned entity.
        """
        changed = {f.predicate for f in delta.add | delta.remove}
        if any(changed & predicates for predicates in self._scanning):
            return mentioned
        names = {f.args[0] for f in delta.remove | delta.add if f.args}
        for fact in delta.add - malformed:
            for group in self.domain.rules.groups:
                hit = group.key_of(fact)
                if hit is not None:
                    names.add(hit[1][0])
        for name in mentioned - names:
            entity = known.get(name)
            if entity is not None and any(self.domain.is_subtype(entity.type, type_) for type_ in self._placed_types):
                names.add(name)
        return names

    # -- entities and schema -------------------------------------------------------------

    def _check_new_entities(
        self, entities: tuple[Entity, ...], known: Mapping[str, Entity], source: UpdateSource
    ) -> list[Issue]:
        issues: list[Issue] = []
        seen: set[str] = set()
        for entity in entities:
            if source not in SOURCES_CREATING_ENTITIES:
                issues.append(
                    Issue(
                        IssueCode.ENTITY_NOT_ALLOWED,
                        None,
                        f"cannot create {entity.name}: only perception adds entities; use entities that already exist",
                    )
                )
            if entity.type not in self.domain.types:
                issues.append(
                    Issue(
                        IssueCode.UNKNOWN_TYPE,
                        None,
                        f"{entity.name} has unknown type {entity.type}; use one of: "
                        f"{_choices(entity.type, self.domain.types)}",
                    )
                )
            if entity.name in known or entity.name in seen:
                issues.append(
                    Issue(
                        IssueCode.ENTITY_EXISTS, None, f"entity {entity.name} already exists; create each entity once"
                    )
                )
            seen.add(entity.name)
        return issues

    def _check_schema(self, fact: Fact, known: Mapping[str, Entity]) -> list[Issue]:
        schema = self.domain.predicates.get(fact.predicate)
        if schema is None:
            return [
                Issue(
                    IssueCode.UNKNOWN_PREDICATE,
                    fact,
                    f"{fact} uses unknown predicate {fact.predicate}; "
                    f"use one of: {_choices(fact.predicate, self.domain.predicates)}",
                )
            ]
        if fact.arity != schema.arity:
            return [
                Issue(
                    IssueCode.WRONG_ARITY,
                    fact,
                    f"{fact} gives {fact.predicate} {fact.arity} argument(s) but it takes "
                    f"{schema.arity}: {schema.signature()}",
                )
            ]
        issues = self._check_value(fact, schema.numeric)
        for position, (arg, param) in enumerate(zip(fact.args, schema.parameters, strict=True), start=1):
            entity = known.get(arg)
            if entity is None:
                issues.append(
                    Issue(
                        IssueCode.UNKNOWN_ENTITY,
                        fact,
                        f"{fact} names {arg}, which is not in the memory; use an existing entity",
                    )
                )
            elif not self.domain.is_subtype(entity.type, param.type):
                issues.append(
                    Issue(
                        IssueCode.TYPE_MISMATCH,
                        fact,
                        f"{fact}: {arg} is of type {entity.type}, but argument {position} of "
                        f"{fact.predicate} must be of type {param.type}",
                    )
                )
        return issues

    @staticmethod
    def _check_value(fact: Fact, numeric: bool) -> list[Issue]:
        if numeric and fact.value is None:
            tail = f"is a numeric function: give its value, e.g. (= {fact} 1)"
        elif not numeric and fact.value is not None:
            tail = f"is a predicate, not a numeric function: write ({' '.join((fact.predicate, *fact.args))})"
        elif fact.value is not None and fact.value < 0:
            tail = "is an action cost and cannot be negative"
        else:
            return []
        return [Issue(IssueCode.NUMERIC_VALUE, fact, f"{fact} {tail}")]

    def _check_one_value(self, delta: Delta, before: frozenset[Fact], malformed: set[Fact]) -> list[Issue]:
        """A numeric function has one value per arguments: a new one replaces the old (remove it)."""
        kept = {(f.predicate, f.args): f for f in before - delta.remove if f.value is not None}
        issues, seen = [], set()
        for fact in sorted((f for f in delta.add - malformed if f.value is not None), key=str):
            key = (fact.predicate, fact.args)
            old = kept.get(key)
            if (old is not None and old != fact) or key in seen:
                now = f"it is {old.value:g} now; remove {old} in the same change" if old else "give it one value"
                issues.append(self._issue(IssueCode.FUNCTIONAL, fact, f"sets a second value: {now}"))
            seen.add(key)
        return issues

    def _check_presence(self, delta: Delta, before: frozenset[Fact], malformed: set[Fact]) -> list[Issue]:
        issues = self._check_one_value(delta, before, malformed)
        both = delta.remove & delta.add
        for fact in sorted(both, key=str):
            issues.append(
                self._issue(IssueCode.REMOVE_AND_ADD, fact, "is both removed and added; keep it in one list only")
            )
        for fact in sorted(delta.remove - both - malformed, key=str):
            if fact not in before:
                issues.append(
                    self._issue(
                        IssueCode.REMOVE_ABSENT,
                        fact,
                        "does not hold now, so it cannot be removed; remove only facts that hold",
                    )
                )
        for fact in sorted(delta.add - both - malformed, key=str):
            if fact in before:
                issues.append(self._issue(IssueCode.ADD_PRESENT, fact, "already holds; do not add it again"))
        return issues

    # -- rules ---------------------------------------------------------------------------

    def _check_groups(self, before: _Index, after: _Index, added: AbstractSet[Fact]) -> list[Issue]:
        issues = []
        for group in self.domain.rules.groups:
            relevant = [f for f in added if f.predicate in group.predicates]
            reported: set[tuple[str, ...]] = set()
            for fact in sorted(relevant, key=str):
                hit = group.key_of(fact)
                assert hit is not None
                key = hit[1]
                if key in reported:
                    continue
                reported.add(key)
                new, old = _bucket(group, key, after), _bucket(group, key, before)
                if _violates(group, new) and new != old:
                    issues.append(self._group_issue(group, key, fact, new))
        return issues

    def _group_issue(self, group: RuleGroup, key: tuple[str, ...], fact: Fact, bucket: set[tuple[int, Fact]]) -> Issue:
        facts = " and ".join(self._render(f) for _, f in sorted(bucket, key=lambda e: str(e[1])))
        values = _Vars({var[1:]: value for var, value in zip(group.key, key, strict=True)}, facts=facts)
        if group.message:
            message = group.message.format_map(values)
        elif group.kind is GroupKind.FUNCTIONAL:
            message = f"at most one of these may hold, but after this update {facts}; remove one"
        else:
            message = f"these cannot hold together: {facts}; remove one"
        code = IssueCode.FUNCTIONAL if group.kind is GroupKind.FUNCTIONAL else IssueCode.EXCLUSIVE
        return Issue(code, fact, message)

    def _check_invariants(
        self,
        delta: Delta,
        mentioned: frozenset[str],
        before: _Index,
        after: _Index,
        known: Mapping[str, Entity],
        source: UpdateSource,
    ) -> list[Issue]:
        issues = []
        touched = {name: known[name] for name in mentioned if name in known}
        changed = {f.predicate for f in delta.add | delta.remove}
        losing_track = source in SOURCES_LOSING_TRACK
        for invariant in self.domain.rules.invariants:
            if invariant.kind is InvariantKind.AT_LEAST_ONE:
                issues += self._at_least_one(invariant, delta, before, after, touched, losing_track)
            elif changed & invariant.predicates():
                issues += self._requires(invariant, before, after, losing_track)
        return issues

    def _at_least_one(
        self,
        invariant: Invariant,
        delta: Delta,
        before: _Index,
        after: _Index,
        touched: Mapping[str, Entity],
        losing_track: bool,
    ) -> list[Issue]:
        issues = []
        new_names = {e.name for e in delta.new_entities}
        for name, entity in sorted(touched.items()):
            if not self.domain.is_subtype(entity.type, invariant.type):
                continue
            if _holders(invariant, after, name):
                continue
            if name not in new_names and (losing_track or not _holders(invariant, before, name)):
                # it was already missing, so this delta did not cause it; or only removals made it
                # go missing (an existing entity loses holders by removal only), which is allowed
                continue
            culprit = next((f for f in sorted(delta.remove, key=str) if name in f.args), None)
            message = (
                invariant.message.format_map(_Vars({invariant.var[1:]: name}))
                if invariant.message
                else (f"{name} must satisfy one of {', '.join(map(str, invariant.patterns))}; add one")
            )
            issues.append(Issue(IssueCode.INVARIANT, culprit, message))
        return issues

    def _requires(self, invariant: Invariant, before: _Index, after: _Index, losing_track: bool) -> list[Issue]:
        issues = []
        old = _unsatisfied(invariant, before)
        for fact, binding in sorted(_unsatisfied(invariant, after).items(), key=lambda e: str(e[0])):
            if fact in old:
                continue
            if losing_track and fact in before.facts:
                continue  # it held and was satisfied before, so a removal broke it: allowed here
            message = (
                invariant.message.format_map(_Vars({k[1:]: v for k, v in binding.items()}))
                if invariant.message
                else f"{fact} needs one of {', '.join(map(str, invariant.patterns))}"
            )
            issues.append(Issue(IssueCode.INVARIANT, fact, message))
        return issues

    # -- wording ---------------------------------------------------------------------------

    def _render(self, fact: Fact) -> str:
        return self.domain.language.fact(fact)

    def _issue(self, code: IssueCode, fact: Fact, tail: str) -> Issue:
        return Issue(code, fact, f"{fact} ({self._render(fact)}) {tail}")


def _choices(name: str, options: Iterable[str], limit: int = 12) -> str:
    options = sorted(options)
    close = difflib.get_close_matches(name, options, n=3)
    rest = [o for o in options if o not in close]
    shown = close + rest[: max(0, limit - len(close))]
    more = len(options) - len(shown)
    return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")


_SCANS_BEFORE_INDEXING = 8


class _Index:
    """Facts of a (partial) state, indexed by argument and by predicate on first use."""

    def __init__(self, facts: frozenset[Fact], *, eager: bool = False) -> None:
        self.facts = facts
        self._by_arg: dict[str, list[Fact]] = {}
        self._indexed = False  # every argument indexed, not only the names asked about so far
        self._by_predicate: dict[str, list[Fact]] | None = None
        if eager:
            self._index_every_argument()

    def about(self, name: str) -> list[Fact]:
        # a delta usually asks about two or three of the state's entities: a scan each costs less
        # than indexing every argument of every fact, until a large delta asks about many
        found = self._by_arg.get(name)
        if found is not None:
            return found
        if self._indexed:
            return []
        if len(self._by_arg) < _SCANS_BEFORE_INDEXING:
            found = self._by_arg[name] = [f for f in self.facts if name in f.args]
            return found
        self._index_every_argument()
        return self._by_arg.get(name, [])

    def _index_every_argument(self) -> None:
        by_arg: dict[str, list[Fact]] = defaultdict(list)
        for fact in self.facts:
            args = fact.args
            if len(args) == 2 and args[0] != args[1]:  # most facts: no set of names needed
                by_arg[args[0]].append(fact)
                by_arg[args[1]].append(fact)
                continue
            for arg in dict.fromkeys(args):  # a fact naming an entity twice is listed once
                by_arg[arg].append(fact)
        self._by_arg, self._indexed = dict(by_arg), True

    def of(self, predicate: str) -> list[Fact]:
        if self._by_predicate is None:
            self._by_predicate = defaultdict(list)
            for fact in self.facts:
                self._by_predicate[fact.predicate].append(fact)
        return self._by_predicate.get(predicate, [])


def _bucket(group: RuleGroup, key: tuple[str, ...], index: _Index) -> set[tuple[int, Fact]]:
    """The facts of ``group`` with this key: all of them mention the key's first entity."""
    bucket = set()
    for fact in index.about(key[0]):
        hit = group.key_of(fact)
        if hit is not None and hit[1] == key:
            bucket.add((hit[0], fact))
    return bucket


def _violates(group: RuleGroup, bucket: set[tuple[int, Fact]]) -> bool:
    if group.kind is GroupKind.FUNCTIONAL:
        return len(bucket) > 1
    return len({index for index, _ in bucket}) > 1


def _holders(invariant: Invariant, index: _Index, name: str) -> bool:
    for fact in index.about(name):
        for pattern in invariant.patterns:
            binding = pattern.match(fact)
            if binding is not None and binding.get(invariant.var) == name:
                return True
    return False


def _unsatisfied(invariant: Invariant, index: _Index) -> dict[Fact, dict[str, str]]:
    assert invariant.condition is not None
    found = {}
    for fact in index.of(invariant.condition.predicate):
        binding = invariant.condition.match(fact)
        if binding is None:
            continue
        if not any(_consistent(p.match(other), binding) for p in invariant.patterns for other in index.of(p.predicate)):
            found[fact] = binding
    return found


def _consistent(candidate: dict[str, str] | None, binding: Mapping[str, str]) -> bool:
    return candidate is not None and all(binding.get(k, v) == v for k, v in candidate.items())
