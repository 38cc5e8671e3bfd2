"""Tasks are solvable as proposed, reference plans validate, and the simulator judges any
valid plan (not only the reference) and refuses inapplicable actions with a reason."""

from __future__ import annotations

from collections import Counter

import pytest

from kg_memory import Delta, Fact
from kg_memory.formula import Atom, Not
from planning.evaluator import GroundAction
from sim.household import HomeSpec, generate_home
from sim.simulator import Simulator
from sim.tasks import TASK_KINDS

SMALL = HomeSpec(seed=3, rooms=8, items=30, people=4)


@pytest.fixture(scope="module")
def sim() -> Simulator:
    return Simulator(generate_home(SMALL), seed=3)


@pytest.mark.slow
def test_two_hundred_tasks_are_solvable_as_proposed_and_their_plans_validate() -> None:
    kinds: Counter[str] = Counter()
    for seed in range(20):
        sim = Simulator(generate_home(HomeSpec(seed=seed, rooms=6, items=24, people=3)), seed=seed)
        for _ in range(10):
            planned = sim.new_task(attempts=1)  # raises if the proposal could not be planned
            assert planned.attempts == 1
            judgement = sim.judge(planned.reference.plan, planned.task.goal)
            assert judgement.success, (planned.task, judgement.reason)
            assert not sim.evaluator.evaluate(planned.task.goal, sim.world), "the goal held before the task"
            kinds[planned.task.kind] += 1
            sim.next_event()
    assert sum(kinds.values()) == 200
    assert len(kinds) >= 8, kinds  # the mix covers most kinds


def test_task_kinds_are_varied_and_phrased_several_ways(sim: Simulator) -> None:
    texts: dict[str, set[str]] = {}
    for _ in range(300):
        task = sim.tasks.propose(sim.world)
        texts.setdefault(task.kind, set()).add(task.text)
    assert len(texts) >= len(TASK_KINDS) - 2, sorted(texts)  # nearly every kind comes up in this home
    assert all(len(ts) >= 2 for kind, ts in texts.items() if kind not in ("lights_off", "lights_and_faucets_off"))
    assert all(text[0].isupper() and "{" not in text for ts in texts.values() for text in ts)


def test_no_task_is_proposed_whose_goal_already_holds() -> None:
    """Someone already holding a cup of water is not the one to bring water to."""
    home = generate_home(HomeSpec(seed=5, rooms=6, items=24, people=1))
    sim = Simulator(home, seed=5)
    person = sim.world.objects_of("person")[0]
    cup = sim.world.objects_of("cup")[0]
    held = [f for f in sim.world.facts_about(cup) if f.predicate in ("on", "inside", "in_hand", "held")]
    filled = [f for f in sim.world.facts_about(cup) if f.predicate == "filled"]
    sim.world.apply(
        Delta(remove=frozenset(held + filled), add={Fact("in_hand", (cup, person)), Fact("filled", (cup, "water"))})
    )
    for _ in range(100):
        task = sim.tasks.propose(sim.world)
        assert task.kind != "water_for_person", task
    assert not sim.evaluator.evaluate(sim.new_task().task.goal, sim.world)


def test_a_valid_plan_other_than_the_reference_counts(sim: Simulator) -> None:
    planned = sim.new_task()
    detour = _detour(sim)
    plan = (*detour, *planned.reference.plan)
    judgement = sim.judge(plan, planned.task.goal)
    assert judgement.success and judgement.steps == len(plan)


def _detour(sim: Simulator) -> tuple[GroundAction, ...]:
    """Go to a neighbouring room and back: a plan prefix that changes nothing."""
    here = next(f.args[1] for f in sim.world.facts_of("robot_at"))
    there = next(f.args[1] for f in sim.world.facts_of("connected") if f.args[0] == here)
    return (GroundAction("move", ("robot_1", here, there)), GroundAction("move", ("robot_1", there, here)))


def test_an_inapplicable_action_is_refused_with_its_reason(sim: Simulator) -> None:
    before = sim.state
    here = next(f.args[1] for f in sim.world.facts_of("robot_at"))
    elsewhere = next(r for r in sim.world.objects_of("room") if r != here)
    outcome = sim.execute(GroundAction("move", ("robot_1", elsewhere, here)))
    assert not outcome.applicable and outcome.reasons
    assert "robot_at" in " ".join(outcome.reasons) and sim.state == before


def test_a_plan_that_misses_the_goal_is_judged_a_failure(sim: Simulator) -> None:
    goal = Not(Atom("robot_at", ("robot_1", next(f.args[1] for f in sim.world.facts_of("robot_at")))))
    judgement = sim.judge((), goal)
    assert judgement.executable and not judgement.goal_reached and not judgement.success
    assert "does not hold" in judgement.reason


def test_execute_changes_the_true_state(sim: Simulator) -> None:
    here = next(f.args[1] for f in sim.world.facts_of("robot_at"))
    there = next(f.args[1] for f in sim.world.facts_of("connected") if f.args[0] == here)
    outcome = sim.execute(GroundAction("move", ("robot_1", here, there)))
    assert outcome.applicable
    assert any(f.predicate == "robot_at" and f.args[1] == there for f in sim.state)


def test_observation_is_of_the_robots_room(sim: Simulator) -> None:
    observation = sim.observe()
    here = next(f.args[1] for f in sim.world.facts_of("robot_at"))
    assert observation.room == here
    assert observation.facts() <= sim.state
