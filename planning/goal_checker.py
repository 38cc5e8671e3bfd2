"""Goals checked against the domain and the known entities: names, arity and types.

:func:`check_goal` reads a goal (:mod:`planning.goal_reader`), then checks the tree and collects
every problem as one sentence a model can act on when it is asked again; only a suggestion of
close names ever scans the entities.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from kg_memory.domain import ROOT_TYPE, Domain, PredicateSchema
from kg_memory.formula import And, Atom, Equals, Formula, Not, Or, Parameter, Quantified
from kg_memory.model import Entity
from planning._failure_reasons import a_noun
from planning.errors import PlanningError
from planning.goal_reader import GoalSyntaxError, parse_goal

Scope: TypeAlias = Mapping[str, str | None]  # "?x" -> its type (None: an unknown type, not checked further)

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")


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
    return GoalCheck(None, issues) if issues else GoalCheck(goal)


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
        is_subtype = self.domain.is_subtype
        names = [n for n, e in self.entities.items() if is_subtype(e.type, wanted)]
        names += [n for n, t in self.domain.constants.items() if is_subtype(t, wanted) and n not in self.entities]
        close = _closest(term, names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; no known {wanted} has a similar name"
        return f"unknown entity {term!r} in {where}{hint}"


def _arity_issue(atom: Atom, schema: PredicateSchema) -> str:
    count = len(atom.terms)
    return f"{atom} has {count} argument{'s' * (count != 1)}; {schema.name} takes {schema.arity}: {schema.signature()}"
