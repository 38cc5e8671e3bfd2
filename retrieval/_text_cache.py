"""Query texts embedded once per process: an LRU of text -> vector in front of an embedder.

Requests repeat their words ("mug", "kitchen table", "on"), and running the model dominates a
warm search's time, so every retriever and matcher of a process shares one cache per model
(:func:`shared_cache`). Entity texts do not go through it: there are far more of them, each
embedded once and kept by :class:`~retrieval.embedding.EntityEmbeddings`, and they would evict
the query vocabulary.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

import numpy as np

from retrieval.embedding import Embedder, Vectors, normalize, vector_space
from retrieval.errors import EmbeddingError

TEXT_CACHE_SIZE = 16_384  # distinct query texts kept per model (a 384-d row is 1.5 kB)


class CachedEmbedder:
    """An :class:`Embedder` that asks ``inner`` only for texts it has not kept.

    Least recently used texts are dropped first once ``size`` are kept (``size=0`` keeps
    nothing: every text is embedded every time). ``hits`` and ``misses`` count texts.
    """

    def __init__(self, inner: Embedder, *, size: int = TEXT_CACHE_SIZE) -> None:
        if size < 0:
            raise EmbeddingError("text cache", f"size must be at least 0, got {size}")
        self.inner = inner
        self.size = size
        self.hits = 0
        self.misses = 0
        self._rows: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def vector_space(self) -> str:
        return vector_space(self.inner)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, text: object) -> bool:
        return text in self._rows

    def embed(self, texts: Sequence[str]) -> Vectors:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        found = self._take(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = dict(zip(missing, normalize(self.inner.embed(missing)), strict=True))
            found.update(fresh)
            self._keep(fresh)
        return np.stack([found[t] for t in texts])

    def warm(self, texts: Sequence[str], *, batch: int = 256) -> int:
        """Embed the texts not kept yet, in large batches (a vocabulary known ahead of the
        queries); returns how many were embedded."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._rows))
        missing = missing[: self.size]
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            self._keep(dict(zip(chunk, normalize(self.inner.embed(chunk)), strict=True)))
        return len(missing)

    def _take(self, texts: list[str]) -> dict[str, Vectors]:
        with self._lock:
            found = {}
            for text in texts:
                row = self._rows.get(text)
                if row is not None:
                    self._rows.move_to_end(text)
                    found[text] = row
            self.hits += sum(1 for t in texts if t in found)
            self.misses += sum(1 for t in texts if t not in found)
            return found

    def _keep(self, rows: dict[str, Vectors]) -> None:
        if not self.size:
            return
        with self._lock:
            for text, row in rows.items():
                self._rows[text] = row
                self._rows.move_to_end(text)
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)


_SHARED: dict[Hashable, CachedEmbedder] = {}
_SHARING = threading.Lock()


def shared_cache(embedder: Embedder) -> CachedEmbedder:
    """The process's one cache for ``embedder``'s model (its ``cache_key``), so every retriever
    of a run shares the texts embedded; an embedder without a key (a test's lookup table, a
    benchmark's clock) gets a cache of its own."""
    if isinstance(embedder, CachedEmbedder):
        return embedder
    key = getattr(embedder, "cache_key", None)
    if key is None:
        return CachedEmbedder(embedder)
    with _SHARING:
        if key not in _SHARED:
            _SHARED[key] = CachedEmbedder(embedder)
        return _SHARED[key]
