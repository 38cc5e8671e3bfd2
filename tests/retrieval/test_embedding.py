"""Entity embeddings: computed once, refreshed only when an entity's text changes."""

from __future__ import annotations

import numpy as np
from retrieval_fakes import shared_minilm

from kg_memory import Entity
from retrieval import EntityEmbeddings, MemoryBackend, SentenceTransformerEmbedder, entity_text

MUG = Entity("mug_1", "dish", "blue mug")
TABLE = Entity("table_1", "furniture", "kitchen table")
OVEN = Entity("oven_1", "appliance")


def test_entity_text_names_label_name_and_type() -> None:
    assert entity_text(MUG) == "blue mug (mug_1, a dish)"
    assert entity_text(OVEN) == "oven 1 (oven_1, an appliance)"


def test_the_real_model_gives_normalized_float32_rows() -> None:
    vectors = shared_minilm().embed(["blue mug", "kitchen table"])
    assert vectors.dtype == np.float32 and vectors.shape == (2, shared_minilm().dimension) == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert shared_minilm().embed([]).shape == (0, 384)


def test_only_changed_texts_are_embedded_and_rows_stay_aligned() -> None:
    embeddings = EntityEmbeddings(shared_minilm())
    assert embeddings.sync([MUG, TABLE, OVEN]) == 3
    assert embeddings.sync([MUG, TABLE, OVEN]) == 0
    assert embeddings.sync([Entity("mug_1", "dish", "red mug"), TABLE, OVEN]) == 1
    assert embeddings.sync([TABLE, OVEN]) == 0 and "mug_1" not in embeddings  # pruned, swapped rows
    assert embeddings.computed == 4
    expected = shared_minilm().embed([entity_text(TABLE), entity_text(OVEN)])
    for name, vector in zip(("table_1", "oven_1"), expected, strict=True):
        assert np.allclose(embeddings.vector(name), vector, atol=1e-5)
    assert embeddings.matrix.shape == (2, 384) and set(embeddings.names) == {"table_1", "oven_1"}


def test_a_backend_warms_a_new_cache() -> None:
    backend = MemoryBackend()
    EntityEmbeddings(shared_minilm(), backend).sync([MUG, TABLE])
    fresh = EntityEmbeddings(shared_minilm(), backend)
    assert fresh.sync([MUG, TABLE, OVEN]) == 1 and fresh.computed == 1
    assert set(backend.rows) == {"mug_1", "table_1", "oven_1"}


def test_every_embedder_of_a_process_shares_one_loaded_model() -> None:
    first, second = SentenceTransformerEmbedder(), SentenceTransformerEmbedder()
    assert first._load() is second._load()  # the weights load once, however many retrievers a run has
    assert np.allclose(first.embed(["blue mug"]), second.embed(["blue mug"]))
