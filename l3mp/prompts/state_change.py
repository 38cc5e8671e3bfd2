"""The state-change prompt (Alg. 3, line 5): an utterance and the retrieved facts → REMOVE/ADD edits.

The system message is the same for every request of a domain (its examples are made from the
domain's templates, not from the request), so a server caches it; the request's context and
utterance follow in the user message. :func:`schema` is the answer's schema for one request.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain, PredicateSchema
from kg_memory.model import Entity, Fact
from l3mp.llm.base import Message
from l3mp.prompts import schemas
from l3mp.prompts._common import (
    TRIPLE_NOTE,
    check_context,
    domain_block,
    example_args,
    example_predicate,
    render_context_request,
    render_example,
    strict_object,
    string_array,
)

NAME: Final = "state_change"

_EDIT: Final = strict_object({"predicate": {"type": "string"}, "args": string_array()})
# The answer's shape; :func:`schema` adds the request's words.
SCHEMA: Final[dict[str, Any]] = strict_object(
    {"remove": {"type": "array", "items": _EDIT}, "add": {"type": "array", "items": _EDIT}}
)

_TASK: Final = """\
Your task: keep the memory up to date. A person tells you what changed; answer with the facts to remove
and the facts to add.

Rules:
- Use only the predicates above, with arguments in the order of their parameters and of the right types.
- Use only the entities listed; you cannot create new entities.
- Moving something means removing the fact about its old location as well as adding the new one.
- Remove only facts that are currently true; add only facts that become true.
- If nothing changes, answer with two empty lists.

{triple_note}
In the answer a fact is its predicate and its arguments, with entity names exactly as listed: {example}
A one-argument fact (a, p, true) is {{"predicate": "p", "args": ["a"]}}.{move}
Answer in JSON: {{"remove": [facts that stop being true], "add": [facts that become true]}}."""


@dataclass(frozen=True, slots=True)
class StateChangeInput:
    domain: Domain
    utterance: str
    entities: Sequence[Entity]
    facts: Sequence[Fact]

    def __post_init__(self) -> None:
        check_context(self, "utterance")


def render(inputs: StateChangeInput) -> list[Message]:
    user = render_context_request(inputs.entities, inputs.facts, "Update", inputs.utterance)
    return [Message("system", system(inputs.domain)), Message("user", user)]


def system(domain: Domain) -> str:
    """The system message: the domain's, never the request's."""
    predicate = example_predicate(domain, 2)
    if predicate is None:
        example, move = '(a, p, b) is {"predicate": "p", "args": ["a", "b"]}.', ""
    else:
        fact = Fact(predicate.name, example_args(domain, predicate))
        example, move = render_example(domain, fact) + ".", "\n" + _move(domain, predicate, fact)
    task = _TASK.format(triple_note=TRIPLE_NOTE, example=example, move=move)
    return f"{domain_block(domain)}\n\n{task}"


def schema(inputs: StateChangeInput, *, model: object = None) -> dict[str, Any]:
    """The answer's schema for this request: the domain's predicates over the context's names, in the
    dialect ``model`` compiles (:func:`l3mp.prompts.schemas.dialect_for`)."""
    return schemas.state_change_schema(inputs.domain, inputs.entities, dialect=schemas.dialect_for(model))


def _move(domain: Domain, predicate: PredicateSchema, fact: Fact) -> str:
    """An example of a whole answer: ``fact`` stops being true and the same with another last argument starts."""
    last = predicate.parameters[-1].type.replace("-", "_")
    other = next(f"{last}_{n}" for n in range(2, 2 + len(fact.args) + 1) if f"{last}_{n}" not in fact.args)
    moved = Fact(fact.predicate, (*fact.args[:-1], other))
    template = domain.language.predicates.get(predicate.name)
    before, after = (template.format(*f.args) if template else f.display() for f in (fact, moved))
    answer = {"remove": [_edit(fact)], "add": [_edit(moved)]}
    return f'When "{before}" stops being true and "{after}" becomes true, answer {json.dumps(answer)}.'


def _edit(fact: Fact) -> dict[str, Any]:
    return {"predicate": fact.predicate, "args": list(fact.args)}
