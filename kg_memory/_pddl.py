"""The one place that touches unified-planning's PDDL reader."""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_memory.errors import DomainError

Params = tuple[tuple[str, str], ...]
_PARSE_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class ParsedDomain:
    name: str
    types: dict[str, str | None]
    predicates: dict[str, Params]
    constants: dict[str, str]
    actions: dict[str, Params]
    action_changes: dict[str, frozenset[str]]


def parse_pddl_domain(path: Path, text: str) -> ParsedDomain:
    # Heavy imports, kept off module import.
    from unified_planning.environment import get_environment
    from unified_planning.io import PDDLReader

    # PDDL lets a type and a predicate share a name (IPC's schedule domain does), which
    # unified-planning rejects unless error_used_name is off. A private Environment would
    # be cleaner, but its reader builds forall variables in the global one, so we switch
    # the flag on the global environment for the parse and restore it.
    environment = get_environment()
    with _PARSE_LOCK:
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
    actions: dict[str, Params] = {}
    changes: dict[str, frozenset[str]] = {}
    for action in problem.actions:
        name = action.name.lower()
        actions[name] = tuple((p.name, _type_name(p.type)) for p in action.parameters)
        changes[name] = frozenset(_effect_predicates(action))
    return ParsedDomain(problem.name.lower(), types, predicates, constants, actions, changes)


def _type_name(type_: Any) -> str:
    return type_.name.lower() if type_.is_user_type() else "object"


def _effect_predicates(action: Any) -> set[str]:
    names = set()
    for effect in getattr(action, "effects", ()):
        if effect.fluent.is_fluent_exp():
            names.add(effect.fluent.fluent().name.lower())
    return names
