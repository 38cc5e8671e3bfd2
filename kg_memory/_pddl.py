"""PDDL domains read through unified-planning into our schema, and the spelling planners get."""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_memory.errors import DomainError
from kg_memory.formula import (
    TRUE,
    ActionSchema,
    And,
    Atom,
    Cost,
    Effect,
    Equals,
    Formula,
    Not,
    Or,
    Parameter,
    Quantified,
    Truth,
)
from kg_memory.sexpr import tokens
from kg_memory.up_environment import pddl_reading_environment

Params = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedDomain:
    name: str
    types: dict[str, str | None]
    predicates: dict[str, Params]
    constants: dict[str, str]
    actions: dict[str, ActionSchema]
    functions: dict[str, Params]  # static numeric functions (action costs), without total-cost
    costs: bool  # the domain declares total-cost: plans are judged by it, not by their length
    planner_text: str  # the domain in the spelling every planner parses (see normalise_pddl)


# Bump when ParsedDomain or the formula classes change shape: old cache entries are then ignored.
_CACHE_FORMAT = 2
TOTAL_COST = "total-cost"
# Fast Downward reads only integer costs ("Fractional numbers are not supported"): planners get
# every cost in thousandths, so a distance of 4.5 m is 4500. Our evaluator reports real units.
COST_SCALE = 1000


def parse_pddl_domain(path: Path, text: str) -> ParsedDomain:
    """The schema of a PDDL domain. Parsing needs unified-planning, whose import alone takes seconds,
    so a parse is cached by the text's hash (``$XDG_CACHE_HOME/l3mp/pddl``): a command that opens a
    memory whose domain was parsed before starts fast. The cache is only ever a shortcut: an entry
    that cannot be read is parsed again."""
    cache = _cache_file(text)
    try:
        with cache.open("rb") as file:
            cached = pickle.load(file)
        if isinstance(cached, ParsedDomain):
            return cached
    except Exception:  # missing, truncated, or from another version: parse again
        pass
    parsed = _parse(path, text)
    _store(cache, parsed)
    return parsed


def _cache_file(text: str) -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "l3mp" / "pddl"
    version = f"{_CACHE_FORMAT}|{sys.version_info[:2]}|{text}"
    return root / f"{hashlib.sha256(version.encode()).hexdigest()}.pickle"


