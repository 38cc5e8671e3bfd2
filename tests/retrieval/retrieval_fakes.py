"""Embedders for the retrieval tests: the real model, loaded once, and a lookup table."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np

from retrieval import SentenceTransformerEmbedder
from retrieval.embedding import Vectors, normalize


@functools.cache
def shared_minilm() -> SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2, loaded once per test session (it takes a few seconds)."""
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    return embedder


class LookupEmbedder:
    """Texts map to given vectors (any other text to a vector orthogonal to all of them), so
    similarities, and hence match scores, are exact numbers a test can pin."""

    def __init__(self, table: Mapping[str, Sequence[float]], dimension: int) -> None:
        self.table = {text: np.asarray(v, dtype=np.float32) for text, v in table.items()}
        self.dimension = dimension
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        other = np.zeros(self.dimension, dtype=np.float32)
        other[-1] = 1.0
        rows = [self.table.get(t, other) for t in texts]
        return normalize(np.stack(rows) if rows else np.zeros((0, self.dimension), dtype=np.float32))


def basis(dimension: int, *weights: tuple[int, float]) -> list[float]:
    """A vector with the given (axis, weight) components."""
    vector = [0.0] * dimension
    for axis, weight in weights:
        vector[axis] = weight
    return vector
