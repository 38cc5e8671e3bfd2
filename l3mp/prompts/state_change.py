"""The state-change prompt (Alg. 3, line 5): an utterance and the retrieved facts → REMOVE/ADD edits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain
from kg_memory.model import Entity, Fact
from l3mp.llm.base import Message
from l3mp.prompts._common import (
    TRIPLE_NOTE,
    check_context,
    example_fact,
    render_context_request,
    render_example,
    render_predicates,
    strict_object,
    string_array,
)

NAME: Final = "state_change"

_EDIT: Final = strict_object({"predicate": {"type": "string"}, "args": string_array()})
SCHEMA: Final[dict[str, Any]] = strict_object(
    {"remove": {"type": "array", "items": _EDIT}, "add": {"type": "array", "items": _EDIT}}
)

_SYSTEM: Final = """\
You keep a robot's memory of a home up to date. The memory is a set of facts over the predicates below.
A person tells you what changed; answer with the facts to remove and the facts to add.

Predicates (parameters, then meaning):
{predicates}

Rules:
- Use only the predicates above, with arguments in the order of their parameters and of the right types.
- Use only the entities listed; you cannot create new entities.
- Moving something means removing the fact about its old location as well as adding the new one.
- Remove only facts that are currently true; add only facts that become true.
- If nothing changes, answer with two empty lists.

{triple_note}
In the answer a fact is its predicate and its arguments, with entity names exactly as listed: {example}
A one-argument fact (a, p, true) is {{"predicate": "p", "args": ["a"]}}.
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
    fact = example_fact(inputs.domain, inputs.facts)
    example = render_example(inputs.domain, fact) if fact else '(a, p, b) is {"predicate": "p", "args": ["a", "b"]}'
    system = _SYSTEM.format(predicates=render_predicates(inputs.domain), triple_note=TRIPLE_NOTE, example=example + ".")
    user = render_context_request(inputs.entities, inputs.facts, "Update", inputs.utterance)
    return [Message("system", system), Message("user", user)]
