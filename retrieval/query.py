"""Query graphs: what a request mentions and how those mentions relate, as plain data.

A language model in ``l3mp`` extracts them from an utterance (Alg. 1, line 1); here they are
only validated, serialized and matched, so retrieval never needs a model to be tested.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from retrieval.errors import InvalidQuery

T = TypeVar("T")


def _text(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidQuery(what, value, "must be a non-empty string")
    return " ".join(value.split())


@dataclass(frozen=True, slots=True)
class QueryNode:
    """An ungrounded entity: ``mention`` is how the request refers to it; ``type`` is optional."""

    id: str
    mention: str
    type: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", _text("query node id", self.id))
        object.__setattr__(self, "mention", _text(f"mention of query node {self.id!r}", self.mention))
        if self.type is not None:
            if not isinstance(self.type, str):
                raise InvalidQuery(f"type of query node {self.id!r}", self.type, "must be a string or null")
            object.__setattr__(self, "type", self.type.strip().lower() or None)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "mention": self.mention, "type": self.type}


@dataclass(frozen=True, slots=True)
class QueryEdge:
    """A relation phrase between two query nodes, e.g. ``mug --on--> table``."""

    source: str
    target: str
    relation: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", _text("query edge source", self.source))
        object.__setattr__(self, "target", _text("query edge target", self.target))
        object.__setattr__(self, "relation", _text(f"relation of edge {self.source}->{self.target}", self.relation))
        if self.source == self.target:
            raise InvalidQuery("query edge", self.to_json(), "an edge must join two different nodes")

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "relation": self.relation}


@dataclass(frozen=True, slots=True)
class QueryGraph:
    """Nodes with unique ids and edges between them; at least one node. ``text``: the words the graph
    was read from, when known: the search prefers entities whose whole label they spell out (a
    model may write "skirt 3" for "the brown skirt 3")."""

    nodes: tuple[QueryNode, ...]
    edges: tuple[QueryEdge, ...] = ()
    text: str = ""

    def __post_init__(self) -> None:
        nodes, edges = _sequence("query nodes", self.nodes), _sequence("query edges", self.edges)
        if not nodes:
            raise InvalidQuery("query graph", nodes, "needs at least one node")
        if not all(isinstance(n, QueryNode) for n in nodes):
            raise InvalidQuery("query nodes", nodes, "every node must be a QueryNode")
        if not all(isinstance(e, QueryEdge) for e in edges):
            raise InvalidQuery("query edges", edges, "every edge must be a QueryEdge")
        ids = [n.id for n in nodes]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise InvalidQuery("query node ids", duplicates, "ids must be unique")
        for edge in edges:
            unknown = [end for end in (edge.source, edge.target) if end not in ids]
            if unknown:
                raise InvalidQuery("query edge", edge.to_json(), f"refers to unknown node(s) {', '.join(unknown)}")
        if not isinstance(self.text, str):
            raise InvalidQuery("query text", self.text, "must be a string")
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "edges", edges)

    def node(self, node_id: str) -> QueryNode:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise InvalidQuery("query node id", node_id, "no node has this id")

    def to_json(self) -> dict[str, Any]:
        graph = {"nodes": [n.to_json() for n in self.nodes], "edges": [e.to_json() for e in self.edges]}
        return graph | ({"text": self.text} if self.text else {})

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> QueryGraph:
        """Build from the ``to_json`` shape, or from JSON text (e.g. a model's answer)."""
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise InvalidQuery("query graph JSON", data, f"not valid JSON ({exc})") from exc
        if not isinstance(data, Mapping):
            raise InvalidQuery("query graph", data, 'expected an object with "nodes" and "edges"')
        nodes = tuple(_node(item) for item in _sequence("query nodes", data.get("nodes", ())))
        edges = tuple(_edge(item) for item in _sequence("query edges", data.get("edges", ())))
        return cls(nodes, edges, text=data.get("text", ""))


@dataclass(frozen=True, slots=True)
class ReadQuery:
    """A query graph read leniently from a model's answer, and what was left out of it (one sentence
    per node or edge, to tell the model)."""

    graph: QueryGraph
    dropped: tuple[str, ...] = ()


def read_answer(data: object) -> ReadQuery:
    """The usable part of a model's query graph: nodes that read well (the first of a duplicated id),
    and the edges between them. An edge naming an undeclared node, or joining a node to itself, is
    dropped, not fatal: its nodes are still worth matching. Raises InvalidQuery when no node is usable.
    """
    if not isinstance(data, Mapping):
        raise InvalidQuery("query graph", data, 'expected an object with "nodes" and "edges"')
    dropped: list[str] = []
    nodes: dict[str, QueryNode] = {}
    for node in _readable(data.get("nodes", ()), _node, "node", dropped):
        if node.id in nodes:
            dropped.append(f"node left out: the id {node.id!r} is used twice")
        else:
            nodes[node.id] = node
    edges: list[QueryEdge] = []
    for edge in _readable(data.get("edges", ()), _edge, "edge", dropped):
        unknown = [end for end in (edge.source, edge.target) if end not in nodes]
        if unknown:
            names = ", ".join(unknown)
            dropped.append(f"edge {edge.source}->{edge.target} left out: it names undeclared node(s) {names}")
        else:
            edges.append(edge)
    if not nodes:
        raise InvalidQuery("query graph", data, "has no usable node: add one for each thing the request mentions")
    return ReadQuery(QueryGraph(tuple(nodes.values()), tuple(edges)), tuple(dropped))


def _readable(items: object, read: Callable[[Any], T], kind: str, dropped: list[str]) -> Iterator[T]:
    """The ``kind`` items that ``read`` accepts; each one it refuses is noted in ``dropped``."""
    for item in _sequence(f"query {kind}s", items):
        try:
            yield read(item)
        except InvalidQuery as exc:
            dropped.append(f"{kind} left out: {exc}")


def _sequence(what: str, value: object) -> tuple[Any, ...]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise InvalidQuery(what, value, "must be a list")
    return tuple(value)


def _object(what: str, item: object, required: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise InvalidQuery(what, item, "must be an object")
    missing = [key for key in required if key not in item]
    if missing:
        raise InvalidQuery(what, item, f"missing {', '.join(missing)}")
    return item


def _node(item: object) -> QueryNode:
    data = _object("query node", item, ("id", "mention"))
    return QueryNode(data["id"], data["mention"], data.get("type"))


def _edge(item: object) -> QueryEdge:
    data = _object("query edge", item, ("source", "target", "relation"))
    return QueryEdge(data["source"], data["target"], data["relation"])
