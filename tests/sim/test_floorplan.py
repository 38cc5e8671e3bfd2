"""The floor plan of a simulated home and the household-travel domain derived from household."""

from __future__ import annotations

import pytest
from conftest import unique_name

from kg_memory import Delta, DomainRegistry, Fact, GraphStore, UpdateSource, UpdateStatus, WorldMemory
from sim import HomeSpec, Simulator, generate_home
from sim.floorplan import CELL, detours, home_facts, lay_out
from sim.survey import surveyed_home
from tools.travel_domains import HOUSEHOLD as HOUSEHOLD_TRAVEL
from tools.travel_domains import derive

TRAVEL = DomainRegistry().get("household-travel")
HOUSEHOLD = DomainRegistry().get("household")


def test_household_travel_is_household_derived_not_copied() -> None:
    folder = TRAVEL.path
    for name, text in derive(HOUSEHOLD_TRAVEL).items():
        assert (folder / name).read_text(encoding="utf-8") == text, f"run python tools/travel_domains.py ({name})"
    assert (
        TRAVEL.name == HOUSEHOLD_TRAVEL.name
        and TRAVEL.costs
        and TRAVEL.functions == {"distance"}
        and not HOUSEHOLD.costs
    )
    assert dict(TRAVEL.types) == dict(HOUSEHOLD.types) and TRAVEL.rules == HOUSEHOLD.rules
    assert {n: p for n, p in TRAVEL.predicates.items() if not p.numeric} == dict(HOUSEHOLD.predicates)
    for name, action in HOUSEHOLD.actions.items():
        travel = TRAVEL.actions[name]
        assert (travel.parameters, travel.precondition, travel.effects) == (
            action.parameters,
            action.precondition,
            action.effects,
        )
    assert str(TRAVEL.actions["move"].cost.terms[0]) == "(distance ?from ?to)"


def test_the_floor_plan_is_the_same_for_a_seed_and_leaves_the_household_home_alone() -> None:
    spec = HomeSpec(seed=5, rooms=12, items=20, people=3)
    home = generate_home(spec)
    assert lay_out(home) == lay_out(generate_home(spec)) != lay_out(generate_home(HomeSpec(seed=6, rooms=12)))
    assert home_facts(home, HOUSEHOLD) == home.facts and not any(f.numeric for f in home.facts)
    plan = lay_out(home)
    doors = {(f.args[0], f.args[1]) for f in home.facts if f.predicate == "connected"}
    assert set(plan.walks) == doors  # a distance for every door, and only for doors
    for (a, b), metres in plan.walks.items():
        assert metres == plan.distance(b, a) >= CELL
        (ax, ay), (bx, by) = plan.positions[a], plan.positions[b]
        assert metres >= abs(ax - bx) + abs(ay - by) - 1e-9  # no door is shorter than the floor between
    assert home_facts(home, TRAVEL) == home.facts | {Fact("distance", pair, m) for pair, m in plan.walks.items()}


def test_the_cheapest_route_can_take_more_steps_than_the_shortest() -> None:
    homes = [generate_home(HomeSpec(seed=seed, rooms=8, items=10, people=2)) for seed in range(8)]
    assert any(detours(home) for home in homes)
    (detour,) = detours(generate_home(HomeSpec(seed=4, rooms=8, items=10, people=2)))
    assert (detour.room, detour.metres, detour.steps, detour.fewest) == ("bathroom_1", pytest.approx(8.6), 2, 1)
    assert detours(generate_home(HomeSpec(seed=0)))  # the paper-scale home has one too


def test_a_surveyed_travel_home_is_verified_and_its_distances_stay_perceptions(store: GraphStore) -> None:
    memory = WorldMemory.create(store, unique_name("travel"), "household-travel")
    entities, facts = surveyed_home(0, memory.domain)
    assert facts > surveyed_home(0)[1] and any(f.predicate == "distance" for f in facts)
    update = memory.add_entities(entities, facts=facts, input="survey")
    assert update.status is UpdateStatus.APPLIED, update.issues
    stored = next(f for f in memory.state().facts if f.predicate == "distance")
    assert stored in facts and stored.value is not None and stored.value >= CELL
    shorter = Delta(remove=frozenset({stored}), add=frozenset({Fact("distance", stored.args, 1.0)}))
    said = memory.apply(shorter, source=UpdateSource.API)
    assert said.status is UpdateStatus.REJECTED and "static" in said.issues[0].message
    assert memory.apply(shorter, source=UpdateSource.SENSOR).status is UpdateStatus.APPLIED


@pytest.mark.parametrize("name", ["household", "household-travel"])
def test_the_simulator_knows_the_distances_only_in_the_travel_domain(name: str) -> None:
    home = generate_home(HomeSpec(seed=1, rooms=6, items=8, people=1))
    sim = Simulator(home, domain=DomainRegistry().get(name))
    assert any(f.predicate == "distance" for f in sim.state) is (name == "household-travel")
