"""A paper-scale simulated home as a first survey of a new memory (``l3mp init --sim-home SEED``)."""

from __future__ import annotations

from kg_memory import Domain, Entity, Fact
from sim.floorplan import home_facts
from sim.household import HomeSpec, generate_home


def surveyed_home(seed: int, domain: Domain | None = None) -> tuple[tuple[Entity, ...], frozenset[Fact]]:
    """The entities and facts of the paper-scale home generated from ``seed``; for a domain with the
    ``distance`` function (household-travel), the walks between connected rooms too."""
    home = generate_home(HomeSpec(seed=seed))
    return tuple(home.entities), home_facts(home, domain) if domain else frozenset(home.facts)
