"""Query texts embedded once per process: the LRU, its sharing, the memory's words pre-embedded at
sync, the type codes kept with the entity rows, and the history read only from its newest end."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from retrieval_fakes import LookupEmbedder, basis, shared_minilm

from kg_memory import Entity, Fact, WorldMemory
from retrieval import (
    CachedEmbedder,
    Candidates,
    EmbeddingError,
    EntityEmbeddings,
    FactsConnectivity,
    KeepsPerMemory,
    Matcher,
    MatchParams,
    MemoryBackend,
    QueryEdge,
    QueryGraph,
    QueryNode,
    SearchRetriever,
    SentenceTransformerEmbedder,
    entity_text,
    shared_cache,
    text_hash,
)
from retrieval.embedding import Vectors
from retrieval.retrievers import _last_seq, vocabulary

TEXTS = {"a": basis(4, (0, 1.0)), "b": basis(4, (1, 1.0)), "c": basis(4, (2, 1.0))}


def test_each_text_is_embedded_once_and_rows_come_back_in_order() -> None:
    inner = LookupEmbedder(TEXTS, 4)
    cache = CachedEmbedder(inner)
    first = cache.embed(["a", "b", "a"])
    second = cache.embed(["b", "c"])
    assert inner.calls == [["a", "b"], ["c"]]  # a repeated text is asked for once, a kept one never
    assert np.allclose(first, [TEXTS["a"], TEXTS["b"], TEXTS["a"]]) and np.allclose(second, [TEXTS["b"], TEXTS["c"]])
    assert (cache.hits, cache.misses) == (1, 4) and cache.embed([]).shape == (0, 4)


def test_the_least_recently_used_text_is_dropped_first() -> None:
    inner = LookupEmbedder(TEXTS, 4)
    cache = CachedEmbedder(inner, size=2)
    cache.embed(["a"])
    cache.embed(["b"])
    cache.embed(["a"])  # a is now more recent than b
    cache.embed(["c"])  # the cache is full: b goes, not a
    assert "a" in cache and "c" in cache and "b" not in cache and len(cache) == 2
    cache.embed(["a", "b"])
    assert inner.calls[-1] == ["b"]


def test_a_cache_of_size_zero_keeps_nothing_and_a_negative_size_is_refused() -> None:
    inner = LookupEmbedder(TEXTS, 4)
    cache = CachedEmbedder(inner, size=0)
    cache.embed(["a"])
    cache.embed(["a"])
    assert inner.calls == [["a"], ["a"]] and len(cache) == 0 and cache.warm(["a", "b"]) == 0
    with pytest.raises(EmbeddingError, match="-1"):
        CachedEmbedder(inner, size=-1)


def test_warming_embeds_in_batches_only_what_is_not_kept() -> None:
    inner = LookupEmbedder(TEXTS, 4)
    cache = CachedEmbedder(inner)
    cache.embed(["a"])
    assert cache.warm(["a", "b", "c", "b"], batch=1) == 2
    assert inner.calls == [["a"], ["b"], ["c"]]
    cache.embed(["c", "b"])
    assert len(inner.calls) == 3


def test_one_cache_per_model_in_a_process_and_a_private_one_without_a_key() -> None:
    minilm = shared_minilm()
    assert shared_cache(minilm) is shared_cache(minilm) is SearchRetriever(embedder=minilm).text_cache
    lookup = LookupEmbedder(TEXTS, 4)
    assert shared_cache(lookup) is not shared_cache(lookup)
    given = CachedEmbedder(lookup)
    assert shared_cache(given) is given and Matcher(given, {}).texts is given


def test_two_retrievers_embed_a_query_text_once(home: WorldMemory) -> None:
    minilm = shared_minilm()
    # a text new to this process: the cache is the process's, and other tests (this one on the other
    # store too) share it
    query = QueryGraph((QueryNode("m", f"a mug nobody has mentioned before {uuid.uuid4().hex}"),), ())
    first, second = SearchRetriever(embedder=minilm), SearchRetriever(embedder=minilm)
    first.embeddings(home), second.embeddings(home)  # entities and the memory's words first
    model = first.text_cache.inner  # the embedder the process's cache for MiniLM was made with
    assert second.text_cache is first.text_cache and isinstance(model, SentenceTransformerEmbedder)
    before = model.texts_embedded
    first.match(home, query)
    second.match(home, query)
    assert model.texts_embedded - before == 1


class _Counting:
    """The real model, counting the texts each call asks for."""

    def __init__(self) -> None:
        self.inner = shared_minilm()
        self.texts: list[str] = []

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_a_query_in_the_memorys_own_words_embeds_nothing_after_sync(home: WorldMemory) -> None:
    model = _Counting()
    search = SearchRetriever(embedder=model)
    search.embeddings(home)  # entities, the memory's words and the predicates' templates
    model.texts.clear()
    labels = QueryGraph(
        (QueryNode("m", "blue mug", "dish"), QueryNode("t", "kitchen table"), QueryNode("r", "kitchen")),
        (QueryEdge("m", "t", "on"), QueryEdge("t", "r", "in room")),
    )
    result = search.match(home, labels)
    assert model.texts == []
    assert result.mapping == {"m": "mug_1", "t": "table_1", "r": "kitchen"}
    unknown = QueryGraph((QueryNode("m", "the cup Alex likes"),), ())
    search.match(home, unknown)
    assert model.texts == ["the cup Alex likes"]  # a synonym is embedded when it comes


def test_without_pre_embedding_the_same_query_embeds_its_texts(home: WorldMemory) -> None:
    model = _Counting()
    search = SearchRetriever(embedder=model, text_cache=CachedEmbedder(model, size=0), preembed=False)
    search.embeddings(home)
    search.match(home, QueryGraph((QueryNode("warm", "start"),), ()))
    model.texts.clear()
    search.match(home, QueryGraph((QueryNode("m", "blue mug", "dish"),), ()))
    search.match(home, QueryGraph((QueryNode("m", "blue mug", "dish"),), ()))
    assert model.texts == ["blue mug", "blue mug"]


def test_the_vocabulary_puts_shared_labels_first_then_type_and_predicate_names() -> None:
    entities = [Entity("mug_1", "dish", "white mug"), Entity("mug_2", "dish", "white mug"), Entity("a", "item_box")]
    words = vocabulary([*entities, Entity("b", "room", "hall")], ["in_room"], limit=10)
    assert words[0] == "white mug" and {"dish", "item box", "in room", "hall", "room"} <= set(words)
    assert len(words) == len(set(words)) and len(vocabulary(entities, ["in_room"], limit=2)) == 2


def test_type_codes_kept_with_the_rows_give_the_same_similarity_as_computing_them() -> None:
    embedder = shared_minilm()
    entities = [
        Entity("mug_1", "dish", "mug"),
        Entity("table_1", "furniture", "kitchen table"),
        Entity("book_1", "item", "cookbook"),
        Entity("mug_2", "dish", "red mug"),
        Entity("shelf_1", "furniture", "hall shelf"),
    ]
    embeddings = EntityEmbeddings(embedder)
    embeddings.sync(entities)
    embeddings.sync([e for e in entities if e.name != "mug_1"] + [Entity("pan_1", "cookware", "pan")])  # rows swap
    kept = Candidates.from_embeddings(embeddings)
    computed = Candidates(embeddings.names, embeddings.types, embeddings.matrix)
    assert kept.kinds is not None and computed.kinds is None
    assert [kept.type_codes()[0][c] for c in kept.type_codes()[1]] == list(embeddings.types)
    matcher = Matcher(embedder, {}, is_subtype=lambda t, a: t == a, known_types={"dish", "furniture"})
    query = QueryGraph((QueryNode("a", "mug", "dish"), QueryNode("b", "table", "furniture"), QueryNode("c", "pan")), ())
    same = matcher.similarity(query, kept)
    assert np.array_equal(same, matcher.similarity(query, computed))
    assert np.isinf(same[0][list(embeddings.names).index("table_1")])  # the type still excludes
    with pytest.raises(Exception, match="kinds and codes"):
        Candidates(kept.names, kept.types, kept.vectors, kept.kinds, None)


def test_a_row_view_is_built_once_per_change() -> None:
    embeddings = EntityEmbeddings(LookupEmbedder({}, 4))
    embeddings.sync([Entity("a", "dish"), Entity("b", "room")])
    view = embeddings.view()
    assert embeddings.view() is view and view.names == ("a", "b")
    embeddings.sync([Entity("b", "room")])
    assert embeddings.view() is not view and embeddings.names == ("b",) and embeddings.types == ("room",)


class _Int8Like(LookupEmbedder):
    vector_space = "some model/int8"


def test_stored_vectors_of_another_vector_space_are_keyed_apart() -> None:
    mug = Entity("mug_1", "dish", "blue mug")
    backend = MemoryBackend()
    EntityEmbeddings(LookupEmbedder({}, 4), backend).sync([mug])
    published = backend.rows["mug_1"][0]
    assert published == text_hash(entity_text(mug))
    other = EntityEmbeddings(_Int8Like({}, 4), backend)
    assert other.sync([mug]) == 1  # the stored row is of another space: embedded again
    assert backend.rows["mug_1"][0] == text_hash(entity_text(mug), "some model/int8") != published


def test_the_first_sync_reads_the_newest_seq_not_the_whole_history(
    home: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    newest = home.history()[-1].seq
    reads: list[Any] = []
    original = home.store.history

    def history(memory: str, since_seq: int = 0, limit: int | None = None) -> Any:
        reads.append((since_seq, limit))
        return original(memory, since_seq, limit)

    monkeypatch.setattr(home.store, "history", history)
    assert _last_seq(home) == newest
    SearchRetriever(embedder=LookupEmbedder({}, 4)).embeddings(home)
    assert reads == []


def test_the_numbers_of_a_mention_pick_the_entity_labelled_with_them() -> None:
    ward_1 = Entity("bed_1", "furniture", "floor 1 ward 2 bed")
    ward_3 = Entity("bed_2", "furniture", "floor 3 ward 2 bed")
    plain = Entity("bed_3", "furniture", "bed")
    mention = "floor 1 ward 2 bed"
    table = {  # the model barely tells the numbers apart: the wrong bed is a hair closer
        entity_text(ward_1): basis(4, (0, 0.99), (1, 0.141)),
        entity_text(ward_3): basis(4, (0, 0.995), (1, 0.0999)),
        entity_text(plain): basis(4, (0, 0.9), (1, 0.436)),
        mention: basis(4, (0, 1.0)),
    }
    embeddings = EntityEmbeddings(LookupEmbedder(table, 4))
    embeddings.sync([ward_1, ward_3, plain])
    candidates = Candidates.from_embeddings(embeddings)
    assert candidates.numbered == {("1", "2"): [embeddings.names.index("bed_1")], ("3", "2"): [1]}
    query = QueryGraph((QueryNode("b", mention),), ())
    lookup = LookupEmbedder(table, 4)
    without = Matcher(lookup, {}, params=MatchParams(number_bonus=0)).match(query, candidates, FactsConnectivity(()))
    with_numbers = Matcher(lookup, {}).match(query, candidates, FactsConnectivity(()))
    assert without.mapping == {"b": "bed_2"} and with_numbers.mapping == {"b": "bed_1"}
    unnumbered = Matcher(lookup, {}).similarity(QueryGraph((QueryNode("b", "a bed"),), ()), candidates)
    assert float(unnumbered.max()) <= 1.0  # a mention without numbers gets no bonus anywhere
    embeddings.sync([ward_3, plain])
    assert Candidates.from_embeddings(embeddings).numbered == {("3", "2"): [embeddings.names.index("bed_2")]}


def test_things_named_together_prefer_entities_near_each_other() -> None:
    blue = Entity("bowl_1", "dish", "blue bowl")
    white = Entity("bowl_2", "dish", "white bowl")
    east, west = Entity("kitchen_1", "room", "east kitchen"), Entity("kitchen_2", "room", "west kitchen")
    table = {  # the white bowl is a hair closer to "bowl"; the mention of the east kitchen decides
        entity_text(blue): basis(4, (0, 0.99), (1, 0.141)),
        entity_text(white): basis(4, (0, 0.995), (1, 0.0999)),
        entity_text(east): basis(4, (2, 1.0)),
        entity_text(west): basis(4, (2, 0.9), (1, 0.436)),
        "bowl": basis(4, (0, 1.0)),
        "east kitchen": basis(4, (2, 1.0)),
    }
    placed = ("(on bowl_1 counter_1)", "(in_room counter_1 kitchen_1)")
    facts = [Fact.parse(f) for f in (*placed, "(on bowl_2 counter_2)", "(in_room counter_2 kitchen_2)")]
    embeddings = EntityEmbeddings(LookupEmbedder(table, 4))
    embeddings.sync([blue, white, east, west])
    candidates = Candidates.from_embeddings(embeddings)
    query = QueryGraph((QueryNode("b", "bowl"), QueryNode("k", "east kitchen")), ())  # no stated relation
    apart = Matcher(LookupEmbedder(table, 4), {}).match(query, candidates, FactsConnectivity(facts))
    near = Matcher(LookupEmbedder(table, 4), {}, params=MatchParams(nearby_bonus=0.1))
    together = near.match(query, candidates, FactsConnectivity(facts))
    assert apart.mapping == {"b": "bowl_2", "k": "kitchen_1"}
    assert together.mapping == {"b": "bowl_1", "k": "kitchen_1"}
    with pytest.raises(Exception, match="nearby_bonus"):
        MatchParams(nearby_bonus=-0.1)


def test_a_memory_made_again_under_its_name_is_embedded_afresh(home: WorldMemory) -> None:
    retriever = SearchRetriever(embedder=LookupEmbedder({}, 4), preembed=False)
    assert "mug_1" in retriever.embeddings(home).names
    home.store.delete_memory(home.name)
    again = WorldMemory.create(home.store, home.name, "example_home")
    assert retriever.embeddings(again).names == ("robot_1",)  # none of the deleted memory's entities


def test_a_deleted_memory_s_embeddings_are_let_go_of(home: WorldMemory) -> None:
    retriever = SearchRetriever(embedder=LookupEmbedder({}, 4), preembed=False)
    first = retriever.embeddings(home)
    assert isinstance(retriever, KeepsPerMemory) and retriever.embeddings(home) is first  # kept while in use
    retriever.forget(home.store, "another")  # another memory's name: nothing of this one goes
    assert retriever.embeddings(home) is first
    retriever.forget(home.store, home.name)
    assert retriever.embeddings(home) is not first  # read afresh: nothing was kept of it
