"""Which entities touch which, read lazily from a store and cached for one search.

The matcher asks about a handful of candidate entities; reading the whole graph for that
would cost more than the search, so facts are fetched per batch of names, once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from kg_memory.model import Fact


@runtime_checkable
class Connectivity(Protocol):
    """Facts that mention any of ``names`` (extra facts, e.g. nullary ones, are ignored)."""

    def facts_about(self, names: Iterable[str]) -> Iterable[Fact]: ...


class FactsConnectivity:
    """:class:`Connectivity` over a collection of facts held in memory (tests, small worlds)."""

    def __init__(self, facts: Iterable[Fact]) -> None:
        self._by_name: dict[str, set[Fact]] = defaultdict(set)
        for fact in facts:
            for arg in fact.args:
                self._by_name[arg].add(fact)

    def facts_about(self, names: Iterable[str]) -> Iterable[Fact]:
        found: set[Fact] = set()
        for name in names:
            found |= self._by_name.get(name, set())
        return found


class Adjacency:
    """Predicates linking entity pairs and short-path reachability, fetched once per name."""

    def __init__(self, connectivity: Connectivity) -> None:
        self._connectivity = connectivity
        self._links: dict[str, dict[str, set[str]]] = {}
        self._reach: dict[tuple[str, int], dict[str, int]] = {}
        self.fetches = 0

    def ensure(self, names: Iterable[str]) -> None:
        """Read the facts of every name not read yet, in one call."""
        missing = {n for n in names if n not in self._links}
        if not missing:
            return
        self.fetches += 1
        for name in missing:
            self._links[name] = {}
        for fact in self._connectivity.facts_about(sorted(missing)):
            for arg in fact.args:
                if arg in missing:
                    links = self._links[arg]
                    for other in fact.args:
                        if other != arg:
                            links.setdefault(other, set()).add(fact.predicate)

    def predicates_between(self, a: str, b: str) -> frozenset[str]:
        """Predicates of facts that mention both ``a`` and ``b`` (either order)."""
        self.ensure((a,))
        return frozenset(self._links[a].get(b, ()))

    def distance(self, a: str, b: str, hops: int) -> int | None:
        """Length of the shortest path from ``a`` to ``b`` if it is at most ``hops``, else ``None``."""
        for start, goal in ((a, b), (b, a)):
            reach = self._reach.get((start, hops))
            if reach is not None:
                return reach.get(goal)
        return self._reachable(a, hops).get(b)

    def _reachable(self, start: str, hops: int) -> dict[str, int]:
        """Breadth first from ``start``: one batched read per hop."""
        reach = {start: 0}
        frontier = [start]
        for depth in range(1, hops + 1):
            self.ensure(frontier)
            frontier = sorted({o for n in frontier for o in self._links[n] if o not in reach})
            reach.update(dict.fromkeys(frontier, depth))
            if not frontier:
                break
        self._reach[(start, hops)] = reach
        return reach
