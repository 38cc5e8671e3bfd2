"""The query-graph prompt (RS, Alg. 1 line 1): an utterance → mentions and the relations between them.

The answer has the shape of :meth:`retrieval.query.QueryGraph.from_json`. The system message starts
with the same text as the other prompts of the domain (a server that caches prefixes reuses it for the
state change or goal that follows) and is the same for every request; the request is the user message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain
from l3mp.llm.base import Message
from l3mp.prompts import schemas
from l3mp.prompts._common import check_domain, check_text, domain_block, strict_object

NAME: Final = "query_graph"

_NODE: Final = strict_object(
    {"id": {"type": "string"}, "mention": {"type": "string"}, "type": {"type": ["string", "null"]}}
)
_EDGE: Final = strict_object(
    {"source": {"type": "string"}, "target": {"type": "string"}, "relation": {"type": "string"}}
)
# The answer's shape; :func:`schema` adds the domain's types and the node ids.
SCHEMA: Final[dict[str, Any]] = strict_object(
    {"nodes": {"type": "array", "items": _NODE}, "edges": {"type": "array", "items": _EDGE}}
)

_TASK: Final = """\
Your task: read a request about the home and extract the things it mentions and how they relate, as a small graph.

Rules:
- One node per thing mentioned (objects, furniture, rooms, people, lights): a short unique id such as "n1",
  the mention as worded in the request (with its describing words, e.g. "blue mug"),
  and its type from the types above, or null if unsure.
- One edge per relation the request states or implies between two nodes, from source to target,
  with a short relation phrase (e.g. "on", "in", "held by").
- Extract only what the request says; do not invent things.

Every edge's source and target must be ids of nodes you listed.
Example: for "Sam left the red cup on the desk." answer
{"nodes": [{"id": "n1", "mention": "Sam", "type": null}, {"id": "n2", "mention": "red cup", "type": null}, \
{"id": "n3", "mention": "desk", "type": null}], "edges": [{"source": "n2", "target": "n3", "relation": "on"}]}."""

_USER: Final = "Request: {utterance}"


@dataclass(frozen=True, slots=True)
class QueryGraphInput:
    domain: Domain
    utterance: str

    def __post_init__(self) -> None:
        check_domain(self.domain)
        object.__setattr__(self, "utterance", check_text("utterance", self.utterance))


def render(inputs: QueryGraphInput) -> list[Message]:
    return [Message("system", system(inputs.domain)), Message("user", _USER.format(utterance=inputs.utterance))]


def system(domain: Domain) -> str:
    """The system message: the domain's, never the request's."""
    return f"{domain_block(domain)}\n\n{_TASK}"


def schema(inputs: QueryGraphInput) -> dict[str, Any]:
    """The answer's schema: node types from the domain, node ids ``n1``.. that edges name."""
    return schemas.query_graph_schema(inputs.domain)
