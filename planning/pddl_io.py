"""PDDL files from outside: a domain and a problem (an IPC benchmark, say) read into our model.

A problem becomes what a memory holds: its objects as entities, its ``:init`` as facts, and
its ``:goal`` as a formula. unified-planning's reader is the authority on what a file means
(names, types, defaults); a small s-expression pass before it names the PDDL features we do
not handle (numeric fluents beyond IPC action costs, durative actions, ``either`` types,
``oneof``...), since the reader would otherwise fail with a pyparsing position or, worse, read them
into something else. Action costs (``:action-costs``: a ``total-cost`` increased by constants or by
static functions, and ``(:metric minimize (total-cost))``) are read: the functions' values in
``:init`` become numeric facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_memory import UP_LOCK, Domain, Entity, Fact, InvalidName, InvalidValue
from kg_memory.domain import ROOT_TYPE, domain_from_pddl
from kg_memory.formula import Formula
from kg_memory.sexpr import SExpr, UnbalancedParentheses, clip, nesting, read_forms, write
from kg_memory.up_environment import pddl_reading_environment
from planning.errors import PlanningError
from planning.goal_reader import MAX_GOAL_DEPTH, GoalSyntaxError, parse_goal

_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
# A problem's goal may nest as deep as any goal, inside (define (:goal ...)); domains nest far less.
# Deeper text is refused before anything walks it recursively.
MAX_PDDL_DEPTH = MAX_GOAL_DEPTH + 16
# List heads that mean a feature outside typed STRIPS/ADL over predicates, wherever they occur.
_FEATURES = {
    ":functions": "numeric fluents",
    ":durative-action": "durative actions",
    ":derived": "derived predicates",
    "either": "either types",
    "oneof": "non-deterministic effects",
    "probabilistic": "probabilistic effects",
    "preference": "preferences",
    ":constraints": "state-trajectory constraints",
    ":metric": "a plan metric",
    "decrease": "numeric effects",
    "assign": "numeric effects",
    "scale-up": "numeric effects",
    "scale-down": "numeric effects",
}
SUPPORTED = "typed or untyped STRIPS/ADL over predicates, with IPC action costs"
_TOTAL_COST = "total-cost"


class PddlError(PlanningError):
    """A PDDL file that cannot be read: ``source`` names the file, ``problem`` says why."""

    def __init__(self, source: Path | str, problem: str) -> None:
        self.source = str(source)
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class UnsupportedFeature(PddlError):
    """A PDDL feature l3mp does not handle; ``feature`` names it and ``where`` shows it."""

    def __init__(self, source: Path | str, feature: str, where: str) -> None:
        self.feature = feature
        self.where = where
        super().__init__(source, f"uses {feature}, which l3mp does not support (it reads {SUPPORTED}): {where}")


@dataclass(frozen=True, slots=True, kw_only=True)
class PddlProblem:
    """A problem as a memory holds it: entities (the domain's constants are left out, a memory
    has them from its domain), the true atoms of ``:init``, and the goal."""

    name: str
    domain: str
    entities: tuple[Entity, ...]
    facts: frozenset[Fact]
    goal: Formula
    goal_text: str  # the goal as PDDL, e.g. for ``l3mp plan --goal``


def read_text(path: Path | str, what: str = "PDDL") -> str:
    """A file's text, or :class:`PddlError` naming the path."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise PddlError(path, f"no such {what} file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise PddlError(path, f"cannot read the {what} file: {exc}") from exc


def load_domain_file(path: Path | str) -> Domain:
    """A bare domain file (no rules or English templates beside it) as a :class:`Domain`.

    Raises :class:`UnsupportedFeature` naming a feature we do not handle, :class:`PddlError`
    for a missing file and :class:`kg_memory.DomainError` for a malformed one.
    """
    text = read_text(path, "domain")
    check_supported(text, path)
    return domain_from_pddl(path, text)


def check_supported(text: str, source: Path | str = "<pddl>") -> None:
    """Raise :class:`UnsupportedFeature` for the first feature in ``text`` we do not handle."""
    _check_form(read_sexpr(text, source), source)


