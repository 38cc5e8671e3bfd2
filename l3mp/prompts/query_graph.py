"""The query-graph prompt (RS, Alg. 1 line 1): an utterance → mentions and the relations between them.

The answer has the shape of :meth:`retrieval.query.QueryGraph.from_json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain
from l3mp.llm.base import Message
from l3mp.prompts._common import check_domain, check_text, render_types, strict_object

NAME: Final = "query_graph"

_NODE: Final = strict_object(
    {"id": {"type": "string"}, "mention": {"type": "string"}, "type": {"type": ["string", "null"]}}
)
_EDGE: Final = strict_object(
    {"source": {"type": "string"}, "target": {"type": "string"}, "relation": {"type": "string"}}
)
SCHEMA: Final[dict[str, Any]] = strict_object(
    {"nodes": {"type": "array", "items": _NODE}, "edges": {"type": "array", "items": _EDGE}}
)

_SYSTEM: Final = """\
You read a request about a home and extract the things it mentions and how they relate, as a small graph.

Entity types:
{types}

Rules:
- One node per thing mentioned (objects, furniture, rooms, people, lights): a short unique id such as "n1",
  the mention as worded in the request (with its describing words, e.g. "blue mug"),
  and its type from the list above, or null if unsure.
- One edge per relation the request states or implies between two nodes, from source to target,
  with a short relation phrase (e.g. "on", "in", "held by").
- Extract only what the request says; do not invent things.

Every edge's source and target must be ids of nodes you listed.
Example: for "Sam left the red cup on the desk." answer
{{"nodes": [{{"id": "n1", "mention": "Sam", "type": null}}, {{"id": "n2", "mention": "red cup", "type": null}}, \
{{"id": "n3", "mention": "desk", "type": null}}], "edges": [{{"source": "n2", "target": "n3", "relation": "on"}}]}}."""

_USER: Final = "Request: {utterance}"


@dataclass(frozen=True, slots=True)
class QueryGraphInput:
    domain: Domain
    utterance: str

    def __post_init__(self) -> None:
        check_domain(self.domain)
        object.__setattr__(self, "utterance", check_text("utterance", self.utterance))


def render(inputs: QueryGraphInput) -> list[Message]:
    system = _SYSTEM.format(types=render_types(inputs.domain))
    return [Message("system", system), Message("user", _USER.format(utterance=inputs.utterance))]
