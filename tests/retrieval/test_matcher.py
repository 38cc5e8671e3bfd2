"""The RS matcher (Alg. 2) pinned on small hand-made graphs.

The real all-MiniLM-L6-v2 model decides the behavioural cases (exact match, ambiguity
resolved by a relation, a missing node, types, the budget); a lookup-table embedder pins
exact scores and checks branch-and-bound against brute force.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from retrieval_fakes import LookupEmbedder, basis, shared_minilm

from kg_memory import DomainRegistry, Entity, Fact
from retrieval import (
    Candidates,
    EntityEmbeddings,
    FactsConnectivity,
    InvalidParameters,
    Matcher,
    MatchParams,
    QueryEdge,
    QueryGraph,
    QueryNode,
    SentenceTransformerEmbedder,
    relation_phrase,
)
from retrieval._graph import Adjacency
from retrieval.matcher import candidate_rows

DOMAIN = DomainRegistry().get("example_home")
ENTITIES = (
    Entity("kitchen", "room"),
    Entity("hall", "room"),
    Entity("table_1", "furniture", "kitchen table"),
    Entity("shelf_1", "furniture", "hall shelf"),
    Entity("sink_1", "sink", "kitchen sink"),
    Entity("mug_1", "dish", "mug"),
    Entity("mug_2", "dish", "mug"),
    Entity("book_1", "item", "cookbook"),
)
FACTS = tuple(
    Fact.parse(f)
    for f in (
        "(connected kitchen hall)",
        "(connected hall kitchen)",
        "(in_room table_1 kitchen)",
        "(in_room sink_1 kitchen)",
        "(in_room shelf_1 hall)",
        "(on mug_1 table_1)",
        "(on mug_2 shelf_1)",
        "(on book_1 table_1)",
    )
)


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return shared_minilm()


@pytest.fixture(scope="module")
def candidates(minilm: SentenceTransformerEmbedder) -> Candidates:
    embeddings = EntityEmbeddings(minilm)
    embeddings.sync(ENTITIES)
    return Candidates.from_embeddings(embeddings)


def matcher(embedder: object, **params: object) -> Matcher:
    return Matcher(
        embedder,  # type: ignore[arg-type]
        DOMAIN.language.predicates,
        is_subtype=DOMAIN.is_subtype,
        known_types=DOMAIN.types,
        params=MatchParams(**params),  # type: ignore[arg-type]
    )


def pair(first: str, relation: str, second: str, first_type: str | None = None) -> QueryGraph:
    return QueryGraph((QueryNode("a", first, first_type), QueryNode("b", second)), (QueryEdge("a", "b", relation),))


# -- the real model ------------------------------------------------------------------------


def test_exact_match(minilm: SentenceTransformerEmbedder, candidates: Candidates) -> None:
    result = matcher(minilm).match(pair("cookbook", "on", "kitchen table"), candidates, FactsConnectivity(FACTS))
    assert result.mapping == {"a": "book_1", "b": "table_1"}
    assert result.complete and not result.budget_exhausted
    assert result.score > result.node_scores["a"] + result.node_scores["b"]  # the edge agreed


@pytest.mark.parametrize(
    ("place", "mug", "other"), [("kitchen table", "mug_1", "mug_2"), ("hall shelf", "mug_2", "mug_1")]
)
def test_ambiguous_labels_are_resolved_by_the_relation(
    minilm: SentenceTransformerEmbedder, candidates: Candidates, place: str, mug: str, other: str
) -> None:
    result = matcher(minilm).match(pair("mug", "on", place), candidates, FactsConnectivity(FACTS))
    assert result.mapping["a"] == mug
    runner_up = result.alternatives[0]
    assert runner_up.mapping["a"] == other and runner_up.score < result.score
    assert {m for m, _ in result.candidates["a"]} >= {"mug_1", "mug_2"}


def test_a_node_without_a_good_candidate_stays_unmatched(
    minilm: SentenceTransformerEmbedder, candidates: Candidates
) -> None:
    result = matcher(minilm).match(pair("cookbook", "on", "giraffe"), candidates, FactsConnectivity(FACTS))
    assert result.mapping == {"a": "book_1"}
    assert result.unmatched == ("b",) and not result.complete
    assert result.candidates["b"] == ()
    assert result.score == pytest.approx(result.node_scores["a"])  # an edge to nothing scores 0


def test_types_filter_candidates_with_subtypes(minilm: SentenceTransformerEmbedder, candidates: Candidates) -> None:
    single = matcher(minilm)
    connectivity = FactsConnectivity(FACTS)

    def best(mention: str, type_: str | None) -> str | None:
        return single.match(QueryGraph((QueryNode("x", mention, type_),)), candidates, connectivity).mapping.get("x")

    assert best("kitchen", None) == "kitchen"
    assert best("kitchen", "furniture") in {"table_1", "sink_1"}  # sink is a kind of furniture
    assert best("kitchen", "sink") == "sink_1"
    assert best("mug", "room") not in {"mug_1", "mug_2"}
    assert best("mug", "item") in {"mug_1", "mug_2"}  # dish is a kind of item
    assert best("mug", "person") is None  # no person in this world
    assert best("mug", "cup") in {"mug_1", "mug_2"}  # not a domain type: ignored, not fatal


def test_the_visit_budget_bounds_the_search(minilm: SentenceTransformerEmbedder) -> None:
    mugs = [Entity(f"mug_{i}", "dish", "mug") for i in range(20)]
    embeddings = EntityEmbeddings(minilm)
    embeddings.sync(mugs)
    query = QueryGraph(
        tuple(QueryNode(n, "mug") for n in "abcd"), (QueryEdge("a", "b", "next to"), QueryEdge("c", "d", "next to"))
    )
    connectivity = FactsConnectivity(())
    full = matcher(minilm).match(query, Candidates.from_embeddings(embeddings), connectivity)
    tiny = matcher(minilm, budget=10).match(query, Candidates.from_embeddings(embeddings), connectivity)
    assert not full.budget_exhausted and full.visits > 10
    assert tiny.budget_exhausted and tiny.visits <= 10
    assert len(set(tiny.mapping.values())) == 4  # the greedy first descent: distinct entities
    assert tiny.score <= full.score


# -- exact scores with a lookup embedder -----------------------------------------------------

AXES = {"mug": 0, "table": 1, "shelf": 2, "kitchen": 3, "on": 4, "in": 5, "hall": 6}
DIM = 8
LOOKUP = {
    "mug": basis(DIM, (0, 1.0)),
    "table": basis(DIM, (1, 1.0)),
    "kitchen": basis(DIM, (3, 1.0)),
    "on": basis(DIM, (4, 1.0)),
    "is on": basis(DIM, (4, 1.0)),
    "in": basis(DIM, (5, 1.0)),
    "is in": basis(DIM, (5, 1.0)),
}
VECTORS = {
    "mug_1": basis(DIM, (0, 1.0)),
    "mug_2": basis(DIM, (0, 0.8), (2, 0.6)),
    "table_1": basis(DIM, (1, 1.0)),
    "shelf_1": basis(DIM, (2, 1.0)),
    "kitchen": basis(DIM, (3, 1.0)),
    "hall": basis(DIM, (6, 1.0)),
}
TYPES = {"mug_1": "dish", "mug_2": "dish", "table_1": "furniture", "shelf_1": "furniture"}
LOOKUP_FACTS = tuple(
    Fact.parse(f)
    for f in (
        "(on mug_2 table_1)",
        "(on mug_1 shelf_1)",
        "(in_room table_1 kitchen)",
        "(in_room shelf_1 hall)",
        "(connected hall kitchen)",
    )
)


def lookup_candidates() -> Candidates:
    names = tuple(VECTORS)
    types = tuple(TYPES.get(n, "room") for n in names)
    return Candidates(names, types, np.asarray([VECTORS[n] for n in names], dtype=np.float32))


@pytest.mark.parametrize(
    ("query", "margin", "mapping", "score"),
    [
        # a fact (on mug_2 table_1) agrees with "on": 0.8 + 1 + 1
        (pair("mug", "on", "table"), 0.3, {"a": "mug_2", "b": "table_1"}, 2.8),
        # mug_2 is outside the margin: mug_1 is not near table_1 (4 hops), 1 + 1 - 0.1
        (pair("mug", "on", "table"), 0.15, {"a": "mug_1", "b": "table_1"}, 1.9),
        # mug_2 reaches the kitchen in 2 hops (path bonus 0.25); mug_1 only in 3
        (pair("mug", "in", "kitchen"), 0.3, {"a": "mug_2", "b": "kitchen"}, 2.05),
    ],
)
def test_scores_are_node_similarity_plus_edge_agreement(
    query: QueryGraph, margin: float, mapping: dict[str, str], score: float
) -> None:
    embedder = LookupEmbedder(LOOKUP, DIM)
    result = matcher(embedder, margin=margin).match(query, lookup_candidates(), FactsConnectivity(LOOKUP_FACTS))
    assert result.mapping == mapping
    assert result.score == pytest.approx(score, abs=1e-5)


def test_predicate_phrases_are_embedded_once_per_matcher() -> None:
    embedder = LookupEmbedder(LOOKUP, DIM)
    single = matcher(embedder)
    for _ in range(3):
        single.match(pair("mug", "on", "table"), lookup_candidates(), FactsConnectivity(LOOKUP_FACTS))
    phrase_calls = [c for c in embedder.calls if "is on" in c]
    assert len(phrase_calls) == 1
    assert relation_phrase("in_hand", "{0} is in {1}'s hand") == "is in 's hand"
    assert relation_phrase("ping", "{0}") == "ping"


def test_candidate_rows_keep_the_best_within_the_margin_and_top_k() -> None:
    similarity = np.array([[0.9, 0.8, 0.7, 0.85], [0.2, 0.1, -np.inf, 0.25], [-np.inf] * 4], dtype=np.float32)
    rows = candidate_rows(similarity, MatchParams(margin=0.15, top_k=2, min_similarity=0.3))
    assert [[i for i, _ in row] for row in rows] == [[0, 3], [], []]
    rows = candidate_rows(similarity, MatchParams(margin=0.15, top_k=8, min_similarity=0.0))
    assert [[i for i, _ in row] for row in rows] == [[0, 3, 1], [3, 0, 1], []]


def test_parameters_are_validated() -> None:
    with pytest.raises(InvalidParameters, match="top_k"):
        MatchParams(top_k=0)
    with pytest.raises(InvalidParameters, match="min_similarity"):
        MatchParams(min_similarity=2.0)


# -- branch-and-bound against brute force ------------------------------------------------------


def brute_force(matcher_: Matcher, query: QueryGraph, candidates: Candidates, facts: tuple[Fact, ...]) -> float:
    """The best score over every injective partial assignment, scored by the documented rules."""
    params = matcher_.params
    rows = candidate_rows(matcher_.similarity(query, candidates), params)
    relations = matcher_.relation_similarity(query)
    predicates = sorted(DOMAIN.language.predicates)
    adjacency = Adjacency(FactsConnectivity(facts))
    index = {n.id: i for i, n in enumerate(query.nodes)}

    def edge(e: int, a: str, b: str) -> float:
        linking = adjacency.predicates_between(a, b)
        if linking:
            return max(params.path_bonus, max(float(relations[e, predicates.index(p)]) for p in linking))
        if adjacency.distance(a, b, params.path_hops) is not None:
            return params.path_bonus
        return -params.disconnect_penalty

    best = 0.0
    for choice in itertools.product(*[[*row, None] for row in rows]):
        picked = [c[0] for c in choice if c is not None]
        if len(picked) != len(set(picked)):
            continue
        score = sum(c[1] for c in choice if c is not None)
        for e, q_edge in enumerate(query.edges):
            a, b = choice[index[q_edge.source]], choice[index[q_edge.target]]
            if a is not None and b is not None:
                score += edge(e, candidates.names[a[0]], candidates.names[b[0]])
        best = max(best, score)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_branch_and_bound_finds_the_brute_force_optimum(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"e{i}" for i in range(7)]
    words = ["alpha", "beta", "gamma", "on", "in", "is on", "is in", "connects to"]
    table = {w: [rng.gauss(0, 1) for _ in range(6)] for w in words}
    vectors = np.asarray([[rng.gauss(0, 1) for _ in range(6)] for _ in names], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    candidates = Candidates(tuple(names), ("item",) * len(names), vectors)
    predicates = ["on", "connected", "in_room"]
    facts = tuple(
        Fact(rng.choice(predicates), (a, b)) for a, b in itertools.permutations(names, 2) if rng.random() < 0.2
    )
    query = QueryGraph(
        tuple(QueryNode(n, rng.choice(["alpha", "beta", "gamma"])) for n in "xyz"),
        (QueryEdge("x", "y", rng.choice(["on", "in"])), QueryEdge("y", "z", rng.choice(["on", "in"]))),
    )
    single = matcher(LookupEmbedder(table, 6), margin=2.0, min_similarity=-1.0, top_k=4)
    result = single.match(query, candidates, FactsConnectivity(facts))
    assert not result.budget_exhausted
    assert result.score == pytest.approx(brute_force(single, query, candidates, facts), abs=1e-5)
