"""A seeded home for the text household simulation of L3M+P (paper Sec. V.A), in the ``household`` domain.

The paper's home has 30-40 rooms, 140-160 items and 20-30 people; :class:`HomeSpec` defaults to that scale
and :meth:`HomeSpec.scaled` keeps its proportions for experiments. Furniture and appliances follow from
each room's kind (a kitchen gets a fridge and a sink with a faucet, a laundry room a washer and a dryer),
so the number of entities is a deterministic function of the spec.

The initial state satisfies every rule in ``domains/household/rules.toml``: each item is in exactly one
place, each person and the robot in exactly one room, the robot's hand is empty, a person holding an item
is in a room. Randomness comes only from ``random.Random(spec.seed)`` and nothing is drawn from a set's
iteration order, so a seed gives the same home in every process.
"""

from __future__ import annotations

import random

from sim._catalogue import (
    APPLIANCE_TYPES,
    CONTAINER_TYPES,
    ITEM_TYPES,
    LIQUIDS,
    RECEPTACLE_TYPES,
    ROBOT,
)
from sim._home_builder import HomeBuilder
from sim.home import Home, HomeSpec


def generate_home(spec: HomeSpec | None = None) -> Home:
    """Build the home ``spec`` describes; the same spec always gives the same home."""
    spec = spec or HomeSpec()
    builder = HomeBuilder(random.Random(spec.seed))
    builder.build(spec)
    if spec.undescriptive_names:
        builder.rename_undescriptively()
    return builder.home(spec)


__all__ = [
    "APPLIANCE_TYPES",
    "CONTAINER_TYPES",
    "ITEM_TYPES",
    "LIQUIDS",
    "RECEPTACLE_TYPES",
    "ROBOT",
    "Home",
    "HomeSpec",
    "generate_home",
]
