"""Search-based subgraph matching (L3M+P Alg. 2): ground a query graph in the world graph.

Node similarity comes from embeddings; query edges agree with the graph when a fact links
the two entities (scored by how close its predicate's English template is to the relation
phrase) or, more weakly, when a short path does. A depth-first search with branch-and-bound
and a visit budget finds the best assignment of distinct entities to query nodes.

The matcher knows nothing of stores: it takes candidate entities (names, types, vectors)
and a :class:`Connectivity` to ask for facts, so it can be pinned on hand-made graphs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from retrieval._graph import Adjacency, Connectivity
from retrieval._search import UNMAPPED, Assignment, MatchParams, Search, SearchInput, SearchOutcome
from retrieval._text_cache import CachedEmbedder
from retrieval.embedding import Embedder, EntityEmbeddings, Vectors, label_key, normalize, numbers
from retrieval.errors import InvalidParameters
from retrieval.query import QueryGraph

_PLACEHOLDER = re.compile(r"\{\d+\}")
MAX_LABEL_WORDS = 8  # the longest label a query's text is searched for


@dataclass(frozen=True, slots=True)
class Candidates:
    """The entities a query may map to: row ``i`` of ``vectors`` belongs to ``names[i]``."""

    names: tuple[str, ...]
    types: tuple[str, ...]
    vectors: Vectors
    kinds: tuple[str, ...] | None = None  # the distinct types; with ``codes``, row i is of kinds[codes[i]]
    codes: NDArray[np.intp] | None = None
    numbered: Mapping[tuple[str, ...], NDArray[np.intp]] | None = None  # label numbers -> rows
    labelled: Mapping[str, NDArray[np.intp]] | None = None  # label keys (label_key) -> rows

    def __post_init__(self) -> None:
        vectors = np.asarray(self.vectors, dtype=np.float32)
        if vectors.ndim != 2 or not len(self.names) == len(self.types) == vectors.shape[0]:
            raise InvalidParameters("search", {"candidates": len(self.names)}, "names, types and rows must align")
        paired = (self.kinds is None) == (self.codes is None)
        if not paired or (self.codes is not None and len(self.codes) != len(self.names)):
            raise InvalidParameters("search", {"candidates": len(self.names)}, "kinds and codes come together")
        object.__setattr__(self, "vectors", vectors)

    @classmethod
    def from_embeddings(cls, embeddings: EntityEmbeddings) -> Candidates:
        view = embeddings.view()
        return cls(view.names, view.types, embeddings.matrix, view.kinds, view.codes, view.numbered, view.labelled)

    def type_codes(self) -> tuple[tuple[str, ...], NDArray[np.intp]]:
        """The distinct types and each row's index into them (computed here when not given)."""
        if self.kinds is not None and self.codes is not None:
            return self.kinds, self.codes
        kinds, inverse = np.unique(np.asarray(self.types, dtype=str), return_inverse=True)
        return tuple(str(k) for k in kinds), inverse.astype(np.intp)


@dataclass(frozen=True, slots=True)
class Alternative:
    mapping: Mapping[str, str]
    score: float


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchResult:
    """The best mapping found (query node id -> entity name) and how it was found.

    A node with no candidate above ``min_similarity`` (or none of its type) is absent from
    ``mapping`` and listed in ``unmatched``; the rest is still matched. When the visit
    budget runs out, ``budget_exhausted`` is set and the best mapping so far is returned.
    ``alternatives`` are runner-up mappings of the same nodes, best first.
    """

    mapping: dict[str, str]
    score: float
    alternatives: tuple[Alternative, ...]
    visits: int
    budget_exhausted: bool
    unmatched: tuple[str, ...]
    node_scores: dict[str, float]
    candidates: dict[str, tuple[tuple[str, float], ...]]

    @property
    def complete(self) -> bool:
        return not self.unmatched


def relation_phrase(predicate: str, template: str | None) -> str:
    """The words of a predicate's template without its arguments: ``"{0} is on {1}"`` -> ``"is on"``."""
    words = " ".join(_PLACEHOLDER.sub(" ", template or "").split())
    return words or predicate.replace("_", " ")


