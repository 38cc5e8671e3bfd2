"""Open-world tasks: questions instead of guesses, what is missing, stages, exploration."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from kg_memory import Delta, DomainRegistry, Fact, UpdateSource, WorldMemory, unknown_locations
from kg_memory.stores import SQLiteStore
from l3mp.llm import ScriptedModel
from l3mp.llm.base import Message
from l3mp.outcomes import Ambiguous, Unrecognised
from l3mp.pipelines.openworld import OpenWorldPlanner
from l3mp.runtime import ReplanCause, Runtime, RuntimeConfig, TaskStatus
from planning.evaluator import GroundAction, StepOutcome
from sim import HomeSpec, Simulator, generate_home
from sim.environment import SimEnvironment
from sim.household import Home

Answer = Callable[[str, str], dict[str, object]]  # (prompt kind, request line) -> reply
EXPLORATION_STEP_KEYS = ["item", "place", "room", "container", "reason", "subgoal", "status", "plan"]


@pytest.fixture(scope="module")
def home() -> Home:
    return generate_home(HomeSpec(seed=4, rooms=6, items=24, people=3))


@pytest.fixture
def memory(tmp_path: Path, home: Home) -> WorldMemory:
    store = SQLiteStore(tmp_path / "open.db", DomainRegistry())
    memory = WorldMemory.create(store, "home", "household")
    memory.add_entities(home.entities, facts=home.facts, input="survey")
    return memory


def model(answer: Answer, calls: int = 60) -> ScriptedModel:
    """A scripted double that answers by prompt kind (read from the system message) and request line."""

    def reply(messages: Sequence[Message]) -> dict[str, object]:
        system, user = messages[0].content, messages[1].content
        kind = "mentions" if "list the things" in system else "stages" if "Split it" in system else "goal"
        return answer(kind, user.strip().splitlines()[-1].split(": ", 1)[1])

    return ScriptedModel([reply] * calls)


def where(home: Home, item: str) -> Fact:
    return next(f for f in home.facts if f.predicate in ("on", "inside") and f.args[0] == item)


def test_an_ambiguous_request_asks_and_the_answer_completes_it(memory: WorldMemory, home: Home) -> None:
    goals = {"glass_2": "(in_hand glass_2 irene)"}
    prompts: list[str] = []

    def answer(kind: str, request: str) -> dict[str, object]:
        if kind == "mentions":
            return {"mentions": ["the glass", "Irene"]}
        return {"goal": goals["glass_2"]}

    scripted = model(answer)
    sim = Simulator(home, seed=1)
    env = SimEnvironment(sim)
    runtime = Runtime(memory, env, scripted, RuntimeConfig(open_world=True))
    env.add_task("Bring the glass to Irene.", true_goal=goals["glass_2"])
    first = runtime.step().task
    assert first is not None and first.status is TaskStatus.NEEDS_INFORMATION
    assert first.questions == (Ambiguous(about="the glass", candidates=("glass_1", "glass_2")),)
    assert first.to_json()["questions"] == [{"about": "the glass", "candidates": ["glass_1", "glass_2"]}]
    assert env.questions and env.questions[0][1] == first.questions  # reported back to whoever asked
    assert not first.actions  # no guess was acted on
    env.add_task("Bring the glass to Irene.", true_goal=goals["glass_2"], answers=(("the glass", "glass_2"),))
    second = runtime.step().task
    assert second is not None and second.status is TaskStatus.SUCCEEDED, second.reason
    prompts = [c.messages[1].content for c in scripted.calls if "PDDL" in c.messages[0].content]
    assert "'the glass' means glass_2 (yellow glass)" in prompts[-1]
    assert sim.world.holds(Fact("in_hand", ("glass_2", "irene")))


def test_an_unknown_name_returns_its_closest_matches(memory: WorldMemory) -> None:
    scripted = model(lambda kind, request: {"mentions": ["the red umbrella", "Irene"]})
    report = OpenWorldPlanner(memory, scripted).plan("Bring the red umbrella to Irene.")
    assert report.status == "needs_information" and report.goal is None and not report.plan
    (question,) = report.questions
    assert isinstance(question, Unrecognised) and question.unknown == "the red umbrella"
    closest = question.closest
    assert len(closest) == 3
    labels = {n: e.label for n, e in memory.entities().items()}
    assert all("red" in labels[n] for n in closest)  # the red things, since nothing is an umbrella
    assert report.to_json()["questions"] == [{"unknown": "the red umbrella", "closest": list(closest)}]


def test_an_impossible_goal_names_the_gap_at_once(memory: WorldMemory) -> None:
    report = OpenWorldPlanner(memory).plan(goal="(and (ringing phone_1) (person_in irene kitchen_1))")
    assert report.status == "impossible"
    assert report.issues == (
        "no action can make 'phone_1 is ringing' true",
        "no action can make 'irene is in kitchen_1' true",
    )
    assert report.tiers is None  # no planner was called
    assert report.timings["total"] < 1.0


def test_a_missing_type_is_named(tmp_path: Path, home: Home) -> None:
    store = SQLiteStore(tmp_path / "nodryer.db", DomainRegistry())
    memory = WorldMemory.create(store, "home", "household")
    kept = [e for e in home.entities if e.type != "dryer"]
    memory.add_entities(kept, facts=[f for f in home.facts if "dryer_1" not in f.args], input="survey")
    report = OpenWorldPlanner(memory).plan(goal="(exists (?d - dryer) (inside scarf_1 ?d))")
    assert report.status == "impossible" and report.issues == ("the home has no dryer",)


def test_a_compound_request_is_split_into_stages_and_executed(memory: WorldMemory, home: Home) -> None:
    whole = "Switch on the kitchen light, then bring the orange glass to Irene."
    stage_goals = {
        "Switch on the kitchen light.": "(switched_on light_1)",
        "Bring the orange glass to Irene.": "(in_hand glass_1 irene)",
    }

    def answer(kind: str, request: str) -> dict[str, object]:
        if kind == "mentions":
            return {"mentions": []}
        if kind == "stages":
            return {"stages": list(stage_goals)}
        return {"goal": stage_goals.get(request, "(switched_on nothing_9)")}  # the whole never checks

    sim = Simulator(home, seed=1)
    sim.world.apply(Delta(remove=frozenset(f for f in sim.state if f == Fact("switched_on", ("light_1",)))))
    memory.apply(Delta(remove=memory.facts("switched_on", "light_1")), source=UpdateSource.SENSOR, input="look")
    env = SimEnvironment(sim)
    env.add_task(whole, true_goal="(and (switched_on light_1) (in_hand glass_1 irene))")
    task = Runtime(memory, env, model(answer), RuntimeConfig(open_world=True)).step().task
    assert task is not None and task.status is TaskStatus.SUCCEEDED, task.reason
    assert task.stages is not None and task.stages.request == whole and task.stages.status == "succeeded"
    assert task.stages.stages is not None
    assert [s.request for s in task.stages.stages] == list(stage_goals)
    assert all(s.status == "succeeded" for s in task.stages.stages)
    stages = task.to_json()["stages"]
    assert stages["request"] == whole and stages["status"] == "succeeded" and "reason" not in stages
    assert stages["stages"][1] == {"request": "Bring the orange glass to Irene.", "status": "succeeded", "reason": ""}
    assert sim.world.holds(Fact("in_hand", ("glass_1", "irene"))) and sim.world.holds(Fact("switched_on", ("light_1",)))


def test_exploration_finds_an_item_in_a_closed_container(memory: WorldMemory, home: Home) -> None:
    sim = Simulator(home, seed=1)
    old = where(home, "glass_1")
    # the truth: someone put the glass in the closed kitchen cabinet; the memory lost track of it
    sim.world.apply(
        Delta(
            remove=frozenset({old, *(f for f in sim.state if f == Fact("open", ("cabinet_1",)))}),
            add=frozenset({Fact("inside", ("glass_1", "cabinet_1"))}),
        )
    )
    memory.apply(Delta(remove=frozenset({old})), source=UpdateSource.SENSOR, input="not where it was")
    if memory.state().holds(Fact("open", ("cabinet_1",))):
        memory.apply(
            Delta(remove=frozenset({Fact("open", ("cabinet_1",))})), source=UpdateSource.SENSOR, input="closed"
        )
    state = memory.state()
    (unknown,) = unknown_locations(memory, memory.domain, state.entities, state.facts)
    assert unknown.entity.name == "glass_1" and unknown.last_seen is not None and unknown.last_seen.fact == old
    env = SimEnvironment(sim)
    env.add_task("Bring the orange glass to Irene.", "(in_hand glass_1 irene)")
    config = RuntimeConfig(open_world=True, max_explorations=20, max_actions=120)
    task = Runtime(memory, env, None, config).step().task
    assert task is not None and task.status is TaskStatus.SUCCEEDED, task.reason
    assert task.exploration and task.exploration[0].step.reason == "last seen there"
    assert task.exploration[-1].outcome == "found" and task.exploration[-1].step.subgoal == "(open cabinet_1)"
    assert all(e.outcome == "not there" for e in task.exploration[:-1])
    found = task.to_json()["exploration"][-1]
    assert list(found) == [*EXPLORATION_STEP_KEYS, "outcome", "actions"]
    assert found["outcome"] == "found" and found["actions"] == task.exploration[-1].actions
    assert sim.world.holds(Fact("in_hand", ("glass_1", "irene")))
    # planner time is reported per plan, the exploration sub-goals' planning included
    exploring = [p for p in task.plans if p.status == "needs_exploration"]
    assert len(exploring) == len(task.exploration)
    assert all(p.planner_seconds > 0 for p in task.plans)
    assert task.to_json()["plans"][0]["planner_seconds"] == round(task.plans[0].planner_seconds, 4)


def test_the_cli_reports_impossible_with_its_exit_code(
    tmp_path: Path, home: Home, capsys: pytest.CaptureFixture[str]
) -> None:
    from l3mp.cli import main

    db = tmp_path / "cli.db"
    memory = WorldMemory.create(SQLiteStore(db, DomainRegistry()), "home", "household")
    memory.add_entities(home.entities, facts=home.facts, input="survey")
    args = ["--db", str(db), "plan", "--memory", "home", "--goal", "(ringing phone_1)", "--open-world", "--json"]
    assert main(args) == 4
    out = capsys.readouterr().out
    assert '"status": "impossible"' in out and "phone_1 is ringing" in out


class _Slippery(SimEnvironment):
    """Every pick slips out of the gripper."""

    def execute(self, action: GroundAction) -> StepOutcome:
        if action.name == "pick":
            return StepOutcome(action, False, Delta(), (f"{action}: the gripper slipped",))
        return super().execute(action)


def test_an_abandoned_open_world_task_lists_its_replan_causes(memory: WorldMemory, home: Home) -> None:
    item = next(f.args[0] for f in sorted(home.facts, key=str) if f.predicate == "on")
    env = _Slippery(Simulator(home, seed=1))
    env.add_task(f"Pick up the {item}.", goal=f"(held {item} robot_1)")
    task = Runtime(memory, env, None, RuntimeConfig(open_world=True, max_replans=2)).step().task
    assert task is not None and task.status is TaskStatus.ABANDONED
    assert len(task.replans) == 3 and all(r.cause is ReplanCause.ACTION_FAILED for r in task.replans)
    assert "replanned 2 times: action_failed at (pick" in task.reason and "gripper slipped" in task.reason
