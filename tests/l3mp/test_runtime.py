"""The robot runtime over the simulator: reports, tasks, execution updates, divergence, replans, stop/resume."""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

from kg_memory import Delta, DomainRegistry, Fact, UpdateSource, WorldMemory
from kg_memory.stores import SQLiteStore
from l3mp.runtime import (
    Environment,
    ReplanCause,
    Runtime,
    RuntimeConfig,
    TaskRequest,
    TaskStatus,
    resume_step,
)
from l3mp.service.dashboard.views import runtime_tasks
from planning.evaluator import GroundAction, StepOutcome
from sim import HomeSpec, Simulator, generate_home
from sim.environment import MoveTarget, SimEnvironment
from sim.household import CONTAINER_TYPES, Home
from sim.model.simulated import ErrorRates, SimulatedModel


@pytest.fixture(scope="module")
def home() -> Home:
    return generate_home(HomeSpec(seed=4, rooms=6, items=24, people=3))


@dataclass
class Setup:
    store: SQLiteStore
    memory: WorldMemory
    sim: Simulator
    model: SimulatedModel


@pytest.fixture
def setup(tmp_path: Path, home: Home) -> Setup:
    store = SQLiteStore(tmp_path / "runtime.db", DomainRegistry())
    memory = WorldMemory.create(store, "home", "household")
    memory.add_entities(home.entities, facts=home.facts, input="survey")
    sim = Simulator(home, seed=1)
    return Setup(store, memory, sim, SimulatedModel(sim.world, ErrorRates(rate=0.0)))


def _far_item(sim: Simulator) -> str:
    """An item on a receptacle in another room than the robot's, so reaching it takes a move."""
    robot_room = next(f.args[1] for f in sim.state if f.predicate == "robot_at")
    return next(
        f.args[0]
        for f in sorted(sim.state, key=str)
        if f.predicate == "on"
        and sim.home.room_of[f.args[1]] != robot_room
        and sim.home.by_name[f.args[0]].type in ("book", "pen", "remote")
    )


def test_sim_environment_is_an_environment(setup: Setup) -> None:
    assert isinstance(SimEnvironment(setup.sim), Environment)


def test_a_short_episode_applies_reports_and_completes_a_task(setup: Setup) -> None:
    env = SimEnvironment(setup.sim, setup.model, seed=3)
    events = [env.human_event(), env.human_event()]
    request = env.new_task()  # English: the simulated model states the goal
    report = Runtime(setup.memory, env, setup.model).run(5, until_idle=True)

    first = report.steps[0]
    assert first.reports == tuple(e.text for e in events)
    assert [u.status for u in first.updates if u.source == "nl"] == ["applied", "applied"]
    task = first.task
    assert task is not None and task.id == request.id and task.status is TaskStatus.SUCCEEDED
    assert task.plans[0].status == "solved" and task.actions and all(a.executed for a in task.actions)
    assert env.judge(request, task.goal) is True  # the truth says the goal holds
    assert all(s.accuracy == 1.0 for s in report.steps)  # no injected errors: memory equals the truth
    assert report.steps[-1].task is None and not report.stopped
    summary = json.loads(json.dumps(report.to_json()))["summary"]
    assert summary["tasks"]["succeeded"] == 1 and summary["actions"] == len(task.actions)


def test_execution_updates_are_recorded_with_source_execution(setup: Setup) -> None:
    item = _far_item(setup.sim)
    env = SimEnvironment(setup.sim, setup.model)
    request = env.add_task(f"Pick up the {item}.", goal=f"(held {item} robot_1)")
    task = Runtime(setup.memory, env, setup.model).run(1).steps[0].task
    assert task is not None and task.succeeded

    executions = [u for u in setup.memory.history() if u.source is UpdateSource.EXECUTION]
    assert [u.input for u in executions] == [a.action for a in task.actions]
    assert all(u.status.value == "applied" and u.meta["task"] == request.id for u in executions)
    assert [a.update.id for a in task.actions if a.update] == [u.id for u in executions]
    assert any(f.predicate == "held" and f.args[0] == item for u in executions for f in u.delta.add)