class Matcher:
    """Matches query graphs against candidate entities; predicate phrases are embedded once."""

    def __init__(
        self,
        embedder: Embedder,
        relation_templates: Mapping[str, str],
        *,
        is_subtype: Callable[[str, str], bool] | None = None,
        known_types: Collection[str] | None = None,
        params: MatchParams | None = None,
    ) -> None:
        self.embedder = embedder
        self.params = params or MatchParams()
        self._predicates = tuple(sorted(relation_templates))
        self._phrases = tuple(relation_phrase(p, relation_templates[p]) for p in self._predicates)
        self._is_subtype = is_subtype or (lambda type_, ancestor: type_ == ancestor)
        self._known_types = frozenset(known_types) if known_types is not None else None
        self._phrase_vectors: Vectors | None = None
        # a private cache unless the caller shares one (SearchRetriever shares the process's)
        self.texts = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(embedder)

    def match(self, query: QueryGraph, candidates: Candidates, connectivity: Connectivity) -> MatchResult:
        texts = self.vectors([n.mention for n in query.nodes] + [e.relation for e in query.edges])  # one model call
        mentions, relations = texts[: len(query.nodes)], texts[len(query.nodes) :]
        similarity = self.similarity(query, candidates, mentions)
        rows = candidate_rows(similarity, self.params)
        outcome = Search(
            SearchInput(
                query=query,
                names=candidates.names,
                rows=rows,
                relations=self.relation_similarity(query, relations),
                predicates=self._predicates,
                adjacency=Adjacency(connectivity),
                params=self.params,
            )
        ).run()
        return _result(query, candidates.names, rows, outcome)

    def prepare(self) -> None:
        """Embed the predicates' templates now rather than in the first query with a relation."""
        if self._phrase_vectors is None and self._predicates:
            self._phrase_vectors = normalize(self.embedder.embed(self._phrases))

    def vectors(self, texts: Sequence[str]) -> Vectors:
        """Embeddings of query texts, through the text cache: running the model dominates a
        search's time and requests repeat their words ("mug", "on")."""
        return self.texts.embed(texts)

    def similarity(
        self, query: QueryGraph, candidates: Candidates, mentions: Vectors | None = None
    ) -> NDArray[np.float32]:
        """Cosine similarity (nodes x entities); entities of the wrong type get ``-inf``.
        ``mentions``: the nodes' vectors when the caller has them already."""
        if mentions is None:
            mentions = self.vectors([n.mention for n in query.nodes])
        # einsum, not BLAS: a product of a few rows by the whole matrix is bound by memory, and
        # BLAS's threads waited on each other on a busy machine (twice as slow at building scale)
        similarity: NDArray[np.float32] = np.einsum("ij,kj->ik", mentions, candidates.vectors)
        if any(n.type for n in query.nodes) and candidates.names:
            kinds, codes = candidates.type_codes()
            for row, node in enumerate(query.nodes):
                if node.type and (self._known_types is None or node.type in self._known_types):
                    allowed = np.fromiter((self._is_subtype(k, node.type) for k in kinds), bool, len(kinds))
                    similarity[row, ~allowed[codes]] = -np.inf
        if self.params.number_bonus and candidates.numbered:
            for row, node in enumerate(query.nodes):
                same = candidates.numbered.get(numbers(node.mention))
                if same is not None:
                    similarity[row, same] += self.params.number_bonus
        if self.params.spelled_bonus and query.text and candidates.labelled:
            for row, rows in spelled_rows(query, candidates.labelled).items():
                similarity[row, rows] += self.params.spelled_bonus
        return similarity

    def relation_similarity(self, query: QueryGraph, relations: Vectors | None = None) -> NDArray[np.float32]:
        """Cosine similarity (query edges x predicates) of relation phrases and templates."""
        if not query.edges or not self._predicates:
            return np.zeros((len(query.edges), len(self._predicates)), dtype=np.float32)
        self.prepare()
        assert self._phrase_vectors is not None
        if relations is None:
            relations = self.vectors([e.relation for e in query.edges])
        return relations @ self._phrase_vectors.T


