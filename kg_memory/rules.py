"""Domain rules beyond PDDL typing, read from a domain's ``rules.toml``.

* ``[[functional]]``: at most one fact matching any of ``facts`` per binding of the
  ``key`` variables (default: those all patterns share): an item is in at most one place.
* ``[[exclusive]]``: facts matching *different* patterns may not hold together for the
  same binding of the shared variables (an item is not both held and placed).
* ``[[invariant]]`` with ``kind = "at_least_one"``: every entity of ``type`` is ``var``
  in at least one fact matching ``facts``; ``kind = "requires"``: a fact matching ``if``
  needs some fact matching one of ``then`` with the same binding.
* ``dynamic = [...]``: predicates that people change though no robot action does, so
  they are not inferred to be static.

``message`` templates may use the pattern variables (``{i}``) and ``{facts}``.
"""

from __future__ import annotations

import enum
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg_memory.errors import DomainError, InvalidName
from kg_memory.model import Fact, pddl_name


@dataclass(frozen=True, slots=True)
class Pattern:
    """A fact template: terms are ``?variables`` or constant names."""

    predicate: str
    terms: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Pattern:
        body = text.strip()
        if not (body.startswith("(") and body.endswith(")")) or not body[1:-1].split():
            raise ValueError(f"pattern {text!r} must look like (predicate ?var ...)")
        head, *terms = body[1:-1].split()
        return cls(pddl_name(head, "predicate"), tuple(t.lower() for t in terms))

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(t for t in self.terms if t.startswith("?"))

    def match(self, fact: Fact) -> dict[str, str] | None:
        """The variable binding under which ``fact`` matches, or ``None``."""
        if fact.predicate != self.predicate or len(fact.args) != len(self.terms):
            return None
        binding: dict[str, str] = {}
        for term, arg in zip(self.terms, fact.args, strict=True):
            if term.startswith("?"):
                if binding.setdefault(term, arg) != arg:
                    return None
            elif term != arg:
                return None
        return binding

    def __str__(self) -> str:
        return f"({' '.join((self.predicate, *self.terms))})"


class GroupKind(enum.StrEnum):
    FUNCTIONAL = "functional"
    EXCLUSIVE = "exclusive"


@dataclass(frozen=True, slots=True)
class RuleGroup:
    kind: GroupKind
    patterns: tuple[Pattern, ...]
    key: tuple[str, ...]
    message: str = ""
    # the patterns' predicates: most facts a check looks at match none, and are told so at once
    predicates: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "predicates", frozenset(p.predicate for p in self.patterns))

    def key_of(self, fact: Fact) -> tuple[int, tuple[str, ...]] | None:
        """(pattern index, key binding) of a matching fact, else ``None``."""
        if fact.predicate not in self.predicates:
            return None
        for index, pattern in enumerate(self.patterns):
            binding = pattern.match(fact)
            if binding is not None:
                return index, tuple(binding[v] for v in self.key)
        return None


class InvariantKind(enum.StrEnum):
    AT_LEAST_ONE = "at_least_one"
    REQUIRES = "requires"


@dataclass(frozen=True, slots=True, kw_only=True)
class Invariant:
    kind: InvariantKind
    patterns: tuple[Pattern, ...]
    type: str = ""
    var: str = ""
    condition: Pattern | None = None
    message: str = ""

    def predicates(self) -> frozenset[str]:
        """The predicates whose change can make this invariant true or false."""
        names = {p.predicate for p in self.patterns}
        return frozenset(names | ({self.condition.predicate} if self.condition else set()))


@dataclass(frozen=True, slots=True)
class Rules:
    groups: tuple[RuleGroup, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    dynamic: frozenset[str] = frozenset()

    def predicates(self) -> frozenset[str]:
        """Every predicate a rule mentions (for validation against the domain)."""
        names = {p.predicate for g in self.groups for p in g.patterns}
        for invariant in self.invariants:
            names |= invariant.predicates()
        return frozenset(names | self.dynamic)


def load_rules(path: Path) -> Rules:
    """Read ``rules.toml``; a missing file means no rules."""
    if not path.exists():
        return Rules()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return _rules_from(data)
    except (tomllib.TOMLDecodeError, ValueError, KeyError, TypeError, InvalidName) as exc:
        raise DomainError(path, f"bad rules: {exc}") from exc


def _rules_from(data: Mapping[str, Any]) -> Rules:
    unknown = set(data) - {"functional", "exclusive", "invariant", "dynamic"}
    if unknown:
        raise ValueError(f"unknown sections {sorted(unknown)}")
    groups = [_group(GroupKind.FUNCTIONAL, g) for g in data.get("functional", ())]
    groups += [_group(GroupKind.EXCLUSIVE, g) for g in data.get("exclusive", ())]
    invariants = tuple(_invariant(i) for i in data.get("invariant", ()))
    dynamic = frozenset(pddl_name(p, "predicate") for p in data.get("dynamic", ()))
    return Rules(tuple(groups), invariants, dynamic)


def _patterns(texts: Iterable[str]) -> tuple[Pattern, ...]:
    patterns = tuple(Pattern.parse(t) for t in texts)
    if not patterns:
        raise ValueError("a rule needs at least one fact pattern")
    return patterns


def _group(kind: GroupKind, entry: Mapping[str, Any]) -> RuleGroup:
    patterns = _patterns(entry["facts"])
    shared = frozenset.intersection(*(p.variables for p in patterns))
    if not shared:
        raise ValueError(f"{kind} rule {entry['facts']} has no variable shared by all its patterns")
    if kind is GroupKind.EXCLUSIVE and len(patterns) < 2:
        raise ValueError(f"exclusive rule {entry['facts']} needs two or more patterns")
    if "key" in entry:
        key = tuple(str(v).lower() for v in entry["key"])
        if not key or not set(key) <= shared:
            raise ValueError(f"key {entry['key']} of rule {entry['facts']} must be variables of every pattern")
    else:
        key = tuple(dict.fromkeys(t for t in patterns[0].terms if t in shared))
    if key == tuple(dict.fromkeys(patterns[0].terms)) and len(patterns) == 1:
        raise ValueError(f"rule {entry['facts']} needs a key: the variables that determine the rest")
    return RuleGroup(kind, patterns, key, entry.get("message", ""))


def _invariant(entry: Mapping[str, Any]) -> Invariant:
    kind = InvariantKind(entry["kind"])
    patterns = _patterns(entry["then"] if kind is InvariantKind.REQUIRES else entry["facts"])
    message = entry.get("message", "")
    if kind is InvariantKind.AT_LEAST_ONE:
        var = entry["var"]
        if any(var not in p.variables for p in patterns):
            raise ValueError(f"invariant variable {var} must appear in every pattern of {entry['facts']}")
        return Invariant(kind=kind, patterns=patterns, type=pddl_name(entry["type"], "type"), var=var, message=message)
    condition = Pattern.parse(entry["if"])
    if any(not (p.variables & condition.variables) for p in patterns):
        raise ValueError(f"each 'then' pattern of {entry['if']} must share a variable with it")
    return Invariant(kind=kind, patterns=patterns, condition=condition, message=message)
