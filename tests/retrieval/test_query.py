"""Query graphs: validation that really runs, and a JSON round trip."""

from __future__ import annotations

import pytest

from retrieval import InvalidQuery, QueryEdge, QueryGraph, QueryNode, RetrievalError

GRAPH = QueryGraph(
    (QueryNode("m", "  blue   mug ", "Dish"), QueryNode("t", "kitchen table")), (QueryEdge("m", "t", "on"),)
)


def test_nodes_are_normalized() -> None:
    assert GRAPH.nodes[0] == QueryNode("m", "blue mug", "dish")
    assert QueryNode("x", "y", " ").type is None


def test_json_round_trip() -> None:
    assert QueryGraph.from_json(GRAPH.to_json()) == GRAPH
    assert QueryGraph.from_json(GRAPH.dumps()) == GRAPH
    assert GRAPH.to_json()["edges"] == [{"source": "m", "target": "t", "relation": "on"}]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"nodes": []}, "at least one node"),
        ({"nodes": [{"id": "a", "mention": ""}]}, "non-empty"),
        ({"nodes": [{"id": "a", "mention": "x"}, {"id": "a", "mention": "y"}]}, "unique"),
        ({"nodes": [{"id": "a", "mention": "x"}], "edges": [{"source": "a", "target": "b", "relation": "on"}]}, "b"),
        ({"nodes": [{"id": "a"}]}, "missing mention"),
        ({"nodes": "a"}, "must be a list"),
        ("{not json", "not valid JSON"),
    ],
)
def test_bad_input_is_refused_with_the_input(data: object, problem: str) -> None:
    with pytest.raises(InvalidQuery, match=problem) as caught:
        QueryGraph.from_json(data)  # type: ignore[arg-type]
    assert isinstance(caught.value, RetrievalError)
    assert caught.value.value is not None


def test_an_edge_joins_two_different_nodes() -> None:
    with pytest.raises(InvalidQuery, match="two different nodes"):
        QueryEdge("a", "a", "on")
