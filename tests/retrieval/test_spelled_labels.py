"""A model's shortened mention ("skirt 3" for "the brown skirt 3") resolved by the words the query
graph was read from: entities whose whole label those words spell out are preferred, the longest
label at a place only, and the label index follows the entities as they change."""

from __future__ import annotations

from retrieval_fakes import LookupEmbedder, basis

from kg_memory import Entity
from retrieval import (
    Candidates,
    EntityEmbeddings,
    FactsConnectivity,
    Matcher,
    MatchParams,
    QueryGraph,
    QueryNode,
    entity_text,
)
from retrieval.embedding import label_key
from retrieval.matcher import _spelled_labels

COLOURS = ("red", "blue", "green", "yellow", "white", "black", "grey", "orange", "purple", "pink", "brown")
TEXT = "The brown skirt 3 needs washing and drying."


def skirts() -> list[Entity]:
    return [Entity(f"skirt_{i}", "clothing", f"{colour} skirt 3") for i, colour in enumerate(COLOURS)]


def table(entities: list[Entity]) -> dict[str, list[float]]:
    """Every skirt as close to the mention as the next; the brown one a hair further than the rest."""
    rows = {entity_text(e): basis(4, (0, 0.99), (1, 0.141)) for e in entities}
    rows[entity_text(entities[-1])] = basis(4, (0, 0.98), (1, 0.199))
    return rows | {"skirt 3": basis(4, (0, 1.0))}


def test_label_keys_are_lower_case_words() -> None:
    assert label_key("  Brown  skirt-3, ") == "brown skirt 3"
    assert label_key("floor_2") == "floor 2"


def test_only_the_longest_label_spelled_at_a_place_counts() -> None:
    labelled = {"brown skirt 3": [0], "skirt 3": [1], "red skirt 3": [2], "washing": [3]}
    words = label_key(TEXT).split()
    assert _spelled_labels(words, labelled) == ["brown skirt 3", "washing"]  # type: ignore[arg-type]


def test_the_text_picks_the_entity_whose_label_it_spells() -> None:
    entities = skirts()
    lookup = LookupEmbedder(table(entities), 4)
    embeddings = EntityEmbeddings(lookup)
    embeddings.sync(entities)
    candidates = Candidates.from_embeddings(embeddings)
    bare = QueryGraph((QueryNode("n1", "skirt 3"),))
    spoken = QueryGraph((QueryNode("n1", "skirt 3"),), text=TEXT)
    none = FactsConnectivity(())
    assert Matcher(lookup, {}).match(bare, candidates, none).mapping != {"n1": "skirt_10"}
    assert Matcher(lookup, {}).match(spoken, candidates, none).mapping == {"n1": "skirt_10"}
    off = Matcher(lookup, {}, params=MatchParams(spelled_bonus=0)).match(spoken, candidates, none)
    assert off.mapping != {"n1": "skirt_10"}


def test_a_mention_the_spelled_label_does_not_hold_gets_nothing() -> None:
    entities = skirts()
    lookup = LookupEmbedder(table(entities) | {"skirt": basis(4, (0, 1.0)), "Tariq": basis(4, (2, 1.0))}, 4)
    embeddings = EntityEmbeddings(lookup)
    embeddings.sync(entities)
    candidates = Candidates.from_embeddings(embeddings)
    query = QueryGraph((QueryNode("n1", "Tariq"),), text=TEXT)
    plain = QueryGraph((QueryNode("n1", "Tariq"),))
    matcher = Matcher(lookup, {})
    assert (matcher.similarity(query, candidates) == matcher.similarity(plain, candidates)).all()


def test_the_label_index_follows_renames_and_removals() -> None:
    entities = skirts()
    embeddings = EntityEmbeddings(LookupEmbedder(table(entities), 4))
    embeddings.sync(entities)
    assert list(Candidates.from_embeddings(embeddings).labelled["brown skirt 3"]) == [  # type: ignore[index]
        embeddings.names.index("skirt_10")
    ]
    renamed = [*entities[:-1], Entity("skirt_10", "clothing", "red skirt 3")]
    lookup = LookupEmbedder(table(entities) | {entity_text(renamed[-1]): basis(4, (0, 1.0))}, 4)
    embeddings.embedder = lookup
    embeddings.sync(renamed)
    labelled = Candidates.from_embeddings(embeddings).labelled
    assert labelled is not None and "brown skirt 3" not in labelled and len(labelled["red skirt 3"]) == 2
    embeddings.sync(renamed[1:])
    labelled = Candidates.from_embeddings(embeddings).labelled
    assert labelled is not None and list(labelled["red skirt 3"]) == [embeddings.names.index("skirt_10")]


def test_a_view_keeps_the_labels_it_was_made_from_while_the_entities_change() -> None:
    entities = skirts()
    embeddings = EntityEmbeddings(LookupEmbedder(table(entities), 4))
    embeddings.sync(entities)
    before = embeddings.view()
    renamed = [*entities[:-1], Entity("skirt_10", "clothing", "red skirt 3")]
    embeddings.embedder = LookupEmbedder(table(entities) | {entity_text(renamed[-1]): basis(4, (0, 1.0))}, 4)
    embeddings.sync(renamed)  # nothing of the old view was asked for before this change
    after = embeddings.view()
    assert list(before.labelled["brown skirt 3"]) == [before.names.index("skirt_10")]
    assert sorted(before.labelled["red skirt 3"]) == [before.names.index("skirt_0")]
    assert "brown skirt 3" not in after.labelled and len(after.labelled) == len(before.labelled) - 1
    assert sorted(after.labelled["red skirt 3"]) == sorted(after.names.index(n) for n in ("skirt_0", "skirt_10"))
    assert sorted(after.numbered[("3",)]) == list(range(len(entities)))


def test_the_text_travels_with_the_query_graph_as_json() -> None:
    graph = QueryGraph((QueryNode("n1", "skirt 3"),), text=TEXT)
    assert QueryGraph.from_json(graph.to_json()) == graph
    assert "text" not in QueryGraph((QueryNode("n1", "skirt 3"),)).to_json()
