"""The entity-selection prompt (R+): an utterance and the memory's entities → the names it concerns.

The system message is the same for every request of a domain, so a server caches it; the entity
list and the request follow in the user message. :func:`schema` is the answer's schema for one request.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain
from kg_memory.model import Entity
from l3mp.llm.base import Message
from l3mp.prompts import schemas
from l3mp.prompts._common import (
    check_domain,
    check_items,
    check_text,
    domain_block,
    example_args,
    example_predicate,
    render_entities,
    strict_object,
    string_array,
)

NAME: Final = "entity_selection"

# The answer's shape; :func:`schema` adds the request's names.
SCHEMA: Final[dict[str, Any]] = strict_object({"entities": string_array()})

_TASK: Final = """\
Your task: pick, from the robot's memory, the entities a request is about.

Rules:
- Answer with entity names exactly as written before the parenthesis (from "{sample} (...): ..." write "{sample}"),
  sorted, without duplicates.
- Include every entity the request mentions or implies (e.g. the room of a piece of furniture it names).
- Leave out entities the request does not concern.

Answer in JSON, a list of names{example}."""

_USER: Final = """\
Entities (name (type): label):
{entities}

Request: {utterance}"""


@dataclass(frozen=True, slots=True)
class EntitySelectionInput:
    domain: Domain
    utterance: str
    entities: Sequence[Entity]

    def __post_init__(self) -> None:
        check_domain(self.domain)
        object.__setattr__(self, "utterance", check_text("utterance", self.utterance))
        object.__setattr__(self, "entities", check_items("entities", self.entities, Entity))


def render(inputs: EntitySelectionInput) -> list[Message]:
    user = _USER.format(entities=render_entities(inputs.entities), utterance=inputs.utterance)
    return [Message("system", system(inputs.domain)), Message("user", user)]


def system(domain: Domain) -> str:
    """The system message: the domain's, never the request's."""
    predicate = example_predicate(domain, 2)
    if predicate is None:
        sample, example = "mug_1", ': {"entities": ["mug_1"]}'
    else:
        args = example_args(domain, predicate)
        template = domain.language.predicates.get(predicate.name)
        said = template.format(*args) if template else f"({predicate.name} {' '.join(args)})"
        sample = args[0]
        example = f': for "{said}" answer {json.dumps({"entities": sorted(set(args))})}'
    return f"{domain_block(domain)}\n\n{_TASK.format(sample=sample, example=example)}"


def schema(inputs: EntitySelectionInput) -> dict[str, Any]:
    """The answer's schema for this request: the listed entities' names."""
    return schemas.entity_selection_schema(inputs.entities)
