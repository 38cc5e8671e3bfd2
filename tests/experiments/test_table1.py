"""The Table I experiment on a small home: identical episodes, plans judged in the true world (not
against a reference plan), a wrong memory blamed for the plan it spoils, and replay exact."""

from __future__ import annotations

import json
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from experiments.table1 import (
    LaneRun,
    ModelSource,
    SeedRun,
    Table1Config,
    judge_plan,
    lanes_heard_the_same,
    main,
    markdown,
    outcomes,
    run_seed,
    seed_figures,
    stat,
)
from experiments.table1.episode import plan_lanes
from experiments.updates import Variant
from kg_memory import Delta, DomainRegistry, Fact, UpdateSource, UpdateStatus, WorldMemory
from kg_memory.formula import Atom
from kg_memory.stores import SQLiteStore
from l3mp.outcomes import PlanOutcome
from l3mp.pipelines.plans import PlanConfig, PlanReport, TaskPlanner
from planning import GroundAction
from sim import HomeSpec, PlannedTask, Simulator, Task, generate_home
from sim.model import ErrorRates, SimulatedModel

SPEC = {"rooms": 6, "items": 24, "people": 3}
SMALL = ["--rooms=6", "--items=24", "--people=3"]
VARIANTS = (Variant("full", False), Variant("full", True), Variant("entities", True))


class NoEmbedder:
    dimension = 8

    def embed(self, texts: object) -> object:
        raise AssertionError("R- and R+ never embed")


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(tmp_path / "t.db", DomainRegistry())


@pytest.fixture(scope="module")
def seed_run(tmp_path_factory: pytest.TempPathFactory) -> SeedRun:
    store = SQLiteStore(tmp_path_factory.mktemp("table1") / "t.db", DomainRegistry())
    rates = ErrorRates(rate=0.5, correct_on_reprompt=0.5)
    config = Table1Config(seeds=(3,), steps=10, task_every=5, variants=VARIANTS, spec=SPEC)
    try:
        return run_seed(
            3, config, store, NoEmbedder(), ModelSource(kind="simulated", name="simulated (test)", rates=rates)
        )
    finally:
        store.close()


def test_every_variant_hears_the_same_episode(seed_run: SeedRun) -> None:
    assert len(seed_run.events) == 10 and [t["step"] for t in seed_run.tasks] == [5, 10]
    assert lanes_heard_the_same([seed_run])
    for lane in seed_run.lanes.values():
        assert len(lane.heard) == 12 and len(lane.lane.steps) == 10 and len(lane.plans) == 2
        assert [p.task for p in lane.plans] == [t["text"] for t in seed_run.tasks]
    # each lane keeps its own memory: at a 50% error rate the unverified one goes its own way
    accuracies = {name: lane.lane.steps[-1].accuracy for name, lane in seed_run.lanes.items()}
    assert accuracies["R-"] < 1.0 and len(set(accuracies.values())) > 1, accuracies


def test_a_lane_that_heard_something_else_is_caught(seed_run: SeedRun) -> None:
    lane = next(iter(seed_run.lanes.values()))
    lane.heard.append("an utterance nobody else heard")
    try:
        assert not lanes_heard_the_same([seed_run])
    finally:
        lane.heard.pop()


def test_the_results_carry_the_model_the_table_and_the_paper(seed_run: SeedRun) -> None:
    results = outcomes([seed_figures(seed_run)], "simulated (test)", {"seeds": [3], "steps": 10, "task_every": 5})
    assert results["identical_episodes"]
    assert results["model"] == "simulated (test)"
    summary = results["summary"]["R-V"]
    assert summary["paper"] == {"state_changes": 71.0, "plans": 72.5}
    assert len(summary["cumulative_success"]) == 10
    figures = results["seeds"]["3"]["variants"]["R-V"]
    assert sum(figures["plan_outcomes"].values()) == 2
    table = markdown(results)
    assert "| R+V |" in table and "| 92.5 |" in table and "simulated (test)" in table


def _planned(seed: int = 3) -> tuple[Simulator, PlannedTask]:
    sim = Simulator(generate_home(HomeSpec(seed=seed, **SPEC)), seed=seed)
    return sim, sim.new_task()


