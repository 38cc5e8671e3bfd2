"""The entity-selection prompt (R+): an utterance and the memory's entities → the names it concerns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain
from kg_memory.model import Entity
from l3mp.llm.base import Message
from l3mp.prompts._common import (
    check_domain,
    check_items,
    check_text,
    render_entities,
    render_predicates,
    strict_object,
    string_array,
)

NAME: Final = "entity_selection"

SCHEMA: Final[dict[str, Any]] = strict_object({"entities": string_array()})

_SYSTEM: Final = """\
You pick, from a robot's memory of a home, the entities a request is about.
The memory relates entities with these predicates (parameters, then meaning):
{predicates}

Rules:
- Answer with entity names exactly as written before the parenthesis (from "{sample} (...): ..." write "{sample}"),
  sorted, without duplicates.
- Include every entity the request mentions or implies (e.g. the room of a piece of furniture it names).
- Leave out entities the request does not concern.

Answer in JSON, a list of names: {{"entities": ["{sample}"]}}."""

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
    names = sorted(e.name for e in inputs.entities)
    system = _SYSTEM.format(predicates=render_predicates(inputs.domain), sample=names[0] if names else "mug_1")
    user = _USER.format(entities=render_entities(inputs.entities), utterance=inputs.utterance)
    return [Message("system", system), Message("user", user)]
