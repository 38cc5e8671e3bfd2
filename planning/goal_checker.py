"""Goals checked against the domain and the known entities: names, arity, types and size.

:func:`check_goal` reads a goal (:mod:`planning.goal_reader`), then checks the tree and collects
every problem as one sentence a model can act on when it is asked again. Only a suggestion of
close names, and counting the objects a quantifier ranges over, ever scan the entities.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import reduce
from typing import TypeAlias

from kg_memory.domain import ROOT_TYPE, Domain, PredicateSchema
from kg_memory.formula import And, Atom, Equals, Formula, Not, Or, Parameter, Quantified
from kg_memory.model import Entity
from planning._failure_reasons import a_noun
from planning.errors import PlanningError
from planning.goal_reader import GoalSyntaxError, parse_goal

Scope: TypeAlias = Mapping[str, str | None]  # "?x" -> its type (None: an unknown type, not checked further)

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")

MAX_GOAL_BINDINGS = 1_000_000
"""How many condition tests over bindings of its quantified variables to objects deciding a goal may
take (see :func:`binding_checks`). Whether a goal holds is decided binding by binding, and a planner
grounds them all, so a few short nested quantifiers over a small home would hold a worker for hours;
a million tests keep it to seconds."""
_COUNT_CAP = MAX_GOAL_BINDINGS**2  # counts saturate here: beyond it the exact figure helps nobody


@dataclass(frozen=True, slots=True)
class GoalCheck:
    """A checked goal: the formula when there are no issues, else one sentence per issue."""

    goal: Formula | None
    issues: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "issues", tuple(self.issues))
        if (self.goal is None) == (not self.issues):  # exactly one of the two
            raise PlanningError(f"a GoalCheck has a goal or issues, not both or neither: {self.goal}, {self.issues}")

    @property
    def ok(self) -> bool:
        return not self.issues


def check_goal(text: str, domain: Domain, entities: Mapping[str, Entity]) -> GoalCheck:
    """Read ``text`` and check it against ``domain`` and ``entities`` (by name; the domain's
    constants are known too). Syntax stops at its first problem; the checks report them all."""
    try:
        goal = parse_goal(text)
    except GoalSyntaxError as exc:
        return GoalCheck(None, (exc.problem,))
    checker = _Checker(domain, entities)
    checker.formula(goal, {})
    issues = tuple(dict.fromkeys(checker.issues))  # the same mistake twice is one issue
    if issues:
        return GoalCheck(None, issues)
    too_many = _too_many_bindings(binding_checks(goal, checker.count))  # types are known by now
    return GoalCheck(None, (too_many,)) if too_many else GoalCheck(goal)


def binding_checks(formula: Formula, count: Callable[[str], int]) -> int:
    """How many condition tests deciding ``formula`` may take, given ``count`` (the objects of a
    type, subtypes included): each atom, equality or truth value is one test, a quantifier repeats
    its body's for each binding of its variables (the product of their counts), and siblings add
    up. With one condition under each quantifier, that is the bindings the quantifiers range over.
    Saturates at a cap far above :data:`MAX_GOAL_BINDINGS`, so no variable list is too long to count."""
    if isinstance(formula, Quantified):
        bindings = reduce(_times, (count(v.type) for v in formula.variables), 1)
        return _times(bindings, binding_checks(formula.body, count))
    if isinstance(formula, Not):
        return binding_checks(formula.arg, count)
    if isinstance(formula, And | Or):
        return min(_COUNT_CAP, sum(binding_checks(a, count) for a in formula.args))
    return 1


def _times(a: int, b: int) -> int:
    return min(_COUNT_CAP, a * b)


def _too_many_bindings(checks: int) -> str:
    """The issue for a goal that takes more than :data:`MAX_GOAL_BINDINGS` tests ("" within it)."""
    if checks <= MAX_GOAL_BINDINGS:
        return ""
    amount = f"more than {_COUNT_CAP:,}" if checks >= _COUNT_CAP else f"{checks:,}"
    return (
        f"the goal's quantifiers range over too many objects: checking it against the memory takes {amount} "
        f"tests (the bindings of its variables to objects, times the conditions under them), more than the "
        f"limit of {MAX_GOAL_BINDINGS:,}; name the objects, or quantify over fewer variables"
    )


def _closest(word: str, options: Iterable[str], n: int | None = None, cutoff: float = 0.0) -> list[str]:
    """Options by similarity to ``word``, best first, ties by name (difflib's own order breaks
    ties backwards: cup_8, cup_7, ...); at most ``n``, none scoring below ``cutoff``."""
    matcher = difflib.SequenceMatcher(b=word)
    scored = []
    for option in options:
        matcher.set_seq1(option)
        # the cheap upper bounds first, as difflib.get_close_matches does
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
            score = matcher.ratio()
            if score >= cutoff:
                scored.append((-score, option))
    return [option for _, option in sorted(scored)[:n]]


def _ordinal(index: int) -> str:
    return _ORDINALS[index] if index < len(_ORDINALS) else f"{index + 1}th"


def _brief(formula: Quantified) -> str:
    word = "forall" if formula.universal else "exists"
    return f"({word} ({' '.join(map(str, formula.variables))}) ...)"


@dataclass(slots=True)
class _Checker:
    """Walks a formula depth first, left to right, collecting issues in that order."""

    domain: Domain
    entities: Mapping[str, Entity]
    issues: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # type -> how many objects are of it

    def formula(self, formula: Formula, scope: Scope) -> None:
        if isinstance(formula, Atom):
            self.atom(formula, scope)
        elif isinstance(formula, Equals):
            for term in (formula.left, formula.right):
                self.term(term, formula, scope, None)
        elif isinstance(formula, Not):
            self.formula(formula.arg, scope)
        elif isinstance(formula, And | Or):
            for arg in formula.args:
                self.formula(arg, scope)
        elif isinstance(formula, Quantified):
            self.formula(formula.body, self.declare(formula, scope))

    def declare(self, formula: Quantified, scope: Scope) -> Scope:
        inner = dict(scope)
        names: set[str] = set()
        for variable in formula.variables:
            if variable.name in names:
                self.issues.append(f"variable ?{variable.name} is declared twice in {_brief(formula)}")
            names.add(variable.name)
            known = variable.type in self.domain.types
            if not known:
                options = ", ".join(_closest(variable.type, self.domain.types))
                self.issues.append(f"unknown type {variable.type!r} in {_brief(formula)}; use one of: {options}")
            inner[f"?{variable.name}"] = variable.type if known else None
        return inner

    def atom(self, atom: Atom, scope: Scope) -> None:
        schema = self.domain.predicates.get(atom.predicate)
        if schema is None:
            options = ", ".join(_closest(atom.predicate, self.domain.predicates))
            self.issues.append(f"unknown predicate {atom.predicate!r} in {atom}; use one of: {options}")
        elif len(atom.terms) != schema.arity:
            self.issues.append(_arity_issue(atom, schema))
            schema = None  # which argument was meant for which parameter is anyone's guess
        for index, term in enumerate(atom.terms):
            parameter = schema.parameters[index] if schema is not None else None
            type_ = self.term(term, atom, scope, parameter)
            if parameter is not None and type_ is not None and not self.domain.is_subtype(type_, parameter.type):
                self.issues.append(
                    f"in {atom}, {term} is {a_noun(type_)} but {atom.predicate}'s {_ordinal(index)} parameter "
                    f"?{parameter.name} must be {a_noun(parameter.type)}"
                )

    def term(self, term: str, where: Formula, scope: Scope, parameter: Parameter | None) -> str | None:
        """The type of ``term`` (``None`` if it is unknown, after saying so)."""
        if term.startswith("?"):
            if term not in scope:
                self.issues.append(f"unbound variable {term} in {where}; declare it with forall or exists")
                return None
            return scope[term]
        entity = self.entities.get(term)
        if entity is not None:
            return entity.type
        constant = self.domain.constants.get(term)
        if constant is not None:
            return constant
        self.issues.append(self.unknown_entity(term, where, parameter))
        return None

    def unknown_entity(self, term: str, where: Formula, parameter: Parameter | None) -> str:
        """The issue for an unknown name, suggesting known names of the type it must have."""
        wanted = parameter.type if parameter is not None else ROOT_TYPE
        close = _closest(term, self.objects_of(wanted), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; no known {wanted} has a similar name"
        return f"unknown entity {term!r} in {where}{hint}"

    def objects_of(self, type_: str) -> list[str]:
        """The objects of ``type_`` or a subtype as a planning world has them (constants with the
        domain's types): what a quantifier over ``type_`` ranges over."""
        is_subtype, constants = self.domain.is_subtype, self.domain.constants
        names = [n for n, e in self.entities.items() if n not in constants and is_subtype(e.type, type_)]
        return names + [n for n, t in constants.items() if is_subtype(t, type_)]

    def count(self, type_: str) -> int:
        if type_ not in self.counts:
            self.counts[type_] = len(self.objects_of(type_))
        return self.counts[type_]


def _arity_issue(atom: Atom, schema: PredicateSchema) -> str:
    count = len(atom.terms)
    return f"{atom} has {count} argument{'s' * (count != 1)}; {schema.name} takes {schema.arity}: {schema.signature()}"
