"""The mentions prompt (open world): a request → the phrases it uses for things in the home.

The planner resolves each phrase against the memory's entities itself; the model only reads the
request, so a phrase that matches several entities or none becomes a question, not a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain
from l3mp.llm.base import Message
from l3mp.prompts._common import check_domain, check_text, strict_object, string_array

NAME: Final = "mentions"

SCHEMA: Final[dict[str, Any]] = strict_object({"mentions": string_array()})

_SYSTEM: Final = """\
You read a request to a household robot (domain "{domain}") and list the things in the home it refers to:
objects, furniture, rooms and people, each as the phrase the request uses ("the blue mug", "Alice").
Leave out the robot itself and the speaker ("me", "I"). Copy the phrases; do not guess which object is meant.
Answer in JSON: {{"mentions": ["<phrase>", ...]}}."""


@dataclass(frozen=True, slots=True)
class MentionsInput:
    domain: Domain
    request: str

    def __post_init__(self) -> None:
        check_domain(self.domain)
        object.__setattr__(self, "request", check_text("request", self.request))


def render(inputs: MentionsInput) -> list[Message]:
    return [
        Message("system", _SYSTEM.format(domain=inputs.domain.name)),
        Message("user", f"Request: {inputs.request}"),
    ]
