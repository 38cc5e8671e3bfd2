"""MiniLM on ONNX Runtime, exported from the packaged weights: the same vectors as torch at full
precision, its own vector space at int8, and named the way the settings name it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from retrieval_fakes import shared_minilm

from kg_memory import Entity
from l3mp.pipelines.nl_update import sized_retriever
from retrieval import (
    EMBEDDERS,
    EmbeddingError,
    EntityEmbeddings,
    MemoryBackend,
    OnnxEmbedder,
    SearchRetriever,
    SentenceTransformerEmbedder,
    embedder_named,
    entity_text,
    text_hash,
)
from sim import HomeSpec, generate_home

pytestmark = pytest.mark.slow  # the first use exports the model (seconds)


@pytest.fixture(scope="module")
def onnx() -> OnnxEmbedder:
    embedder = OnnxEmbedder()
    embedder.embed(["warm up"])
    return embedder


def domain_texts() -> list[str]:
    """50 texts as a search embeds them: entity texts, labels, and relation phrases."""
    home = generate_home(HomeSpec(seed=0))
    entities = sorted(home.entities, key=lambda e: e.name)[::8][:30]
    return [entity_text(e) for e in entities[:20]] + [e.label for e in entities[20:]] + [
        "is on", "inside", "held by", "on top of", "the pink mug Alex put on the kitchen table",
        "Clara", "main laundry room overhead light", "couch", "in the hand of", "is switched on",
        "television", "bedside table", "cup", "dirty", "filled with coffee", "downstairs hallway",
        "leads to", "stored in", "the robot", "a very long request " * 60,
    ]  # fmt: skip


def test_onnx_rows_equal_torchs_on_domain_texts(onnx: OnnxEmbedder) -> None:
    texts = domain_texts()
    assert len(texts) == 50
    ours, theirs = onnx.embed(texts), shared_minilm().embed(texts)
    assert ours.dtype == np.float32 and ours.shape == theirs.shape == (50, 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float((ours * theirs).sum(axis=1).min()) >= 0.999


def test_a_large_batch_sorted_by_length_gives_each_texts_own_row(onnx: OnnxEmbedder) -> None:
    texts = domain_texts()  # more than a small batch: the multi-threaded session, padded per chunk
    one_by_one = np.stack([onnx.embed([t])[0] for t in texts])
    assert np.allclose(onnx.embed(texts), one_by_one, atol=1e-5)
    assert onnx.embed([]).shape == (0, 384)


def test_int8_is_close_but_has_a_vector_space_of_its_own() -> None:
    int8 = OnnxEmbedder(quantized=True)
    texts = domain_texts()[:20]
    cosine = (int8.embed(texts) * shared_minilm().embed(texts)).sum(axis=1)
    assert float(cosine.min()) > 0.8 and float(cosine.mean()) < 0.9999  # close, not the same rows
    assert int8.vector_space != "" == OnnxEmbedder().vector_space == getattr(shared_minilm(), "vector_space", "")
    text = entity_text(Entity("mug_1", "dish", "blue mug"))
    assert text_hash(text, int8.vector_space) != text_hash(text, OnnxEmbedder().vector_space) == text_hash(text)


def test_full_precision_onnx_reuses_vectors_torch_stored(onnx: OnnxEmbedder) -> None:
    backend = MemoryBackend()
    entities = [Entity("mug_1", "dish", "blue mug"), Entity("table_1", "furniture", "kitchen table")]
    EntityEmbeddings(shared_minilm(), backend).sync(entities)
    assert EntityEmbeddings(onnx, backend).sync(entities) == 0


def test_the_export_is_made_once_into_the_cache_folder(tmp_path: Path) -> None:
    first = OnnxEmbedder(cache=tmp_path)
    vector = first.embed(["blue mug"])
    files = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert files == ["model.onnx"]  # no temporary file is left behind
    stamp = next(tmp_path.rglob("model.onnx")).stat().st_mtime_ns
    assert np.allclose(OnnxEmbedder(cache=tmp_path).embed(["blue mug"]), vector)
    assert next(tmp_path.rglob("model.onnx")).stat().st_mtime_ns == stamp


def test_a_folder_without_weights_is_an_embedding_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"model\.safetensors"):
        OnnxEmbedder(tmp_path, cache=tmp_path / "cache").embed(["mug"])


def test_embedders_by_name() -> None:
    assert EMBEDDERS == ("torch", "onnx", "onnx-int8")
    assert isinstance(embedder_named("torch"), SentenceTransformerEmbedder)
    int8 = embedder_named("onnx-int8")
    assert isinstance(int8, OnnxEmbedder) and int8.quantized
    with pytest.raises(EmbeddingError, match="'tpu'"):
        embedder_named("tpu")
    search = sized_retriever("search", 40, embedder="onnx")
    assert isinstance(search, SearchRetriever) and isinstance(search.embedder, OnnxEmbedder)
    assert search.params.max_facts == 40 and not search.embedder.quantized
    assert isinstance(sized_retriever("search", None).embedder, SentenceTransformerEmbedder)  # type: ignore[attr-defined]
