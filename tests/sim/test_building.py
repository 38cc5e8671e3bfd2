"""Multi-floor buildings: exact size, floors on every room, one connected building joined only by its
elevator lobbies and stairwells, valid under the household rules, and homes built exactly as before."""

from __future__ import annotations

import hashlib
import json
from collections import deque

import pytest
from conftest import SetView

from kg_memory import Delta, Domain, DomainRegistry, Fact, UpdateSource, Verifier
from planning.planner import PlanStatus
from sim.building import CROSS_FLOOR_KINDS, BuildingSimulator, simulator_for
from sim.errors import InvalidHomeSpec
from sim.floorplan import ELEVATOR_PER_FLOOR, ELEVATOR_WAIT, STAIR_FLIGHT, detours, home_facts, lay_out
from sim.home import BuildingSpec
from sim.household import Home, HomeSpec, generate_home
from sim.simulator import Simulator

SIZE = 3000

# Recorded from the generator before buildings existed: homes, their names and their floor plans must
# not move, or Table I and every pinned figure would.
HOME_DIGESTS = {
    HomeSpec(seed=0): "62539911f67577e2f2985a3e46f08f43515db365ed529a30282bdcc39633d2ce",
    HomeSpec(seed=3, undescriptive_names=True): "e0a60a345a30bcadd3e81923db904c328cfb202df4cc66750413f7f6626f7308",
    HomeSpec.scaled(2000, seed=1): "69798ccbe6b62d207bba392113985a67368fdb12e0cf03851a7a465ed8d4e5a3",
}
PLAN_DIGEST = "c059201d14470e18e4af8b3716545f8939ae89490c35f900df7af38683f17ce5"
# The building the benchmarks' figures come from at this size: a change to it should be on purpose.
BUILDING_DIGEST = "02881aab1c5cf76823bdabaf11ea8e92e5b7e3bcc3504a22ef5ca258fc94dee5"


@pytest.fixture(scope="module")
def domain() -> Domain:
    return DomainRegistry().get("household")


@pytest.fixture(scope="module")
def building() -> Home:
    return generate_home(HomeSpec.building(SIZE, seed=4))