def _check_form(form: list[SExpr], source: Path | str, functions: frozenset[str] = frozenset()) -> None:
    functions = functions | _cost_functions(form, source)
    for section in _sections(form):
        if section[:1] == [":functions"] or _is_cost_metric(section):
            continue  # checked by _cost_functions, and the metric is the one action costs allow
        for item in _lists(section):
            if _is_cost_increase(item):
                continue
            if _is_feature(item):
                raise UnsupportedFeature(source, _FEATURES[str(item[0])], _show(item))
        if section[:1] == [":init"]:
            _check_init(section[1:], source, functions)


def _is_cost_increase(form: list[SExpr]) -> bool:
    """``(increase (total-cost) X)``, X a number or a function term (checked when the domain parses)."""
    return len(form) == 3 and form[0] == "increase" and form[1] == [_TOTAL_COST]


def _is_cost_metric(section: list[SExpr]) -> bool:
    return section == [":metric", "minimize", [_TOTAL_COST]]


def _cost_functions(form: list[SExpr], source: Path | str) -> frozenset[str]:
    """The functions a domain declares, if all are action costs: total-cost, and functions read
    only as the amount of a total-cost increase. Any other use is a numeric fluent we refuse."""
    declared = [s for s in _sections(form) if s[:1] == [":functions"]]
    if not declared:
        return frozenset()
    names = {str(item[0]) for section in declared for item in section[1:] if isinstance(item, list) and item}
    amounts = [i[2] for i in _lists(form) if _is_cost_increase(i) and isinstance(i[2], list)]
    as_cost = sum(1 for a in amounts if a and a[0] in names)
    used = [i for s in _sections(form) if s[:1] != [":functions"] for i in _lists(s)]
    anywhere = sum(1 for i in used if i and i[0] in names and i != [_TOTAL_COST])
    if anywhere != as_cost or any(i[0] == "increase" and not _is_cost_increase(i) for i in _lists(form) if i):
        raise UnsupportedFeature(source, "numeric fluents", _show(declared[0]))
    return frozenset(names)


def _is_feature(form: list[SExpr]) -> bool:
    head = form[0] if form and isinstance(form[0], str) else ""
    if head not in _FEATURES:
        return False
    # Keywords and either are unambiguous. An operator such as (increase (fuel ?t) 1) takes a
    # formula or term as an argument, which no atom or predicate declaration does: a predicate
    # that happens to be named "increase" is no numeric effect.
    return head.startswith(":") or head == "either" or any(isinstance(a, list) for a in form[1:])


def _check_init(atoms: list[SExpr], source: Path | str, functions: frozenset[str]) -> None:
    for atom in atoms:
        if not isinstance(atom, list) or not atom:
            continue
        if atom[0] == "=" and not _is_cost_value(atom, functions):
            raise UnsupportedFeature(source, "numeric fluents", _show(atom))
        # (at 10 (p)) is a timed initial literal; (at truck1 depot0) is an ordinary atom
        if atom[0] == "at" and len(atom) == 3 and isinstance(atom[1], str) and _NUMBER.match(atom[1]):
            raise UnsupportedFeature(source, "timed initial literals", _show(atom))


def _is_cost_value(atom: list[SExpr], functions: frozenset[str]) -> bool:
    """``(= (f a b) N)`` for one of the domain's cost functions."""
    term = atom[1] if len(atom) == 3 else None
    return isinstance(term, list) and bool(term) and term[0] in functions and isinstance(atom[2], str)