def _store(cache: Path, parsed: ParsedDomain) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cache.parent, delete=False, suffix=".tmp") as file:
            pickle.dump(parsed, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(file.name, cache)  # whole or not at all, even with racing writers
    except OSError:  # a read-only home: no cache, no harm
        pass


def _parse(path: Path, text: str) -> ParsedDomain:
    # Heavy import, kept off module import.
    from unified_planning.io import PDDLReader

    with pddl_reading_environment() as environment:
        try:
            problem = PDDLReader(environment=environment).parse_problem_string(text)
        except Exception as exc:  # the reader raises SyntaxError, ValueError, UPException, pyparsing errors...
            raise DomainError(path, f"not a valid PDDL domain: {_one_line(exc)}") from exc
    try:
        return _schema_of(problem, normalise_pddl(text))
    except ValueError as exc:
        raise DomainError(path, str(exc)) from exc


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _schema_of(problem: Any, planner_text: str) -> ParsedDomain:
    types: dict[str, str | None] = {"object": None}
    for user_type in problem.user_types:
        father = user_type.father
        types[user_type.name.lower()] = father.name.lower() if father is not None else "object"
    predicates: dict[str, Params] = {}
    functions: dict[str, Params] = {}
    costs = False
    for fluent in problem.fluents:
        signature = tuple((p.name, _type_name(p.type)) for p in fluent.signature)
        if fluent.type.is_bool_type():
            predicates[fluent.name.lower()] = signature
        elif fluent.name.lower() == TOTAL_COST and not signature:
            costs = True
        else:
            functions[fluent.name.lower()] = signature
    clash = sorted(set(predicates) & set(functions))
    if clash:
        raise ValueError(f"{', '.join(clash)} names both a predicate and a function")
    constants = {obj.name.lower(): _type_name(obj.type) for obj in problem.all_objects}
    actions = {action.name.lower(): _action(action, functions) for action in problem.actions}
    return ParsedDomain(
        name=problem.name.lower(),
        types=types,
        predicates=predicates,
        constants=constants,
        actions=actions,
        functions=functions,
        costs=costs,
        planner_text=planner_text,
    )


def _type_name(type_: Any) -> str:
    return type_.name.lower() if type_.is_user_type() else "object"


def _action(action: Any, functions: dict[str, Params]) -> ActionSchema:
    if not hasattr(action, "effects"):
        raise ValueError(f"action {action.name} is not an instantaneous action")
    costs = [e for e in action.effects if e.is_increase() and e.fluent.fluent().name.lower() == TOTAL_COST]
    preconditions = [_formula(p) for p in action.preconditions]
    precondition = (
        preconditions[0] if len(preconditions) == 1 else (And(tuple(preconditions)) if preconditions else TRUE)
    )
    return ActionSchema(
        name=action.name.lower(),
        parameters=tuple(_parameter(p) for p in action.parameters),
        precondition=precondition,
        effects=tuple(_effect(e) for e in action.effects if not any(e is c for c in costs)),
        cost=_cost(action.name, costs, functions),
    )


def _cost(action: str, increases: list[Any], functions: dict[str, Params]) -> Cost:
    """IPC action costs: ``(increase (total-cost) N)`` with N a non-negative number or a static
    function of the action's parameters. Anything else is a numeric fluent we do not plan with."""
    constant, terms = 0.0, []
    for effect in increases:
        value = effect.value
        if effect.is_conditional():
            raise ValueError(f"action {action}: a conditional cost is a numeric fluent l3mp does not support")
        if value.is_int_constant() or value.is_real_constant():
            number = float(value.constant_value())
            if number < 0:
                raise ValueError(f"action {action}: cost {number:g} is negative; IPC action costs are >= 0")
            constant += number
        elif value.is_fluent_exp() and value.fluent().name.lower() in functions:
            terms.append(_atom(value))
        else:
            raise ValueError(f"action {action}: cost {value} is not a number or a static function")
    return Cost(constant, tuple(terms))


def _parameter(param: Any) -> Parameter:
    return Parameter(param.name.lower(), _type_name(param.type))


def _effect(effect: Any) -> Effect:
    if not effect.fluent.is_fluent_exp() or not effect.value.is_bool_constant() or not effect.is_assignment():
        raise ValueError(f"effect {effect} is not a predicate set true or false")
    return Effect(
        atom=_atom(effect.fluent),
        positive=effect.value.bool_constant_value(),
        condition=_formula(effect.condition) if effect.is_conditional() else TRUE,
        forall=tuple(_parameter(v) for v in effect.forall),
    )


def _atom(node: Any) -> Atom:
    return Atom(node.fluent().name.lower(), tuple(_term(a) for a in node.args))


def _term(node: Any) -> str:
    if node.is_parameter_exp():
        return f"?{node.parameter().name.lower()}"
    if node.is_variable_exp():
        return f"?{node.variable().name.lower()}"
    if node.is_object_exp():
        return f"{node.object().name.lower()}"
    raise ValueError(f"unsupported term {node}")


def _formula(node: Any) -> Formula:
    """unified-planning's expression tree → our formula (implications become disjunctions)."""
    if node.is_fluent_exp():
        return _atom(node)
    if node.is_bool_constant():
        return Truth(node.bool_constant_value())
    if node.is_not():
        return Not(_formula(node.arg(0)))
    if node.is_and():
        return And(tuple(_formula(a) for a in node.args))
    if node.is_or():
        return Or(tuple(_formula(a) for a in node.args))
    if node.is_implies():
        return Or((Not(_formula(node.arg(0))), _formula(node.arg(1))))
    if node.is_equals():
        return Equals(_term(node.arg(0)), _term(node.arg(1)))
    if node.is_forall() or node.is_exists():
        variables = tuple(_parameter(v) for v in node.variables())
        return Quantified(node.is_forall(), variables, _formula(node.arg(0)))
    raise ValueError(f"unsupported expression {node}")


# -- the planners' spelling -------------------------------------------------------------------

_DASH_TYPE = re.compile(r"^-([a-z].*)$")


def normalise_pddl(text: str) -> str:
    """The domain as every planner reads it: comments dropped, lower case, one space between
    tokens, ``?x -type`` (which unified-planning reads and Fast Downward's parser refuses) split
    into ``?x - type``, and constant action costs in :data:`COST_SCALE` units as the problems
    write theirs. Names stay as they are, so plans read back in the domain's own words."""
    spelled: list[str] = []
    for token in tokens(text):
        dashed = _DASH_TYPE.match(token)
        spelled += ["-", dashed.group(1)] if dashed else [token]
    for i in range(len(spelled) - 5):
        # ( increase ( total-cost ) N ): scale N when it is a number
        if spelled[i : i + 5] == ["(", "increase", "(", TOTAL_COST, ")"] and _is_number(spelled[i + 5]):
            spelled[i + 5] = scaled_cost(float(spelled[i + 5]))
    out = " ".join(spelled)
    return out.replace("( ", "(").replace(" )", ")") + "\n"


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def scaled_cost(value: float) -> str:
    """A cost in the planners' integer units."""
    return str(round(value * COST_SCALE))