def home_digest(home: Home) -> str:
    parts = [json.dumps([e.name, e.type, e.label, sorted(e.attrs.items())]) for e in home.entities]
    parts += sorted(map(str, home.facts))
    parts += [json.dumps([k, list(v)]) for k, v in sorted(home.neighbours.items())]
    parts += [json.dumps([k, v]) for k, v in sorted(home.room_of.items())]
    parts += [json.dumps(list(home.rooms)), json.dumps(list(home.items)), json.dumps(list(home.people))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@pytest.mark.parametrize("spec", list(HOME_DIGESTS), ids=str)
def test_homes_are_built_exactly_as_before(spec: HomeSpec) -> None:
    home = generate_home(spec)
    assert home_digest(home) == HOME_DIGESTS[spec]
    assert set(home.floor_of.values()) == {1}
    assert all("floor" not in home.by_name[room].attrs for room in home.rooms)


def test_home_floor_plans_are_laid_out_as_before() -> None:
    plan = lay_out(generate_home(HomeSpec(seed=0)))
    positions = sorted((k, v) for k, v in plan.positions.items())
    walks = sorted((list(k), v) for k, v in plan.walks.items())
    assert hashlib.sha256(json.dumps([positions, walks]).encode()).hexdigest() == PLAN_DIGEST


@pytest.mark.parametrize("total", [60, 999, SIZE, 12_345])
def test_a_building_has_exactly_the_entities_asked_for(total: int) -> None:
    spec = HomeSpec.building(total, seed=2)
    assert isinstance(spec, BuildingSpec)
    assert spec.entity_count() == total
    assert len(generate_home(spec).entities) == total


def test_floors_follow_the_size_unless_given() -> None:
    assert HomeSpec.building(50_000).floors > HomeSpec.building(SIZE).floors > 1
    spec = HomeSpec.building(SIZE, floors=2)
    assert spec.floors == 2 and spec.entity_count() == SIZE
    assert max(spec.rooms_per_floor()) - min(spec.rooms_per_floor()) <= 1


def test_bad_building_specs_are_refused() -> None:
    with pytest.raises(InvalidHomeSpec, match="too few"):
        HomeSpec.building(10)
    with pytest.raises(InvalidHomeSpec, match="at least one floor"):
        HomeSpec.building(SIZE, floors=0)
    with pytest.raises(InvalidHomeSpec, match="need at least 12 rooms") as refused:
        BuildingSpec(rooms=11, floors=4)
    assert refused.value.value == (11, 4)


def test_every_room_knows_its_floor(building: Home) -> None:
    spec = building.spec
    assert isinstance(spec, BuildingSpec)
    floors = [building.by_name[room].attrs["floor"] for room in building.rooms]
    assert floors == [building.floor_of[room] for room in building.rooms]
    assert sorted(set(floors)) == list(range(1, spec.floors + 1))
    for room in building.rooms:
        assert building.by_name[room].label.startswith(f"floor {building.floor_of[room]} ")
    for fixture, room in building.room_of.items():
        assert building.floor_of[fixture] == building.floor_of[room]
    for floor in range(1, spec.floors + 1):
        kinds = [building.by_name[r].attrs["kind"] for r in building.rooms if building.floor_of[r] == floor]
        assert kinds.count("elevator lobby") == 1 and kinds.count("stairwell") == 1
        assert "corridor" in kinds and "ward" in kinds


def test_the_building_is_one_connected_place(building: Home) -> None:
    start = building.rooms[0]
    reached, queue = {start}, deque([start])
    while queue:
        for other in building.neighbours[queue.popleft()]:
            if other not in reached:
                reached.add(other)
                queue.append(other)
    assert reached == set(building.rooms)


def test_only_lobbies_and_stairwells_lead_to_other_floors(building: Home) -> None:
    kind = {room: building.by_name[room].attrs["kind"] for room in building.rooms}
    floor = building.floor_of
    crossing = [f.args for f in building.facts if f.predicate == "connected" and floor[f.args[0]] != floor[f.args[1]]]
    assert crossing
    for a, b in crossing:
        assert kind[a] == kind[b] and kind[a] in CROSS_FLOOR_KINDS
        if kind[a] == "stairwell":
            assert abs(floor[a] - floor[b]) == 1
    lobbies = [r for r in building.rooms if kind[r] == "elevator lobby"]
    for lobby in lobbies:  # one ride from any floor to any other
        assert set(lobbies) - {lobby} <= set(building.neighbours[lobby])


def test_each_floor_has_its_own_plan_and_floors_cost_a_ride_or_a_climb(building: Home) -> None:
    plan = lay_out(building)
    assert plan == lay_out(generate_home(HomeSpec.building(SIZE, seed=4)))
    kind = {room: building.by_name[room].attrs["kind"] for room in building.rooms}
    by_floor: dict[int, list[str]] = {}
    for room in building.rooms:
        by_floor.setdefault(building.floor_of[room], []).append(room)
    for rooms in by_floor.values():
        cells = [plan.positions[r] for r in rooms]
        assert len(set(cells)) == len(cells)  # rooms of one floor never overlap
        (lobby,) = (r for r in rooms if kind[r] == "elevator lobby")
        assert plan.positions[lobby] == (2.0, 2.0)  # each floor laid out from its lobby
    for (a, b), metres in plan.walks.items():
        floors = abs(building.floor_of[a] - building.floor_of[b])
        if kind[a] == kind[b] == "elevator lobby":
            assert metres == pytest.approx(ELEVATOR_WAIT + ELEVATOR_PER_FLOOR * floors)
        elif floors:
            assert kind[a] == kind[b] == "stairwell" and metres == STAIR_FLIGHT
    travel = DomainRegistry().get("household-travel")
    assert home_facts(building, travel) - building.facts == {
        Fact("distance", pair, metres) for pair, metres in plan.walks.items()
    }
    assert detours(building)  # stairs, elevator and corridors make the cheapest way not always the shortest


def test_a_building_is_valid_under_the_household_rules(building: Home, domain: Domain) -> None:
    delta = Delta(add=building.facts, new_entities=building.entities)
    issues = [i.message for i in Verifier(domain).verify(delta, SetView((), ()), UpdateSource.SENSOR)]
    assert issues == []
    labels = [e.label for e in building.entities]
    assert len(set(labels)) == len(labels)


def test_the_same_seed_gives_the_same_building(building: Home) -> None:
    again = generate_home(HomeSpec.building(SIZE, seed=4))
    assert home_digest(again) == home_digest(building) == BUILDING_DIGEST
    assert home_digest(generate_home(HomeSpec.building(SIZE, seed=5))) != home_digest(building)


def test_undescriptive_names_reach_the_floors_too() -> None:
    spec = HomeSpec.building(999, seed=1, undescriptive_names=True)
    home = generate_home(spec)
    assert all(name.startswith("object_") for name in home.rooms)
    assert set(home.floor_of) == {*home.rooms, *home.receptacles, *home.appliances}


def test_a_building_gets_the_bounded_simulator_and_a_home_the_usual_one(building: Home) -> None:
    assert isinstance(simulator_for(building), BuildingSimulator)
    home_sim = simulator_for(generate_home(HomeSpec(seed=0)), planner="lapkt")
    assert type(home_sim) is Simulator and home_sim.planner == "lapkt"


@pytest.mark.slow
def test_the_simulator_runs_events_and_plans_tasks_in_a_building(building: Home) -> None:
    sim = simulator_for(building, seed=4)
    start = sim.state
    for _ in range(30):
        event = sim.next_event()
        assert event.delta.add or event.delta.remove
    assert sim.state != start
    for _ in range(3):
        planned = sim.new_task()
        assert planned.reference.solved and planned.reference.plan
        assert sim.judge(planned.reference.plan, planned.task.goal).success


def test_a_task_too_wide_for_a_bounded_reference_is_not_planned(building: Home) -> None:
    sim = BuildingSimulator(building, seed=4)
    sim.max_objects = 5  # every task's focused problem has the robot's room, the goal's objects and more
    task = sim.tasks.propose(sim.world)
    result = sim.reference_plan(task)
    assert result.status is PlanStatus.ERROR and not result.plan
    assert "over 5" in result.message
