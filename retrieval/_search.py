"""The depth-first search of Alg. 2, with branch-and-bound and a visit budget.

Nodes are assigned most constrained first (fewest candidates, then highest best score),
each to a distinct entity or, last, to nothing. A branch is cut when even the best
remaining node and edge scores could not lift it above the worst mapping still kept.
The first descent is greedy and always completes, so a result exists whatever the budget:
visits stay within ``max(budget, query nodes + 1)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray

from retrieval._graph import Adjacency
from retrieval.errors import InvalidParameters
from retrieval.query import QueryGraph

UNMAPPED = -1
Assignment = tuple[int, ...]  # entity index per query node, UNMAPPED where none


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchParams:
    """Knobs of the search; the defaults suit all-MiniLM-L6-v2 cosine similarities.

    ``margin``: keep a node's candidates scoring at least its best score minus this.
    ``top_k``: at most this many candidates per node. ``min_similarity``: below this a node
    has no candidate and stays unmatched. ``path_hops``/``path_bonus``: a query edge whose
    entities are joined by a path this short (but no fact) earns the bonus;
    ``disconnect_penalty`` is subtracted when they are not. ``budget``: DFS nodes to visit
    at most. ``alternatives``: runner-up mappings to report. ``number_bonus``: added to the
    similarity of entities whose label has the same numbers as the mention ("floor 3 ward 12");
    sentence embeddings barely tell numbers apart, and in a building they are what tells one
    ward from the next. ``nearby_bonus``: added for two nodes the query does not relate when their
    entities are within ``path_hops`` (things named together are usually near each other).
    ``spelled_bonus``: added to the similarity of entities whose whole label the query's text spells
    out around the node's mention (a model's "bowl 22" for "the blue bowl 22").
    """

    margin: float = 0.15
    top_k: int = 8
    min_similarity: float = 0.3
    path_hops: int = 2
    path_bonus: float = 0.25
    disconnect_penalty: float = 0.1
    budget: int = 10_000
    alternatives: int = 3
    number_bonus: float = 0.05
    nearby_bonus: float = 0.0
    spelled_bonus: float = 0.1

    def __post_init__(self) -> None:
        problems = [
            f"{name} must be at least {low}"
            for name, low in (("margin", 0), ("top_k", 1), ("path_hops", 1), ("budget", 1), ("alternatives", 0))
            if getattr(self, name) < low
        ]
        if not -1.0 <= self.min_similarity <= 1.0:
            problems.append("min_similarity must lie in [-1, 1]")
        bonuses = ("path_bonus", "disconnect_penalty", "number_bonus", "nearby_bonus", "spelled_bonus")
        if min(getattr(self, b) for b in bonuses) < 0:
            problems.append(f"{', '.join(bonuses)} must not be negative")
        if problems:
            raise InvalidParameters("search", asdict(self), "; ".join(problems))


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchInput:
    query: QueryGraph
    names: Sequence[str]
    rows: Sequence[Sequence[tuple[int, float]]]  # per query node: (entity index, similarity), best first
    relations: NDArray[np.float32]  # query edges x predicates
    predicates: Sequence[str]
    adjacency: Adjacency
    params: MatchParams


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    ranked: tuple[tuple[float, Assignment], ...]  # best first
    visits: int
    exhausted: bool


class Search:
    def __init__(self, data: SearchInput) -> None:
        self._d = data
        self._p = data.params
        nodes = data.query.nodes
        index = {n.id: i for i, n in enumerate(nodes)}
        self._order = sorted(
            (i for i in range(len(nodes)) if data.rows[i]), key=lambda i: (len(data.rows[i]), -data.rows[i][0][1], i)
        )
        depth_of = {node: depth for depth, node in enumerate(self._order)}
        self._predicate_index = {p: j for j, p in enumerate(data.predicates)}
        # each usable edge is scored when its later endpoint (in search order) is assigned
        self._edges_at: list[list[tuple[int, int, int]]] = [[] for _ in self._order]
        edge_max: list[float] = []
        for e, edge in enumerate(data.query.edges):
            source, target = index[edge.source], index[edge.target]
            if source in depth_of and target in depth_of:
                self._edges_at[max(depth_of[source], depth_of[target])].append((e, source, target))
            best_relation = float(data.relations[e].max()) if data.relations.shape[1] else 0.0
            edge_max.append(max(self._p.path_bonus, best_relation))
        self._near_at: list[list[tuple[int, int]]] = [[] for _ in self._order]
        if self._p.nearby_bonus:
            related = {frozenset((index[e.source], index[e.target])) for e in data.query.edges}
            for a, b in itertools.combinations(self._order, 2):
                if frozenset((a, b)) not in related:
                    self._near_at[max(depth_of[a], depth_of[b])].append((a, b))
        self._rest = self._bounds(edge_max)
        self._assign = [UNMAPPED] * len(nodes)
        self._used: set[int] = set()
        self._keep = self._p.alternatives + 1
        self._ranked: list[tuple[float, Assignment]] = []
        self._visits = 0
        self._stopped = False

    def _bounds(self, edge_max: Sequence[float]) -> list[float]:
        """``rest[d]``: the most that depths ``d..`` can still add (suffix sums)."""
        rest = [0.0] * (len(self._order) + 1)
        for depth in range(len(self._order) - 1, -1, -1):
            node_best = max(0.0, self._d.rows[self._order[depth]][0][1])
            edges_best = sum(edge_max[e] for e, _, _ in self._edges_at[depth])
            edges_best += self._p.nearby_bonus * len(self._near_at[depth])
            rest[depth] = rest[depth + 1] + node_best + edges_best
        return rest

    def run(self) -> SearchOutcome:
        self._dfs(0, 0.0)
        return SearchOutcome(tuple(self._ranked), self._visits, self._stopped)

    def _dfs(self, depth: int, score: float) -> None:
        if self._ranked and self._visits >= self._p.budget:
            self._stopped = True
            return
        self._visits += 1
        if depth == len(self._order):
            self._record(score)
            return
        if score + self._rest[depth] <= self._threshold():
            return
        node = self._order[depth]
        for entity, similarity in self._d.rows[node]:
            if entity in self._used:
                continue
            self._assign[node] = entity
            self._used.add(entity)
            self._dfs(depth + 1, score + similarity + self._edge_gain(depth))
            self._used.discard(entity)
            self._assign[node] = UNMAPPED
            if self._stopped:
                return
        self._dfs(depth + 1, score)  # the node maps to nothing: no node score, its edges score 0

    def _threshold(self) -> float:
        return self._ranked[-1][0] if len(self._ranked) >= self._keep else -np.inf

    def _record(self, score: float) -> None:
        entry = (score, tuple(self._assign))
        position = next((i for i, (s, _) in enumerate(self._ranked) if score > s), len(self._ranked))
        self._ranked.insert(position, entry)
        del self._ranked[self._keep :]

    def _edge_gain(self, depth: int) -> float:
        gain = 0.0
        for e, source, target in self._edges_at[depth]:
            a, b = self._assign[source], self._assign[target]
            if a != UNMAPPED and b != UNMAPPED:
                gain += self._edge_score(e, self._d.names[a], self._d.names[b])
        for source, target in self._near_at[depth]:
            a, b = self._assign[source], self._assign[target]
            if a != UNMAPPED and b != UNMAPPED:
                near = self._d.adjacency.distance(self._d.names[a], self._d.names[b], self._p.path_hops)
                gain += self._p.nearby_bonus if near is not None else 0.0
        return gain

    def _edge_score(self, edge: int, a: str, b: str) -> float:
        """Relation agreement of a fact joining ``a`` and ``b``; else a path bonus; else a penalty."""
        adjacency = self._d.adjacency
        linking = adjacency.predicates_between(a, b)
        if linking:
            index = self._predicate_index
            best = max((float(self._d.relations[edge, index[p]]) for p in linking if p in index), default=0.0)
            return max(self._p.path_bonus, best)
        if self._p.path_hops >= 2 and adjacency.distance(a, b, self._p.path_hops) is not None:
            return self._p.path_bonus
        return -self._p.disconnect_penalty
