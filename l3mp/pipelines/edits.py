"""Reading a state-change answer (``{"remove": [...], "add": [...]}``) into a delta.

Only the shape is checked here; whether the predicates and entities exist is the verifier's
business, so the model hears about both kinds of problem in the same words it would from a person.
"""

from __future__ import annotations

from typing import Any

from kg_memory.domain import Domain
from kg_memory.errors import L3mpError
from kg_memory.model import Delta, Fact
from l3mp.pipelines.errors import AnswerProblem

_SHAPE = 'answer {"remove": [...], "add": [...]}, each fact as {"predicate": "<name>", "args": ["<entity>", ...]}'


def parse_edits(data: Any, domain: Domain) -> Delta:
    """The delta an answer describes; :class:`AnswerProblem` lists everything unreadable in it."""
    if not isinstance(data, dict) or not {"remove", "add"} <= data.keys():
        raise AnswerProblem([_SHAPE])
    problems: list[str] = []
    remove = _facts(data["remove"], "remove", domain, problems)
    add = _facts(data["add"], "add", domain, problems)
    if problems:
        raise AnswerProblem(problems)
    return Delta(remove=remove, add=add)


def _facts(items: Any, side: str, domain: Domain, problems: list[str]) -> frozenset[Fact]:
    if not isinstance(items, list):
        problems.append(f'"{side}" must be a list of facts; {_SHAPE}')
        return frozenset()
    facts = set()
    for item in items:
        fact = _fact(item, domain, problems)
        if fact is not None:
            facts.add(fact)
    return frozenset(facts)


def _fact(item: Any, domain: Domain, problems: list[str]) -> Fact | None:
    if not isinstance(item, dict) or not isinstance(item.get("predicate"), str):
        problems.append(f"{item!r} is not a fact; {_SHAPE}")
        return None
    args = item.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        problems.append(f"the arguments of {item!r} must be a list of entity names")
        return None
    args = _without_truth_value(item["predicate"], args, domain)
    try:
        return Fact(item["predicate"], tuple(args))
    except L3mpError as exc:
        problems.append(str(exc))
        return None


def _without_truth_value(predicate: str, args: list[str], domain: Domain) -> list[str]:
    """Models echo the prompt's triple view, ``(a, p, true)``, as args ``[a, "true"]``: drop the flag."""
    schema = domain.predicates.get(predicate.strip().lower())
    if schema is not None and len(args) == schema.arity + 1 and args[-1].strip().lower() == "true":
        return args[:-1]
    return args
