"""MiniLM's runtimes by name: sentence-transformers on torch, or ONNX Runtime."""

from __future__ import annotations

from retrieval._onnx import OnnxEmbedder
from retrieval.embedding import Embedder, SentenceTransformerEmbedder
from retrieval.errors import EmbeddingError

EMBEDDERS = ("torch", "onnx", "onnx-int8")
DEFAULT_EMBEDDER = "torch"


def embedder_named(name: str) -> Embedder:
    """MiniLM on a runtime by name: ``torch`` (sentence-transformers), ``onnx`` (ONNX Runtime, the
    same vectors) or ``onnx-int8`` (int8 weights: faster, vectors of its own)."""
    if name == "torch":
        return SentenceTransformerEmbedder()
    if name in ("onnx", "onnx-int8"):
        return OnnxEmbedder(quantized=name == "onnx-int8")
    raise EmbeddingError(name, f"unknown embedder: use one of {', '.join(EMBEDDERS)}")
