"""Goals from a language model, read and checked against the domain and the known entities.

A small s-expression reader turns the goal text into a :mod:`kg_memory.formula` tree:
unified-planning's parser is slow and not thread-safe, and a goal is a few dozen tokens.
:func:`check_goal` then checks the tree and collects every problem as one sentence a model
can act on when it is asked again; only a suggestion of close names ever scans the entities.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from kg_memory.domain import ROOT_TYPE, Domain, PredicateSchema
from kg_memory.formula import And, Atom, Equals, Formula, Not, Or, Parameter, Quantified, Truth
from kg_memory.model import Entity
from planning.errors import PlanningError

SExpr: TypeAlias = "str | list[SExpr]"
Scope: TypeAlias = Mapping[str, str | None]  # "?x" -> its type (None: an unknown type, not checked further)

_TOKEN = re.compile(r"[()]|[^\s()]+")
_COMMENT = re.compile(r";[^\n]*")
_FENCE_OPEN = re.compile(r"^```[A-Za-z0-9_+-]*")
_CLIP = 80
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
# Other PDDL heads a model may reach for; naming them beats "unknown predicate 'when'".
_UNSUPPORTED = frozenset({"when", "either", "preference", "<", ">", "<=", ">=", "increase", "decrease"})


class GoalSyntaxError(PlanningError):
    """A goal text that does not read as a formula: ``problem`` says where, ``text`` is the input."""

    def __init__(self, text: str, problem: str) -> None:
        self.text = text
        self.problem = problem
        super().__init__(f"goal {_clip(text)!r}: {problem}")


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


def parse_goal(text: str) -> Formula:
    """The formula ``text`` writes, without looking at any domain; raises :class:`GoalSyntaxError`.

    PDDL syntax, case-insensitive: atoms, ``=``, ``not``, ``and``, ``or``, ``imply`` (read as
    ``(or (not a) b)``), ``forall`` and ``exists`` over typed variable lists (untyped ones are
    ``object``), optionally wrapped in ``(:goal ...)`` or a Markdown code fence.
    """
    form = _read(text)
    if isinstance(form, list) and form[:1] == [":goal"]:
        if len(form) == 1:
            raise GoalSyntaxError(text, "empty goal")
        if len(form) > 2:
            raise GoalSyntaxError(text, f"(:goal ...) holds one formula; join several with (and ...) in {_show(form)}")
        form = form[1]
    return _Reader(text).formula(form)


# -- reading --------------------------------------------------------------------------------


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _CLIP else flat[: _CLIP - 3] + "..."


def _show(form: SExpr) -> str:
    if isinstance(form, str):
        return form
    return _clip(f"({' '.join(_show(f) for f in form)})")


def _unfence(text: str) -> str:
    """The text inside a Markdown code fence (models add them unasked), without comments."""
    body = text.strip()
    if body.startswith("```"):
        body = _FENCE_OPEN.sub("", body, count=1)
        body = body.removesuffix("```")
    return _COMMENT.sub("", body).strip()


def _read(text: str) -> SExpr:
    """The one s-expression of ``text``; anything before or after it is an error."""
    body = _unfence(text)
    if not body:
        raise GoalSyntaxError(text, "empty goal")
    if not body.startswith("("):
        raise GoalSyntaxError(
            text, f"expected a formula in parentheses, got {_clip(body)!r}; answer with the PDDL goal only"
        )
    stack: list[list[SExpr]] = [[]]
    for token in _TOKEN.findall(body):
        if token == "(":
            stack.append([])
        elif token != ")":
            stack[-1].append(token.lower())
        elif len(stack) == 1:
            read = " ".join(_show(f) for f in stack[0])
            raise GoalSyntaxError(text, f"unbalanced parentheses: an extra ')' after {_clip(read)}")
        else:
            closed = stack.pop()
            stack[-1].append(closed)
    if len(stack) > 1:
        open_ = len(stack) - 1
        raise GoalSyntaxError(text, f"unbalanced parentheses: {open_} '(' never closed in {_clip(body)}")
    forms = stack[0]
    if len(forms) > 1:
        rest = " ".join(_show(f) for f in forms[1:])
        raise GoalSyntaxError(
            text, f"unexpected text after the goal: {_clip(rest)}; write one formula (join conditions with (and ...))"
        )
    return forms[0]


@dataclass(frozen=True, slots=True)
class _Reader:
    """S-expressions to formulas; ``text`` is only there to put into errors."""

    text: str

    def fail(self, problem: str) -> GoalSyntaxError:
        return GoalSyntaxError(self.text, problem)

    def formula(self, form: SExpr) -> Formula:
        if isinstance(form, str):
            raise self.fail(f"expected a formula in parentheses, got {form}")
        if not form:
            raise self.fail("expected a formula, got ()")
        head = form[0]
        if not isinstance(head, str):
            raise self.fail(f"expected a predicate or connective, got {_show(head)} at the start of {_show(form)}")
        connective = _CONNECTIVES.get(head)
        if connective is not None:
            return connective(self, form)
        if head in _UNSUPPORTED:
            raise self.fail(f"{head} is not supported in goals, in {_show(form)}")
        if head.startswith(("?", ":", "-")):
            raise self.fail(f"expected a formula, got {_show(form)}: it starts with {head}, not a predicate")
        return Atom(head, tuple(self.term(arg, form) for arg in form[1:]))

    def term(self, form: SExpr, where: list[SExpr]) -> str:
        if not isinstance(form, str):
            raise self.fail(f"expected an entity or ?variable, got {_show(form)} in {_show(where)}")
        if form == "?":
            raise self.fail(f"expected a variable name after '?' in {_show(where)}")
        return form

    def args(self, form: list[SExpr], count: int) -> list[SExpr]:
        if len(form) - 1 != count:
            head = form[0]
            raise self.fail(f"{head} takes {count} argument{'s' * (count != 1)}, got {len(form) - 1} in {_show(form)}")
        return form[1:]

    def junction(self, form: list[SExpr]) -> Formula:
        universal = form[0] == "and"
        if len(form) == 1:
            return Truth(universal)  # (and) is true, (or) false, as Truth prints them
        parts = tuple(self.formula(f) for f in form[1:])
        return And(parts) if universal else Or(parts)

    def negation(self, form: list[SExpr]) -> Formula:
        return Not(self.formula(self.args(form, 1)[0]))

    def implication(self, form: list[SExpr]) -> Formula:
        premise, conclusion = self.args(form, 2)
        return Or((Not(self.formula(premise)), self.formula(conclusion)))

    def equality(self, form: list[SExpr]) -> Formula:
        left, right = self.args(form, 2)
        return Equals(self.term(left, form), self.term(right, form))

    def quantified(self, form: list[SExpr]) -> Formula:
        declared, body = self.args(form, 2)
        if isinstance(declared, str):
            raise self.fail(f"{form[0]} needs a variable list like (?x - type), got {declared} in {_show(form)}")
        return Quantified(form[0] == "forall", self.variables(declared, form), self.formula(body))

    def variables(self, declared: list[SExpr], where: list[SExpr]) -> tuple[Parameter, ...]:
        """A PDDL typed list, ``?x ?y - t ?z``: each run of variables takes the type after its
        ``-``; a run without one is ``object``."""
        found: list[Parameter] = []
        pending: list[str] = []
        tokens = iter(declared)
        for token in tokens:
            if token == "-":
                type_ = next(tokens, None)
                if not pending or not isinstance(type_, str) or type_.startswith("?"):
                    raise self.fail(f"expected ?variables - type in {_show(where)}")
                found += (Parameter(v, type_) for v in pending)
                pending = []
            elif isinstance(token, str) and token.startswith("?") and len(token) > 1:
                pending.append(token[1:])
            else:
                raise self.fail(f"expected a variable like ?x, got {_show(token)} in {_show(where)}")
        found += (Parameter(v, ROOT_TYPE) for v in pending)
        if not found:
            raise self.fail(f"{where[0]} declares no variables in {_show(where)}")
        return tuple(found)


_CONNECTIVES: dict[str, Callable[[_Reader, list[SExpr]], Formula]] = {
    "and": _Reader.junction,
    "or": _Reader.junction,
    "not": _Reader.negation,
    "imply": _Reader.implication,
    "=": _Reader.equality,
    "forall": _Reader.quantified,
    "exists": _Reader.quantified,
}


# -- checking -------------------------------------------------------------------------------


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


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


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
                    f"in {atom}, {term} is {_a(type_)} but {atom.predicate}'s {_ordinal(index)} parameter "
                    f"?{parameter.name} must be {_a(parameter.type)}"
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
