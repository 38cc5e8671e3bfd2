"""The robot runtime: perceive, take reports, plan and execute tasks, monitor, replan.

Each :meth:`Runtime.step`:

1. perceives (a sensor update);
2. reads what people said (NL updates, Alg. 3);
3. takes one task, plans it from memory (Alg. 4) and executes it step by step. Before each action it
   is checked against the memory; after it, its expected effects are written as an ``execution``
   update, time passes in the environment, reports are read and the robot looks again: what it
   perceives replaces, as a ``sensor`` update, every expected effect the environment contradicts
   (how much it perceives after an action is the environment's to say). A refused
   action, an action that no longer applies in the memory, or a rest of the plan that the memory no
   longer supports (a divergence) leads to a replan from the updated memory, at most
   ``max_replans`` times;
4. writes a checkpoint (a no-op update whose meta carries the step index), so a new runtime over the
   same memory resumes where this one stopped.

A stop request (:meth:`Runtime.stop`, or SIGINT/SIGTERM inside :meth:`Runtime.handle_signals`) is
honoured between steps: the current step, and the task in it, is always finished.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from kg_memory.errors import InvalidValue
from kg_memory.memory import WorldMemory
from kg_memory.model import Delta, Fact, Issue, IssueCode, UpdateSource
from l3mp.llm.base import LanguageModel
from l3mp.pipelines import NLUpdateConfig, NLUpdater, SensorUpdater
from l3mp.pipelines.plans import PlanConfig, PlanReport, TaskPlanner
from l3mp.runtime.environment import Environment, TaskRequest
from l3mp.runtime.records import (
    ActionRecord,
    PlanRecord,
    ReplanCause,
    ReplanRecord,
    RunReport,
    StepRecord,
    TaskRecord,
    TaskStatus,
    UpdateRecord,
)
from planning.evaluator import ActionEvaluator, GroundAction
from planning.goal import parse_goal
from planning.world import World

CHECKPOINT_KEY = "runtime_step"


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    max_replans: int = 3  # per task
    max_actions: int = 60  # per task, over all its plans
    max_reports: int = 20  # read per drain; the rest wait for the next one
    update: NLUpdateConfig = field(default_factory=lambda: NLUpdateConfig(retriever="full"))
    plan: PlanConfig = field(default_factory=lambda: PlanConfig(retriever="full"))
    # open world (l3mp.runtime.explore): ask, explore for unknown locations, split into stages
    open_world: bool = False
    max_explorations: int = 8  # exploration sub-goals per task
    max_stage_depth: int = 2  # how deep stages may be split again

    def __post_init__(self) -> None:
        if self.max_explorations < 0 or self.max_stage_depth < 0:
            raise InvalidValue("runtime config", self, "max_explorations and max_stage_depth must be ≥ 0")
        if self.max_replans < 0 or self.max_actions < 1 or self.max_reports < 1:
            raise InvalidValue("runtime config", self, "max_replans must be ≥ 0, max_actions and max_reports ≥ 1")


def jaccard(a: frozenset[Fact], b: frozenset[Fact]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


@dataclass(slots=True)
class _TaskLog:
    request: TaskRequest
    goal: str | None = None
    plans: list[PlanRecord] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    replans: list[ReplanRecord] = field(default_factory=list)
    updates: list[UpdateRecord] = field(default_factory=list)

    questions: tuple[Any, ...] = ()
    exploration: list[dict[str, Any]] = field(default_factory=list)
    stages: dict[str, Any] | None = None

    def finish(self, status: TaskStatus, reason: str = "") -> TaskRecord:
        return TaskRecord(
            self.request.id,
            self.request.text,
            self.goal,
            status,
            reason,
            tuple(self.plans),
            tuple(self.actions),
            tuple(self.replans),
            tuple(self.updates),
            tuple(self.questions),
            tuple(self.exploration),
            self.stages,
        )


class Runtime:
    def __init__(
        self,
        memory: WorldMemory,
        env: Environment,
        model: LanguageModel | None = None,
        config: RuntimeConfig | None = None,
    ) -> None:
        self.memory = memory
        self.env = env
        self.model = model
        self.config = config or RuntimeConfig()
        self.sensor = SensorUpdater(memory)
        self.nl = NLUpdater(memory, model, self.config.update) if model is not None else None
        self.planner = TaskPlanner(memory, model, self.config.plan)
        self.evaluator = ActionEvaluator(memory.domain)
        self._stop = threading.Event()
        self.next_step = resume_step(memory)

    # -- control -----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Ask the runtime to stop after the current step."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @contextmanager
    def handle_signals(self, signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
        """Within the block, these signals request a graceful stop (main thread only)."""

        def handler(signum: int, frame: FrameType | None) -> None:
            self.stop()

        previous = {s: signal.signal(s, handler) for s in signals}
        try:
            yield
        finally:
            for s, old in previous.items():
                signal.signal(s, old)

    def run(self, max_steps: int, *, until_idle: bool = False) -> RunReport:
        """Up to ``max_steps`` steps; earlier on a stop request, or (``until_idle``) after an idle step."""
        start = self.memory.version
        steps: list[StepRecord] = []
        while len(steps) < max_steps and not self.stopping:
            record = self.step()
            steps.append(record)
            if until_idle and record.task is None and not record.reports:
                break
        return RunReport(self.memory.name, start, self.memory.version, tuple(steps), self.stopping)

    # -- one step ----------------------------------------------------------------------------------

    def step(self) -> StepRecord:
        index, before = self.next_step, self.memory.version
        updates = [self._perceive()[0]]
        reports, heard = self._read_reports()
        updates += heard
        request = self.env.next_task()
        task = self._run_task(request) if request is not None else None
        if task is None:
            self.env.advance()  # time passes even when the robot is idle
        truth = self.env.truth()
        accuracy = jaccard(self.memory.facts(), truth) if truth is not None else None
        self._checkpoint(index, task, accuracy)
        self.next_step = index + 1
        return StepRecord(index, before, self.memory.version, reports, tuple(updates), task, accuracy)

    def _perceive(self) -> tuple[UpdateRecord, Delta]:
        result = self.sensor.apply(self.env.observe())
        return UpdateRecord.of(result.update), result.delta

    def _read_reports(self) -> tuple[tuple[str, ...], list[UpdateRecord]]:
        texts: list[str] = []
        records: list[UpdateRecord] = []
        while len(texts) < self.config.max_reports and (text := self.env.next_report()) is not None:
            texts.append(text)
            if self.nl is not None:
                records.append(UpdateRecord.of(self.nl.update(text).update))
            else:
                issue = Issue(IssueCode.INVALID_INPUT, None, "the runtime has no language model to read reports")
                records.append(UpdateRecord.of(self.memory.reject(source=UpdateSource.NL, input=text, issues=[issue])))
        return tuple(texts), records

    def _checkpoint(self, index: int, task: TaskRecord | None, accuracy: float | None) -> None:
        meta: dict[str, Any] = {CHECKPOINT_KEY: index, "accuracy": accuracy}
        if task is not None:
            meta["task"] = _task_summary(task)
        self.memory.apply(Delta(), source=UpdateSource.API, input=f"runtime checkpoint {index}", meta=meta)

    # -- tasks -------------------------------------------------------------------------------------

    def _run_task(self, request: TaskRequest) -> TaskRecord:
        if self.config.open_world:
            from l3mp.runtime.explore import run_open_task  # the open-world loop lives apart

            return run_open_task(self, request, _TaskLog)
        log = _TaskLog(request, request.goal)
        if request.goal is None and self.model is None:
            return log.finish(TaskStatus.FAILED, "an English task needs a language model; none was given")
        while True:
            report = self.planner.plan(request.text, goal=log.goal)
            log.plans.append(PlanRecord.of(report))
            if not report.solved:
                issues = "; ".join(report.issues) or "no details"
                return log.finish(TaskStatus.FAILED, f"no plan ({report.status}): {issues}")
            log.goal = report.goal  # replans keep the goal: the request is not re-read
            replan = self._follow(report, log)
            if replan is None:
                if self._achieved(request, report):
                    return log.finish(TaskStatus.SUCCEEDED)
                replan = ReplanRecord(ReplanCause.GOAL_NOT_REACHED, None, ("the plan ran but the goal does not hold",))
            log.replans.append(replan)
            if len(log.actions) >= self.config.max_actions:
                return log.finish(TaskStatus.FAILED, f"action budget of {self.config.max_actions} used up")
            if len(log.replans) > self.config.max_replans:
                causes = "; ".join(f"{r.cause.value} at {r.action}: {' '.join(r.details[:1])}" for r in log.replans)
                return log.finish(TaskStatus.ABANDONED, f"replanned {self.config.max_replans} times: {causes}")

    def _achieved(self, request: TaskRequest, report: PlanReport) -> bool:
        verdict = self.env.judge(request, report.goal)
        if verdict is not None:
            return verdict
        return report.goal is not None and self.evaluator.evaluate(parse_goal(report.goal), self._world())

    def _follow(self, report: PlanReport, log: _TaskLog) -> ReplanRecord | None:
        """Execute the plan; the reason to replan, or None when it ran to its end as expected."""
        assert report.goal is not None  # a solved plan has a goal
        goal = parse_goal(report.goal)
        plan = report.plan
        objects = {a for action in plan for a in action.args}
        for index, action in enumerate(plan):
            if len(log.actions) >= self.config.max_actions:
                return ReplanRecord(ReplanCause.PRECONDITION, str(action), ("the action budget is used up",))
            expected = self.evaluator.check(action, self._world())
            if not expected.applicable:
                return ReplanRecord(ReplanCause.PRECONDITION, str(action), expected.reasons)
            outcome = self.env.execute(action)
            if not outcome.applicable:
                log.actions.append(ActionRecord(str(action), False, outcome.reasons))
                log.updates.append(self._perceive()[0])  # see what is actually there
                return ReplanRecord(ReplanCause.ACTION_FAILED, str(action), outcome.reasons)
            meta = {"task": log.request.id, "plan": len(log.plans), "step": index}
            update = self.memory.apply(expected.delta, source=UpdateSource.EXECUTION, input=str(action), meta=meta)
            log.actions.append(ActionRecord(str(action), True, update=UpdateRecord.of(update)))
            log.updates.append(UpdateRecord.of(update))
            self.env.advance()
            log.updates.extend(self._read_reports()[1])
            sensed, delta = self._perceive()
            log.updates.append(sensed)
            diverged = self._divergence(plan[index + 1 :], goal, expected.delta, delta, objects)
            if diverged:
                return ReplanRecord(ReplanCause.DIVERGENCE, str(action), diverged)
        return None

    def _divergence(
        self, rest: Sequence[GroundAction], goal: Any, expected: Delta, sensed: Delta, objects: set[str]
    ) -> tuple[str, ...]:
        """Why the rest of the plan no longer fits the memory (empty when it does)."""
        contradicted = [f for f in expected.add if f in sensed.remove] + [f for f in expected.remove if f in sensed.add]
        outcome = self.evaluator.validate(rest, self._world(), goal)
        if outcome.executable and outcome.goal_reached and not contradicted:
            return ()
        changed = sorted(str(f) for f in sensed.remove | sensed.add if objects & set(f.args))
        return (
            *outcome.reasons,
            *(f"perception contradicts the expected effect {f}" for f in contradicted),
            *(f"perceived change to a fact the plan relies on: {f}" for f in changed),
        )

    def _world(self) -> World:
        state = self.memory.state()
        constants = self.memory.domain.constants
        return World(self.memory.domain, (e for n, e in state.entities.items() if n not in constants), state.facts)


def _task_summary(task: TaskRecord) -> dict[str, Any]:
    """What a checkpoint keeps of a task: enough for the dashboard to show it and why it replanned."""
    last = task.plans[-1] if task.plans else None
    return {
        "id": task.id,
        "status": task.status.value,
        "replans": len(task.replans),
        "request": task.request[:500],
        "goal": task.goal,
        "reason": task.reason[:500],
        "causes": [r.to_json() for r in task.replans],
        "plan": list(last.plan) if last else [],
        "tier": last.tier if last else None,
        "actions": sum(a.executed for a in task.actions),
    }


def resume_step(memory: WorldMemory) -> int:
    """The step after the last checkpoint in the memory's history (0 for a memory never run)."""
    for update in reversed(memory.history()):
        step = update.meta.get(CHECKPOINT_KEY)
        if isinstance(step, int):
            return step + 1
    return 0
