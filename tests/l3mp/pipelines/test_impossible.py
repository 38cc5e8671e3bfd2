"""``impossible`` from memory on a surveyed paper-scale home (`l3mp init home --sim-home 5`): goals over
collections are planned, and only goals no plan can reach are answered impossible, with their reason.

In that home the atlas lies on the bookshelf of living_room_3; the robot is in hallway_1; rosa is in
laundry_room_1 and nobody is in bathroom_1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_memory import DomainRegistry, WorldMemory
from kg_memory.stores import SQLiteStore
from l3mp.outcomes import PlanOutcome
from l3mp.pipelines.plans import TaskPlanner
from planning import ActionEvaluator, World, parse_goal
from planning.reachability import impossible_gaps
from sim.survey import surveyed_home

SEED = 5
ATLAS_IN = "(exists (?t - receptacle) (and (in_room ?t {room}) (on atlas_1 ?t)))"


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> WorldMemory:
    store = SQLiteStore(tmp_path_factory.mktemp("impossible") / "home.db", DomainRegistry())
    memory = WorldMemory.create(store, "home", "household")
    entities, facts = surveyed_home(SEED, memory.domain)
    memory.add_entities(entities, facts=facts, input="survey")
    return memory


def full_world(memory: WorldMemory) -> World:
    state = memory.state()
    constants = memory.domain.constants
    return World(memory.domain, (e for n, e in state.entities.items() if n not in constants), state.facts)


def test_an_existential_goal_that_holds_is_answered_with_an_empty_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from l3mp.cli import main

    db = str(tmp_path / "cli.db")
    assert main(["--db", db, "init", "home", "--sim-home", str(SEED)]) == 0
    capsys.readouterr()
    goal = ATLAS_IN.format(room="living_room_3")
    assert main(["--db", db, "plan", "--memory", "home", "--goal", goal, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["status"] == "solved" and record["plan"] == [] and record["issues"] == []
    assert record["tier"] == "holds"


@pytest.mark.slow
def test_an_existential_goal_naming_another_room_gets_a_valid_plan(memory: WorldMemory) -> None:
    goal = ATLAS_IN.format(room="kitchen_1")
    report = TaskPlanner(memory).plan(goal=goal)
    assert report.status == "solved" and report.plan, report.issues
    outcome = ActionEvaluator(memory.domain).validate(report.plan, full_world(memory), parse_goal(goal))
    assert outcome.executable and outcome.goal_reached
    moved = [a for a in report.plan if "atlas_1" in a.args]
    assert [a.name for a in moved] == ["pick", "place"] and moved[0].args[2] == "bookshelf_3"


@pytest.mark.parametrize(
    "goal",
    [
        ATLAS_IN.format(room="kitchen_1"),
        f"(and {ATLAS_IN.format(room='kitchen_1')} (switched_on light_1))",
        f"(and {ATLAS_IN.format(room='living_room_3')} (held cup_1 robot_1))",
        "(forall (?l - light) (or (not (appliance_in ?l living_room_3)) (not (switched_on ?l))))",
        "(or (person_in rosa kitchen_1) (exists (?p - person) (person_in ?p laundry_room_1)))",
        "(exists (?s - receptacle) (not (in_room ?s kitchen_1)))",
    ],
    ids=("another room", "and a light on", "holds and a cup held", "every light off", "or", "some not"),
)
def test_goals_over_collections_are_left_to_the_planner(memory: WorldMemory, goal: str) -> None:
    assert impossible_gaps(full_world(memory), parse_goal(goal)) == ()


def test_moving_a_person_is_still_impossible_with_its_reason(memory: WorldMemory) -> None:
    report = TaskPlanner(memory).plan(goal=f"(and {ATLAS_IN.format(room='kitchen_1')} (person_in rosa kitchen_1))")
    assert report.status is PlanOutcome.IMPOSSIBLE and report.tiers is None and not report.plan
    assert report.issues == ("no action can make 'rosa is in kitchen_1' true",)
    report = TaskPlanner(memory).plan(goal="(exists (?p - person) (person_in ?p bathroom_1))")
    assert report.status is PlanOutcome.IMPOSSIBLE and report.issues == (
        "no action can make 'any person is in bathroom_1' true",
    )