def _detour(sim: Simulator) -> tuple[GroundAction, GroundAction]:
    """Two moves of the robot that cancel out: a plan with them is valid and unlike any planner's."""
    robot = sim.home.robot
    here = next(f.args[1] for f in sim.world.facts_about(robot) if f.predicate == "robot_at")
    there = sorted(f.args[1] for f in sim.world.facts if f.predicate == "connected" and f.args[0] == here)[0]
    return GroundAction("move", (robot, here, there)), GroundAction("move", (robot, there, here))


def _report(task: Task, plan: tuple[GroundAction, ...]) -> PlanReport:
    return PlanReport(status=PlanOutcome.SOLVED, request=task.text, goal=task.goal_pddl, plan=plan, tier="retrieved")


def test_a_valid_plan_unlike_the_reference_is_a_success() -> None:
    sim, planned = _planned()
    reference = tuple(str(a) for a in planned.reference.plan)
    plan = (*_detour(sim), *planned.reference.plan)
    judged = judge_plan(sim, planned.task, reference, _report(planned.task, plan), 5)
    assert (judged.outcome, judged.matches_reference) == ("success", False)
    exact = judge_plan(sim, planned.task, reference, _report(planned.task, planned.reference.plan), 5)
    assert (exact.outcome, exact.matches_reference) == ("success", True)
    short = judge_plan(sim, planned.task, reference, _report(planned.task, plan[:-1]), 5)
    assert short.outcome != "success"


def _misplaced(sim: Simulator) -> tuple[str, str, str]:
    """An item on a receptacle, and a receptacle of the same type in another room."""
    rooms = {f.args[0]: f.args[1] for f in sim.world.facts if f.predicate == "in_room"}
    for fact in sorted(sim.world.facts, key=str):
        if fact.predicate != "on":
            continue
        item, where = fact.args
        kind = sim.world.type_of(where)
        others = sorted(
            r for r in sim.world.objects_of(kind or "receptacle") if r in rooms and rooms[r] != rooms.get(where)
        )
        if others:
            return item, where, others[0]
    raise AssertionError("no item to misplace in this home")


def test_a_wrong_fact_in_memory_spoils_the_plan_and_is_blamed(store: SQLiteStore) -> None:
    sim, _ = _planned()
    item, truly_on, believed_on = _misplaced(sim)
    person = sorted(sim.world.objects_of("person"))[0]
    task = Task("bring_item", f"Bring the {item} to {person}.", Atom("in_hand", (item, person)), (item, person))
    memory = WorldMemory.create(store, "wrong_fact", "household")
    memory.add_entities(sim.home.entities, facts=sim.home.facts, input="survey")
    wrong = Delta(remove=frozenset({Fact("on", (item, truly_on))}), add=frozenset({Fact("on", (item, believed_on))}))
    assert memory.apply(wrong, source=UpdateSource.SENSOR).status is UpdateStatus.APPLIED
    model = SimulatedModel(sim.world, ErrorRates(rate=0.0), seed=3)
    model.brief_task(task)
    report = TaskPlanner(memory, model, PlanConfig(retriever="full")).plan(task.text)
    assert report.solved, report.issues  # the memory says the plan works
    judged = judge_plan(sim, task, (), report, 5)
    assert judged.outcome == "memory_wrong"
    assert f"on {item} {believed_on}" in judged.reason.replace("(", "").replace(")", ""), judged.reason


def test_the_same_plan_from_a_right_memory_succeeds(store: SQLiteStore) -> None:
    sim, planned = _planned()
    memory = WorldMemory.create(store, "right", "household")
    memory.add_entities(sim.home.entities, facts=sim.home.facts, input="survey")
    model = SimulatedModel(sim.world, ErrorRates(rate=0.0), seed=3)
    model.brief_task(planned.task)
    report = TaskPlanner(memory, model, PlanConfig(retriever="full")).plan(planned.task.text)
    assert judge_plan(sim, planned.task, (), report, 5).outcome == "success"


def test_confidence_intervals_use_students_t() -> None:
    figure = stat([0.8, 0.9, 1.0])
    assert figure["mean"] == 0.9
    assert math.isclose(figure["ci95"], 4.303 * 0.1 / math.sqrt(3), abs_tol=1e-4)
    assert stat([0.5])["ci95"] is None