def test_a_person_moving_the_target_during_execution_causes_a_replan(setup: Setup) -> None:
    item = _far_item(setup.sim)
    mover = MoveTarget(item, seed=2)
    env = SimEnvironment(setup.sim, setup.model, disturbance=mover)
    env.add_task(f"Pick up the {item}.", goal=f"(held {item} robot_1)")
    task = Runtime(setup.memory, env, setup.model).run(1).steps[0].task

    assert task is not None and len(mover.fired) == 1  # the item was moved right after the first move
    assert task.replans and task.replans[0].cause is ReplanCause.DIVERGENCE
    assert any(item in d for d in task.replans[0].details)
    assert len(task.plans) >= 2 and task.plans[0].plan != task.plans[1].plan
    assert any(u.source == "nl" and u.status == "applied" for u in task.updates)  # the report was read
    assert task.status is TaskStatus.SUCCEEDED
    assert setup.sim.world.holds(Fact("held", (item, "robot_1")))
    shown = runtime_tasks(setup.memory)  # what the dashboard reads back from the checkpoint
    assert shown[0]["id"] == task.id and shown[0]["status"] == "succeeded"
    assert [c["cause"] for c in shown[0]["causes"]] == [r.cause.value for r in task.replans]
    assert shown[0]["plan"] == list(task.plans[-1].plan) and shown[0]["request"] == f"Pick up the {item}."


class _Sabotaged(SimEnvironment):
    """Every pick slips out of the gripper."""

    def execute(self, action: GroundAction) -> StepOutcome:
        if action.name == "pick":
            return StepOutcome(action, False, Delta(), (f"{action}: the gripper slipped",))
        return super().execute(action)


def test_the_replan_bound_is_respected(setup: Setup) -> None:
    item = _far_item(setup.sim)
    env = _Sabotaged(setup.sim, setup.model)
    env.add_task(f"Pick up the {item}.", goal=f"(held {item} robot_1)")
    config = RuntimeConfig(max_replans=2)
    task = Runtime(setup.memory, env, setup.model, config).run(1).steps[0].task

    assert task is not None and task.status is TaskStatus.ABANDONED
    assert len(task.replans) == 3 and len(task.plans) == 3
    assert all(r.cause is ReplanCause.ACTION_FAILED for r in task.replans)
    assert "gripper slipped" in task.reason and "replanned 2 times" in task.reason
    assert [a.executed for a in task.actions].count(False) == 3


class _StopOnTask(SimEnvironment):
    """Asks the runtime to stop while it takes the first task (mid-step)."""

    runtime: Runtime | None = None

    def next_task(self) -> TaskRequest | None:
        request = super().next_task()
        if request is not None and self.runtime is not None:
            self.runtime.stop()
        return request


def test_a_stop_finishes_the_step_and_a_new_runtime_resumes_from_the_store(setup: Setup) -> None:
    item = _far_item(setup.sim)
    home = setup.sim.home
    source = next(f.args[1] for f in setup.sim.state if f.predicate == "on" and f.args[0] == item)
    target = next(
        r
        for r in home.receptacles_for[home.by_name[item].type]
        if r != source and home.by_name[r].type not in CONTAINER_TYPES
    )
    env = _StopOnTask(setup.sim, setup.model)
    env.add_task(f"Pick up the {item}.", goal=f"(held {item} robot_1)")
    env.add_task(f"Put the {item} on the {target}.", goal=f"(on {item} {target})")
    first = Runtime(setup.memory, env, setup.model)
    env.runtime = first
    report = first.run(10)

    assert report.stopped and len(report.steps) == 1  # the step with the task was finished, no more
    assert report.tasks[0].status is TaskStatus.SUCCEEDED
    stored_version = report.end_version
    history = [u.id for u in setup.memory.history()]

    env.runtime = None
    reopened = WorldMemory.open(setup.store, "home")
    assert reopened.version == stored_version and resume_step(reopened) == 1
    second = Runtime(reopened, env, setup.model)
    assert second.next_step == 1
    resumed = second.run(5, until_idle=True)
    assert resumed.start_version == stored_version and resumed.steps[0].index == 1
    assert resumed.tasks[0].status is TaskStatus.SUCCEEDED  # the second task continued from held
    assert not any(a.action.startswith("(pick") for a in resumed.tasks[0].actions)  # it already held the item
    assert [u.id for u in reopened.history()][: len(history)] == history  # nothing lost


def test_signals_request_a_graceful_stop(setup: Setup) -> None:
    runtime = Runtime(setup.memory, SimEnvironment(setup.sim), setup.model)
    previous = signal.getsignal(signal.SIGTERM)
    with runtime.handle_signals():
        os.kill(os.getpid(), signal.SIGTERM)
        assert runtime.stopping
    assert signal.getsignal(signal.SIGTERM) is previous
    assert runtime.run(3).steps == ()  # a stopped runtime takes no further step
