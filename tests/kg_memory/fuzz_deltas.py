"""Random deltas over real states, for tests that hold two ways of judging them to one answer."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from conftest import require_thor_data

from kg_memory import Delta, DomainRegistry, Entity, Fact, UpdateStatus, WorldMemory
from kg_memory._replay import _State
from kg_memory.domain import Domain
from kg_memory.stores import SQLiteStore
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS


def households() -> list[tuple[str, tuple[Entity, ...], frozenset[Fact]]]:
    from sim.survey import surveyed_home

    domains = DomainRegistry()
    household = domains.get("household")
    return [
        ("example_home", SURVEY_ENTITIES, frozenset(SURVEY_FACTS)),
        ("household", *surveyed_home(31, household)),
    ]


def thor_kitchen(folder: Path) -> tuple[tuple[Entity, ...], frozenset[Fact]]:
    """AI2-THOR's first kitchen as the thor domain's perception stores it (recorded scene)."""
    from l3mp.pipelines import SensorUpdater
    from perception import ThorNames, thor_observation

    objects = json.loads(gzip.decompress((require_thor_data() / "scenes" / "FloorPlan1_physics.json.gz").read_bytes()))
    store = SQLiteStore(folder / "kitchen.db", DomainRegistry())
    try:
        memory = WorldMemory.create(store, "kitchen", "thor")
        observation = thor_observation(objects, ThorNames(objects), memory.domain)
        update = SensorUpdater(memory).apply(observation).update
        assert update.status is UpdateStatus.APPLIED, update.issues
        constants = {e.name for e in memory.domain.constant_entities()}
        entities = tuple(e for e in memory.entities().values() if e.name not in constants)
        return entities, memory.facts()
    finally:
        store.close()


class DeltaFuzz:
    """Random deltas over a state: moves, facts of any predicate over typed or untyped
    arguments, removals of absent facts, additions of present ones, new entities, wrong arities."""

    def __init__(self, rng: random.Random, domain: Domain, state: _State) -> None:
        self.rng, self.domain, self.state = rng, domain, state
        self.predicates = [*sorted(domain.predicates), "flying"]

    def names(self) -> list[str]:
        return [*sorted(self.state.entities), "ghost_1"]

    def typed(self, type_: str) -> str:
        fitting = [n for n, e in sorted(self.state.entities.items()) if self.domain.is_subtype(e.type, type_)]
        return self.rng.choice(fitting or self.names())

    def fact(self) -> Fact:
        rng = self.rng
        predicate = rng.choice(self.predicates)
        schema = self.domain.predicates.get(predicate)
        if schema is not None and rng.random() < 0.85:
            args = tuple(
                self.typed(p.type) if rng.random() < 0.9 else rng.choice(self.names()) for p in schema.parameters
            )
        else:
            args = tuple(rng.choice(self.names()) for _ in range(rng.randint(0, 3)))
        value = float(rng.randint(0, 9)) if schema is not None and schema.numeric and rng.random() < 0.9 else None
        return Fact(predicate, args, value)

    def move(self) -> tuple[set[Fact], set[Fact]]:
        """An item moved from where it is to other furniture (often valid)."""
        placed = sorted((f for f in self.state.all if f.predicate == "on"), key=str)
        if not placed:
            return set(), {self.fact()}
        here = self.rng.choice(placed)
        return {here}, {Fact("on", (here.args[0], self.typed("furniture")))}

    def delta(self) -> Delta:
        rng = self.rng
        present = sorted(self.state.all, key=str)
        remove, add = self.move() if rng.random() < 0.4 else (set(), set())
        remove |= {rng.choice(present) for _ in range(rng.choice([0, 0, 1, 2]))}
        add |= {self.fact() for _ in range(rng.choice([0, 1, 1, 2]))}
        if rng.random() < 0.05:
            remove.add(self.fact())  # most likely absent
        if rng.random() < 0.05:
            add.add(rng.choice(present))
        if rng.random() < 0.03:
            both = rng.choice(present)  # well formed: the verifier cannot word a malformed one here
            remove.add(both)
            add.add(both)
        created = (
            (Entity(f"new_{rng.randint(0, 5)}", rng.choice(sorted(self.domain.types))),) if rng.random() < 0.03 else ()
        )
        return Delta(remove=remove, add=add, new_entities=created)