def test_replay_reproduces_a_recorded_run_exactly(tmp_path: Path) -> None:
    common = ["--seeds=1", "--first-seed=4", "--steps=10", "--variants=R-,R+V", *SMALL, "--error-rate=0.4"]
    recorded, replayed = tmp_path / "rec" / "table1.json", tmp_path / "rep" / "table1.json"
    cassettes = tmp_path / "cassettes"
    main([*common, f"--record={cassettes}", f"--out={recorded}", f"--figures={tmp_path / 'f1'}"])
    assert (cassettes / "seed4" / "R+V.jsonl").stat().st_size > 0
    main([f"--replay={cassettes}", f"--out={replayed}", f"--figures={tmp_path / 'f2'}"])
    assert replayed.read_bytes() == recorded.read_bytes()
    results = json.loads(replayed.read_text(encoding="utf-8"))
    assert results["model"].startswith("simulated") and results["identical_episodes"]
    assert sum(results["seeds"]["4"]["variants"]["R-"]["plan_outcomes"].values()) == 2
    timed = json.loads((tmp_path / "rep" / "table1_timings.json").read_text(encoding="utf-8"))
    assert timed["replayed_from"] == str(cassettes)
    assert (tmp_path / "f2" / "table1_fig2_state_changes.png").stat().st_size > 0


def test_replay_from_a_folder_without_a_recording_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"no manifest\.json"):
        main([f"--replay={tmp_path}", f"--out={tmp_path / 'x.json'}"])


@pytest.mark.slow
def test_sharing_changes_no_reported_number(tmp_path: Path) -> None:
    """Two seeds of a small home with all six variants, with and without sharing: the same bytes."""
    common = ["--seeds=2", "--steps=10", "--task-every=5", "--rooms=4", "--items=8", "--people=2", "--jobs=1"]
    shared, alone = tmp_path / "shared" / "table1.json", tmp_path / "alone" / "table1.json"
    main([*common, f"--out={shared}", f"--figures={tmp_path / 'f1'}"])
    main([*common, "--no-share", f"--out={alone}", f"--figures={tmp_path / 'f2'}"])
    assert shared.read_bytes() == alone.read_bytes()
    timed = json.loads((tmp_path / "shared" / "table1_timings.json").read_text(encoding="utf-8"))
    calls = timed["planner_calls"]
    assert timed["shared_solves"] and sum(c["shared"] for c in calls.values()) > 0, calls
    unshared = json.loads((tmp_path / "alone" / "table1_timings.json").read_text(encoding="utf-8"))
    assert not unshared["shared_solves"] and unshared["planner_calls"] == {"0": {}, "1": {}}


class HeldPlanner:
    """A lane's planner that records its thread and, if told, waits for another lane's to start."""

    def __init__(self, name: str, started: dict[str, threading.Event], wait_for: str | None = None) -> None:
        self.name, self.started, self.wait_for = name, started, wait_for
        self.thread = ""

    def plan(self, request: str) -> PlanReport:
        self.thread = threading.current_thread().name
        self.started[self.name].set()
        if self.wait_for is not None:  # only returns if the other lane plans at the same time
            assert self.started[self.wait_for].wait(60.0), f"{self.wait_for} never started beside {self.name}"
        return PlanReport(status=PlanOutcome.SOLVED, request=f"{self.name}: {request}")


def _held_lane(variant: Variant, planner: HeldPlanner) -> LaneRun:
    return LaneRun(lane=SimpleNamespace(variant=variant), planner=planner)  # type: ignore[arg-type]


def test_lanes_planning_concurrently_keep_their_order() -> None:
    variants = [Variant("full", False), Variant("search", False), Variant("search", True), Variant("full", True)]
    names = [v.name for v in variants]
    started = {name: threading.Event() for name in names}
    # R- waits for R-V (the last lane) to start: both must be planning at once
    waits = {"R-": "R-V", "RS": None, "RSV": None, "R-V": None}
    planners = {name: HeldPlanner(name, started, waits[name]) for name in names}
    lanes = [_held_lane(v, planners[v.name]) for v in variants]
    with ThreadPoolExecutor(max_workers=len(lanes)) as pool:
        reports = plan_lanes(lanes, "tidy up", pool)
    assert [r.request for r in reports] == [f"{name}: tidy up" for name in names]
    assert planners["RS"].thread == planners["RSV"].thread  # the searching lanes: one thread, in turn
    assert planners["R-"].thread != planners["R-V"].thread
