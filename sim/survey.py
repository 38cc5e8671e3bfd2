"""A paper-scale simulated home as a first survey of a new memory (``l3mp init --sim-home SEED``)."""

from __future__ import annotations

from kg_memory import Entity, Fact
from sim.household import HomeSpec, generate_home


def surveyed_home(seed: int) -> tuple[tuple[Entity, ...], frozenset[Fact]]:
    """The entities and facts of the paper-scale home generated from ``seed``."""
    home = generate_home(HomeSpec(seed=seed))
    return tuple(home.entities), frozenset(home.facts)
