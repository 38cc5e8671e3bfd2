"""The stages prompt (open world): a request that could not be planned whole → ordered stages.

Each stage is a request in its own right, planned (and, if need be, split again) on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain
from l3mp.llm.base import Message
from l3mp.prompts._common import check_domain, check_text, strict_object, string_array

NAME: Final = "stages"

SCHEMA: Final[dict[str, Any]] = strict_object({"stages": string_array()})

_SYSTEM: Final = """\
A household robot (domain "{domain}") could not plan a request in one go. Split it into ordered stages,
between 2 and {most}, each a complete request on its own that names the things it concerns
("Put the red cup in the sink.", "Bring Alice the coffee."). Keep the order the request implies.
Answer in JSON: {{"stages": ["<request>", ...]}}."""


@dataclass(frozen=True, slots=True)
class StagesInput:
    domain: Domain
    request: str
    most: int = 10

    def __post_init__(self) -> None:
        check_domain(self.domain)
        object.__setattr__(self, "request", check_text("request", self.request))


def render(inputs: StagesInput) -> list[Message]:
    return [
        Message("system", _SYSTEM.format(domain=inputs.domain.name, most=inputs.most)),
        Message("user", f"Request: {inputs.request}"),
    ]
