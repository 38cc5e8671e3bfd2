"""The three retrievers through one contract, on both stores, over the surveyed example home."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import SURVEY_FACTS
from retrieval_fakes import shared_minilm

from kg_memory import Entity, Fact, WorldMemory
from retrieval import (
    RETRIEVERS,
    Context,
    Found,
    InvalidParameters,
    InvalidQuery,
    MemoryBackend,
    QueryEdge,
    QueryGraph,
    QueryNode,
    Retriever,
    SearchRetriever,
    UnknownRetriever,
    count_tokens,
    retriever,
)

MUG_ON_TABLE = QueryGraph(
    (QueryNode("m", "the blue mug"), QueryNode("t", "kitchen table", "furniture")), (QueryEdge("m", "t", "on"),)
)
REQUESTS = {"full": {}, "entities": {"names": ["mug_1"]}, "search": {"query": MUG_ON_TABLE}}


def make(name: str, **params: Any) -> Retriever:
    return retriever(name, embedder=shared_minilm(), **params) if name == "search" else retriever(name, **params)


@pytest.mark.parametrize("name", RETRIEVERS)
def test_contract(home: WorldMemory, name: str) -> None:
    context = make(name).retrieve(home, **REQUESTS[name])  # type: ignore[arg-type]
    assert isinstance(context, Context) and context.retriever == name
    assert set(context.facts) <= home.facts()
    assert len(set(context.facts)) == context.fact_count == len(context.facts) > 0
    assert {a for f in context.facts for a in f.args} <= set(context.entities)
    assert set(context.provenance) == set(context.entities)
    assert context.token_estimate() == count_tokens(context.render()) > context.fact_count
    assert context.sizes() == {
        "facts": context.fact_count,
        "entities": context.entity_count,
        "tokens": context.token_estimate(),
    }
    assert Fact.parse("(on mug_1 table_1)") in context.facts


def test_full_returns_the_whole_state(home: WorldMemory) -> None:
    context = make("full").retrieve(home)
    assert set(context.facts) == set(SURVEY_FACTS) == home.facts()
    assert set(context.entities) == set(home.entities())
    assert all(p.found is Found.ALL for p in context.provenance.values())


def test_entities_returns_the_k_hop_neighbourhood(home: WorldMemory) -> None:
    one = make("entities", hops=1).retrieve(home, names=["mug_1", "ghost"])
    assert set(one.facts) == {Fact.parse("(on mug_1 table_1)")}
    assert one.missing == ("ghost",)
    assert one.provenance["mug_1"].found is Found.NAMED
    assert one.provenance["table_1"].found is Found.NEIGHBOUR and one.provenance["table_1"].distance == 1
    two = make("entities", hops=2).retrieve(home, names=["mug_1"])
    assert Fact.parse("(in_room table_1 kitchen)") in two.facts and set(one.facts) < set(two.facts)


def test_entities_caps_nearest_first(home: WorldMemory) -> None:
    capped = make("entities", hops=3, max_facts=2).retrieve(home, names=["mug_1"])
    assert capped.truncated and capped.fact_count == 2
    assert capped.facts[0] == Fact.parse("(on mug_1 table_1)")


def test_search_maps_the_query_and_returns_its_context(home: WorldMemory) -> None:
    context = make("search", hops=1).retrieve(home, query=MUG_ON_TABLE)
    assert context.match is not None
    assert context.match.mapping == {"m": "mug_1", "t": "table_1"}
    assert Fact.parse("(on mug_1 table_1)") in context.facts
    assert context.provenance["mug_1"].found is Found.MATCHED and context.provenance["mug_1"].query_node == "m"
    assert context.provenance["kitchen"].found is Found.NEIGHBOUR
    assert context.fact_count < len(home.facts())


def test_search_embeds_entities_once_and_then_only_new_ones(home: WorldMemory) -> None:
    backend = MemoryBackend()
    search = SearchRetriever(embedder=shared_minilm(), backend=lambda memory: backend)
    search.retrieve(home, query=MUG_ON_TABLE)
    embeddings = search.embeddings(home)
    warm = embeddings.computed
    assert warm == len(home.entities()) == len(backend.rows)
    search.retrieve(home, query=MUG_ON_TABLE)
    assert embeddings.computed == warm  # no re-embedding after warm-up
    home.add_entities([Entity("mug_2", "dish", "red mug")], facts=[Fact.parse("(on mug_2 shelf_1)")])
    red = QueryGraph((QueryNode("m", "red mug"),))
    assert search.retrieve(home, query=red).match.mapping == {"m": "mug_2"}  # type: ignore[union-attr]
    assert embeddings.computed == warm + 1
    # a fresh retriever over the same backend starts warm
    again = SearchRetriever(embedder=shared_minilm(), backend=lambda memory: backend)
    again.retrieve(home, query=red)
    assert again.embeddings(home).computed == 0


def test_search_keeps_embeddings_in_the_store_across_restarts(home: WorldMemory) -> None:
    """The default backend is the memory's own store: a new process starts warm."""
    first = SearchRetriever(embedder=shared_minilm())
    first.retrieve(home, query=MUG_ON_TABLE)
    stored = home.store.embeddings(home.name)
    assert set(stored) == set(home.entities()) and first.embeddings(home).computed == len(stored)
    restarted = SearchRetriever(embedder=shared_minilm())
    context = restarted.retrieve(home, query=MUG_ON_TABLE)
    assert restarted.embeddings(home).computed == 0  # nothing re-embedded
    assert context.match is not None and context.match.mapping == {"m": "mug_1", "t": "table_1"}
    assert home.version == 1  # embeddings are a cache, not an update


def test_search_without_a_match_returns_an_empty_context(home: WorldMemory) -> None:
    context = make("search").retrieve(home, query=QueryGraph((QueryNode("g", "giraffe"),)))
    assert context.match is not None and context.match.unmatched == ("g",)
    assert context.fact_count == 0 and context.token_estimate() == 0


def test_search_needs_a_query_graph(home: WorldMemory) -> None:
    with pytest.raises(InvalidQuery, match="QueryGraph"):
        make("search").retrieve(home, names=["mug_1"])


def test_unknown_retriever_names_the_known_ones() -> None:
    with pytest.raises(UnknownRetriever, match="full, entities, search") as caught:
        retriever("magic")
    assert caught.value.name == "magic"


@pytest.mark.parametrize(
    ("name", "params", "problem"),
    [
        ("entities", {"depth": 2}, "known parameters: hops, max_facts"),
        ("entities", {"hops": -1}, "hops"),
        ("search", {"budget": 0}, "budget"),
        ("full", {"hops": 1}, "known parameters: none"),
    ],
)
def test_bad_parameters_are_refused(name: str, params: dict[str, Any], problem: str) -> None:
    with pytest.raises(InvalidParameters, match=problem):
        retriever(name, **params)
