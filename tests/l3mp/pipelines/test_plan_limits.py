"""A home with N items on one table (both stores).

A goal that already holds answers at once with the empty plan; one that does not plans on a small
context instead of all N items; and a request that runs out of its deadline ends with ``timeout``
and the attempts it made, also when it runs out while the goal is checked against the memory.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import unique_name

from kg_memory import Entity, Fact, GraphStore, WorldMemory
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS
from l3mp.pipelines import plans
from l3mp.pipelines.plans import PlanConfig, TaskPlanner

N = 2_000


@pytest.fixture
def crowded(store: GraphStore) -> WorldMemory:
    """The example home with N more items on the kitchen table."""
    memory = WorldMemory.create(store, unique_name("crowded"), "example_home")
    things = [Entity(f"thing_{i}", "item") for i in range(N)]
    facts = [Fact("on", (t.name, "table_1")) for t in things]
    update = memory.add_entities([*SURVEY_ENTITIES, *things], facts=[*SURVEY_FACTS, *facts], input="survey")
    assert update.status.value == "applied", update.issues
    return memory


@pytest.mark.slow
def test_a_goal_that_holds_is_the_empty_plan_at_once(crowded: WorldMemory) -> None:
    report = TaskPlanner(crowded, config=PlanConfig(retriever="full", deadline=30)).plan(goal="(on mug_1 table_1)")
    assert report.status == "solved" and report.plan == () and report.tier == "holds"
    assert report.to_json()["attempts"] == []  # no planner was called


@pytest.mark.slow
def test_a_goal_at_the_crowded_table_plans_on_a_small_context(crowded: WorldMemory) -> None:
    report = TaskPlanner(crowded, config=PlanConfig(retriever="full", deadline=60)).plan(goal="(on book_1 table_1)")
    assert report.status == "solved", report.issues
    assert [str(a) for a in report.plan][-1] == "(place robot_1 book_1 table_1 kitchen)"
    attempts = report.to_json()["attempts"]
    assert attempts[-1]["objects"] < 100  # not the 2,000 things already on the table


@pytest.mark.slow
def test_the_deadline_ends_planning_with_timeout_and_what_was_tried(
    crowded: WorldMemory, stalling_planner: Any
) -> None:
    # one hand cannot hold two things: unsolvable in every tier. The pruned tiers are searched for
    # real; the full tier (2,000 objects) goes to a search that never ends, so it is the deadline,
    # not the machine's speed, that ends it
    stalls = stalling_planner(min_bytes=20_000)
    deadline = 15.0
    planner = TaskPlanner(crowded, config=PlanConfig(retriever="full", deadline=deadline))
    started = time.monotonic()
    report = planner.plan(goal="(and (held mug_1 robot_1) (held book_1 robot_1))")
    elapsed = time.monotonic() - started
    assert report.status == "timeout", report.issues
    attempts = report.to_json()["attempts"]
    assert attempts[0]["status"] == "unsolvable"  # what it tried, and how that went
    assert attempts[-1]["tier"] == "full" and attempts[-1]["status"] == "timeout"
    assert any("deadline of 15 s ran out" in issue for issue in report.issues)
    assert len(stalls.stalled()) == 1 and stalls.running() == []  # the search was killed at the deadline
    assert elapsed < deadline * 3  # and the answer came then, not whenever the search would have ended


def test_a_deadline_that_passes_while_checking_the_goal_ends_the_request_as_a_planner_timeout(
    crowded: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    goal = "(exists (?d - dish) (on ?d table_1))"  # holds: mug_1 is on the crowded table
    planner = TaskPlanner(crowded, config=PlanConfig(retriever="full", deadline=30))
    assert planner.plan(goal=goal).tier == "holds"
    # the request's clock reads an hour back: its deadline has passed before the goal is checked
    an_hour_back = SimpleNamespace(monotonic=lambda: time.monotonic() - 3600, perf_counter=time.perf_counter)
    monkeypatch.setattr(plans, "time", an_hour_back)
    report = planner.plan(goal=goal)
    assert report.status == "timeout" and report.plan == () and report.tier is None and report.tiers is None
    assert report.issues == ("the request's deadline of 30 s ran out while planning",)