def read_problem(domain: Domain, text: str, source: Path | str = "<problem>") -> PddlProblem:
    """Read a problem of ``domain``: raises :class:`UnsupportedFeature` or :class:`PddlError`."""
    form = read_sexpr(text, source)
    _check_form(form, source, domain.functions | ({_TOTAL_COST} if domain.costs else set()))
    name, domain_name = _header(form, source)
    if domain_name != domain.name:
        raise PddlError(source, f"it is a problem of domain {domain_name!r}, not of {domain.name!r} ({domain.path})")
    with UP_LOCK:
        problem = parse_up_problem(domain.pddl, text, source)
        objects = [(o.name.lower(), _type_name(o.type)) for o in problem.all_objects]
        atoms: list[tuple[str, tuple[str, ...], float | None]] = []
        for node, value in problem.explicit_initial_values.items():
            fluent = node.fluent().name.lower()
            args = tuple(a.object().name.lower() for a in node.args)
            if value.is_bool_constant():
                if value.bool_constant_value():
                    atoms.append((fluent, args, None))
            elif fluent in domain.functions and (value.is_int_constant() or value.is_real_constant()):
                atoms.append((fluent, args, float(value.constant_value())))
            elif fluent != _TOTAL_COST:  # total-cost starts at 0 in every problem we write
                raise UnsupportedFeature(source, "numeric fluents", f"{node} = {value}")
    try:
        entities = tuple(Entity(n, t, n) for n, t in objects if n not in domain.constants)
        facts = frozenset(Fact(p, args, v) for p, args, v in atoms)
    except (InvalidName, InvalidValue) as exc:
        raise PddlError(source, f"a name l3mp cannot store: {exc}") from exc
    goal = _goal(form, source)
    return PddlProblem(name=name, domain=domain_name, entities=entities, facts=facts, goal=goal, goal_text=str(goal))


def goal_of(text: str, source: Path | str = "<problem>") -> Formula:
    """A problem's ``:goal`` as a formula, read without its domain (for ``l3mp pddl goal``)."""
    form = read_sexpr(text, source)
    _header(form, source)
    return _goal(form, source)


def _goal(form: list[SExpr], source: Path | str) -> Formula:
    goals = [s for s in _sections(form) if s[:1] == [":goal"]]
    if len(goals) != 1 or len(goals[0]) != 2:
        raise PddlError(source, "a problem needs exactly one (:goal FORMULA)")
    try:
        return parse_goal(write(goals[0][1]))
    except GoalSyntaxError as exc:
        raise PddlError(source, f"its goal does not read: {exc.problem}") from exc


def parse_up_problem(domain_text: str, problem_text: str, source: Path | str = "<problem>") -> Any:
    """unified-planning's ``Problem`` for the two texts; call it holding ``UP_LOCK``, which
    the caller needs anyway to use the problem it gets."""
    from unified_planning.io import PDDLReader

    with pddl_reading_environment() as environment:
        try:
            return PDDLReader(environment=environment).parse_problem_string(domain_text, problem_text)
        except Exception as exc:  # SyntaxError, UPException, pyparsing errors...
            raise PddlError(source, f"unified-planning cannot read it: {' '.join(str(exc).split())}") from exc


def _type_name(type_: Any) -> str:
    return type_.name.lower() if type_.is_user_type() else ROOT_TYPE


# -- s-expressions --------------------------------------------------------------------------


def read_sexpr(text: str, source: Path | str = "<pddl>") -> list[SExpr]:
    """The one top-level form of a PDDL file, lower-cased, comments dropped."""
    if nesting(text) > MAX_PDDL_DEPTH:
        raise PddlError(source, f"it nests parentheses more than {MAX_PDDL_DEPTH} deep")
    try:
        forms = read_forms(text)
    except UnbalancedParentheses as exc:
        raise PddlError(source, exc.problem) from exc
    if len(forms) != 1 or not isinstance(forms[0], list) or forms[0][:1] != ["define"]:
        raise PddlError(source, "expected one (define ...) form")
    return forms[0]


def _header(form: list[SExpr], source: Path | str) -> tuple[str, str]:
    """(name, domain name) of ``(define (problem NAME) (:domain DOMAIN) ...)``."""
    head = form[1] if len(form) > 1 else None
    if not (isinstance(head, list) and len(head) == 2 and head[0] == "problem" and isinstance(head[1], str)):
        raise PddlError(source, f"expected (define (problem NAME) ...), got {_show(form)}")
    for section in _sections(form):
        if section[:1] == [":domain"] and len(section) == 2 and isinstance(section[1], str):
            return head[1], section[1]
    raise PddlError(source, "the problem names no (:domain NAME)")


def _sections(form: list[SExpr]) -> Iterator[list[SExpr]]:
    for item in form[1:]:
        if isinstance(item, list):
            yield item


def _lists(form: list[SExpr]) -> Iterator[list[SExpr]]:
    """``form`` and every list inside it, depth first."""
    yield form
    for item in form:
        if isinstance(item, list):
            yield from _lists(item)


def _show(form: SExpr) -> str:
    return clip(write(form))