def spelled_rows(query: QueryGraph, labelled: Mapping[str, NDArray[np.intp]]) -> dict[int, NDArray[np.intp]]:
    """Per query node (by row), the entities whose whole label the query's text spells out and holds
    the node's mention: "skirt 3" in "the brown skirt 3 needs washing" is a brown skirt 3. Only the
    longest labels spelled at a place count ("skirt 3" inside "brown skirt 3" does not)."""
    spelled = _spelled_labels(label_key(query.text).split(), labelled)
    found: dict[int, NDArray[np.intp]] = {}
    for row, node in enumerate(query.nodes):
        mention = f" {label_key(node.mention)} "
        keys = [key for key in spelled if mention.strip() and mention in f" {key} "]
        if keys:
            found[row] = np.unique(np.concatenate([labelled[key] for key in keys]))
    return found


def _spelled_labels(words: Sequence[str], labelled: Mapping[str, NDArray[np.intp]]) -> list[str]:
    """The labels that runs of ``words`` spell, each run not inside a longer one that spells a label."""
    spans = [
        (start, end)
        for start in range(len(words))
        for end in range(start + 1, min(len(words), start + MAX_LABEL_WORDS) + 1)
        if " ".join(words[start:end]) in labelled
    ]
    kept = [(a, b) for a, b in spans if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in spans)]
    return list(dict.fromkeys(" ".join(words[a:b]) for a, b in kept))


def candidate_rows(similarity: NDArray[np.float32], params: MatchParams) -> list[list[tuple[int, float]]]:
    """Per query node, ``(entity index, score)`` within ``margin`` of the row's best, best first.

    A row whose best is below ``min_similarity`` (or excluded by type) has no candidates.
    """
    rows: list[list[tuple[int, float]]] = []
    for row in similarity:
        best = float(row.max()) if row.size else -np.inf
        if not np.isfinite(best) or best < params.min_similarity:
            rows.append([])
            continue
        keep = np.flatnonzero(row >= max(best - params.margin, params.min_similarity))
        if keep.size > params.top_k:
            keep = keep[np.argpartition(-row[keep], params.top_k - 1)[: params.top_k]]
        order = sorted(keep.tolist(), key=lambda i: (-float(row[i]), i))
        rows.append([(i, float(row[i])) for i in order])
    return rows


def _mapping(query: QueryGraph, names: tuple[str, ...], assignment: Assignment) -> dict[str, str]:
    return {node.id: names[a] for node, a in zip(query.nodes, assignment, strict=True) if a != UNMAPPED}


def _mapped(assignment: Assignment) -> frozenset[int]:
    return frozenset(i for i, a in enumerate(assignment) if a != UNMAPPED)


def _result(
    query: QueryGraph, names: tuple[str, ...], rows: list[list[tuple[int, float]]], outcome: SearchOutcome
) -> MatchResult:
    """The search's ranked assignments as a :class:`MatchResult` keyed by node id and entity name."""
    best_score, best = outcome.ranked[0] if outcome.ranked else (0.0, (UNMAPPED,) * len(query.nodes))
    mapping = _mapping(query, names, best)
    similarity = [dict(row) for row in rows]
    return MatchResult(
        mapping=mapping,
        score=best_score,
        alternatives=tuple(
            Alternative(_mapping(query, names, a), s)
            for s, a in outcome.ranked[1:]
            if _mapped(a) == _mapped(best)  # a mapping that merely drops nodes is no alternative
        ),
        visits=outcome.visits,
        budget_exhausted=outcome.exhausted,
        unmatched=tuple(n.id for n in query.nodes if n.id not in mapping),
        node_scores={n.id: similarity[i][a] for i, (n, a) in enumerate(zip(query.nodes, best, strict=True)) if a >= 0},
        candidates={n.id: tuple((names[e], s) for e, s in rows[i]) for i, n in enumerate(query.nodes)},
    )
