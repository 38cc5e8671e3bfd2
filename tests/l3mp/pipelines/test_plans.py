"""Planning from memory (Alg. 4) with the scripted double: goal, check, re-prompt, tiers, explanation."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_memory import DomainRegistry, InvalidValue, WorldMemory
from kg_memory.stores import SQLiteStore
from l3mp.llm import ScriptedModel
from l3mp.outcomes import PlanOutcome
from l3mp.pipelines.plans import PlanConfig, TaskPlanner
from l3mp.prompts import ISSUES_HEADER
from planning import ActionEvaluator, World
from planning.goal_checker import MAX_GOAL_BINDINGS
from planning.goal_reader import parse_goal
from sim import HomeSpec, generate_home
from sim.household import Home


@pytest.fixture(scope="module")
def home() -> Home:
    return generate_home(HomeSpec(seed=4, rooms=6, items=24, people=3))


@pytest.fixture
def memory(tmp_path: Path, home: Home) -> WorldMemory:
    store = SQLiteStore(tmp_path / "plans.db", DomainRegistry())
    memory = WorldMemory.create(store, "home", "household")
    memory.add_entities(home.entities, facts=home.facts, input="survey")
    return memory


def _item(home: Home) -> str:
    return next(e.name for e in home.entities if e.type in ("book", "pen", "remote"))


def _valid(memory: WorldMemory, home: Home, plan: tuple[object, ...], goal: str) -> bool:
    world = World(memory.domain, home.entities, home.facts)
    outcome = ActionEvaluator(memory.domain).validate(plan, world, parse_goal(goal))  # type: ignore[arg-type]
    return outcome.executable and bool(outcome.goal_reached)


def test_a_pddl_goal_is_planned_validated_and_explained(memory: WorldMemory, home: Home) -> None:
    goal = f"(held {_item(home)} robot_1)"
    report = TaskPlanner(memory).plan(goal=goal)
    assert report.status == "solved" and report.tier in ("retrieved", "widened")
    assert _valid(memory, home, report.plan, goal)
    assert len(report.explanation) == len(report.plan) and all(report.explanation)
    record = report.to_json()
    assert record["attempts"][-1]["valid"] is True and "(:goal" in record["attempts"][-1]["problem"]
    assert record["timings"]["total"] >= record["timings"]["planning"] > 0
    assert record["version"] == memory.version


def test_an_english_request_goes_through_the_goal_prompt(memory: WorldMemory, home: Home) -> None:
    item = _item(home)
    model = ScriptedModel([{"goal": f"(held {item} robot_1)"}])
    report = TaskPlanner(memory, model, PlanConfig(retriever="full")).plan(f"Bring me the {item}.")
    assert report.status == "solved" and model.calls[0].name == "goal"
    assert report.usage.prompt_tokens > 0 and report.goal == f"(held {item} robot_1)"


def test_goal_issues_are_fed_back_and_the_fixed_goal_planned(memory: WorldMemory, home: Home) -> None:
    item = _item(home)
    model = ScriptedModel([{"goal": f"(holding robot_1 {item})"}, {"goal": f"(held {item} robot_1)"}])
    report = TaskPlanner(memory, model, PlanConfig(retriever="full")).plan(f"Pick up the {item}.")
    assert report.status == "solved"
    feedback = model.calls[1].messages[-1].content
    assert feedback.startswith(ISSUES_HEADER) and "holding" in feedback


def test_a_goal_that_never_passes_the_check_is_reported_without_planning(memory: WorldMemory) -> None:
    model = ScriptedModel([{"goal": "(on cup_99 table_99)"}] * 2 + ["not json"])
    report = TaskPlanner(memory, model, PlanConfig(retriever="full", retries=2)).plan("Put the cup on the table.")
    assert report.status is PlanOutcome.INVALID_GOAL and report.tiers is None and len(model.calls) == 3
    assert report.issues and not report.plan


def test_a_goal_no_action_can_reach_is_impossible(memory: WorldMemory, home: Home) -> None:
    cup = next(e.name for e in home.entities if e.type == "cup")
    report = TaskPlanner(memory, config=PlanConfig(full_state=False)).plan(goal=f"(filled {cup} milk)")
    # only the faucet fills a cup (with water): the gap is named before any planner runs
    assert report.status == "impossible" and report.tier is None and not report.explanation
    assert report.issues == (f"no action can make '{cup} is filled with milk' true",)
    assert report.tiers is None


def test_bad_requests(memory: WorldMemory) -> None:
    model = ScriptedModel([])
    report = TaskPlanner(memory, model).plan("   ")
    assert report.status is PlanOutcome.INVALID_REQUEST and not model.calls
    with pytest.raises(InvalidValue):
        TaskPlanner(memory).plan("Bring me a book.")
    report = TaskPlanner(memory).plan(goal="(held nothing_1 robot_1")
    assert report.status is PlanOutcome.INVALID_GOAL and report.issues


def test_an_optimal_plan_for_a_goal_that_holds_is_the_empty_plan_proven_cheapest(memory: WorldMemory) -> None:
    place = next(f.args[1] for f in memory.state().facts if f.predicate == "robot_at")
    report = TaskPlanner(memory, config=PlanConfig(optimal=True)).plan(goal=f"(robot_at robot_1 {place})")
    assert report.status is PlanOutcome.SOLVED and report.plan == () and report.tier == "holds"
    assert report.cost == 0 and report.optimal and report.optimality == ""
    assert report.cost_explanation == "The plan costs 0 steps (proven the cheapest)."
    record = report.to_json()
    assert record["cost"] == 0 and record["optimal"] is True


def test_a_goal_over_too_many_bindings_is_refused_before_anything_evaluates_it(
    memory: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    def evaluate(*_args: object, **_kwargs: object) -> bool:
        raise AssertionError("the goal was evaluated")

    monkeypatch.setattr(ActionEvaluator, "evaluate", evaluate)
    variables = " ".join(f"?v{i}" for i in range(8))
    for word in ("forall", "exists"):
        goal = f"({word} ({variables} - object) (or (= ?v0 ?v1) (not (= ?v0 ?v1))))"
        report = TaskPlanner(memory).plan(goal=goal)
        assert report.status is PlanOutcome.INVALID_GOAL and report.tiers is None and not report.plan
        (issue,) = report.issues
        assert f"more than the limit of {MAX_GOAL_BINDINGS:,}" in issue and "quantify over fewer variables" in issue


def test_a_model_asking_for_too_many_bindings_is_asked_again(memory: WorldMemory, home: Home) -> None:
    item = _item(home)
    nested = "(forall (?a ?b ?c ?d ?e - object) (= ?a ?a))"
    model = ScriptedModel([{"goal": nested}, {"goal": f"(held {item} robot_1)"}])
    report = TaskPlanner(memory, model, PlanConfig(retriever="full")).plan(f"Pick up the {item}.")
    assert report.status == "solved"
    assert f"the limit of {MAX_GOAL_BINDINGS:,}" in model.calls[1].messages[-1].content


def test_a_quantified_goal_within_the_bound_plans_as_before(memory: WorldMemory, home: Home) -> None:
    item = _item(home)
    goal = f"(and (held {item} robot_1) (forall (?x - item) (or (= ?x {item}) (not (held ?x robot_1)))))"
    report = TaskPlanner(memory).plan(goal=goal)
    assert report.status == "solved" and report.plan
    assert _valid(memory, home, report.plan, goal)
