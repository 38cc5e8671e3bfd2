"""The one place that touches unified-planning's PDDL reader."""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_memory.errors import DomainError
from kg_memory.formula import (
    TRUE,
    ActionSchema,
    And,
    Atom,
    Effect,
    Equals,
    Formula,
    Not,
    Or,
    Parameter,
    Quantified,
    Truth,
)

Params = tuple[tuple[str, str], ...]
# unified-planning keeps global, unsynchronized state (its environment's type and
# expression managers): every use of it in this process holds this lock.
UP_LOCK = threading.RLock()


@dataclass(frozen=True, slots=True)
class ParsedDomain:
    name: str
    types: dict[str, str | None]
    predicates: dict[str, Params]
    constants: dict[str, str]
    actions: dict[str, ActionSchema]


# Bump when ParsedDomain or the formula classes change shape: old cache entries are then ignored.
_CACHE_FORMAT = 1


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
    # Heavy imports, kept off module import.
    from unified_planning.environment import get_environment
    from unified_planning.io import PDDLReader

    # PDDL lets a type and a predicate share a name (IPC's schedule domain does), which
    # unified-planning rejects unless error_used_name is off. A private Environment would
    # be cleaner, but its reader builds forall variables in the global one, so we switch
    # the flag on the global environment for the parse and restore it.
    with UP_LOCK:  # get_environment() itself races: two threads can each create "the" global one
        environment = get_environment()
        previous = environment.error_used_name
        environment.error_used_name = False
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=r"Name .* already defined", category=UserWarning)
                # unified-planning 1.3 still calls pyparsing's camelCase API, deprecated in 3.3
                warnings.filterwarnings("ignore", category=DeprecationWarning)
                problem = PDDLReader(environment=environment).parse_problem_string(text)
        except Exception as exc:  # the reader raises SyntaxError, ValueError, UPException, pyparsing errors...
            raise DomainError(path, f"not a valid PDDL domain: {_one_line(exc)}") from exc
        finally:
            environment.error_used_name = previous
    try:
        return _schema_of(problem)
    except ValueError as exc:
        raise DomainError(path, str(exc)) from exc


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _schema_of(problem: Any) -> ParsedDomain:
    types: dict[str, str | None] = {"object": None}
    for user_type in problem.user_types:
        father = user_type.father
        types[user_type.name.lower()] = father.name.lower() if father is not None else "object"
    predicates: dict[str, Params] = {}
    for fluent in problem.fluents:
        if not fluent.type.is_bool_type():
            raise ValueError(f"function {fluent.name} is numeric; only predicates are supported")
        predicates[fluent.name.lower()] = tuple((p.name, _type_name(p.type)) for p in fluent.signature)
    constants = {obj.name.lower(): _type_name(obj.type) for obj in problem.all_objects}
    actions = {action.name.lower(): _action(action) for action in problem.actions}
    return ParsedDomain(problem.name.lower(), types, predicates, constants, actions)


def _type_name(type_: Any) -> str:
    return type_.name.lower() if type_.is_user_type() else "object"


def _action(action: Any) -> ActionSchema:
    if not hasattr(action, "effects"):
        raise ValueError(f"action {action.name} is not an instantaneous action")
    preconditions = [_formula(p) for p in action.preconditions]
    precondition = (
        preconditions[0] if len(preconditions) == 1 else (And(tuple(preconditions)) if preconditions else TRUE)
    )
    return ActionSchema(
        name=action.name.lower(),
        parameters=tuple(_parameter(p) for p in action.parameters),
        precondition=precondition,
        effects=tuple(_effect(e) for e in action.effects),
    )


def _parameter(param: Any) -> Parameter:
    return Parameter(param.name.lower(), _type_name(param.type))


def _effect(effect: Any) -> Effect:
    if not effect.fluent.is_fluent_exp() or not effect.value.is_bool_constant():
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
