"""One task loop for every runtime: get a plan, follow it while perceiving, judge, replan within budgets.

How a task gets its next plan is the pluggable part (:class:`TaskPlanning`): in the closed world it
plans or fails (:class:`ClosedWorld`); in the open world it may also ask back, explore and split the
request into stages (:mod:`l3mp.runtime.open_world`). The rest is this loop's, the same for both:

* each action is checked against the memory before it runs; after it, its expected effects are
  written as an ``execution`` update, time passes in the environment, reports are read and the robot
  looks again (what it perceives replaces every expected effect the environment contradicts);
* a refused action, an action that no longer applies in the memory, a rest of the plan that the
  memory no longer supports (a divergence), or a plan that ran without reaching its goal leads to a
  replan from the updated memory;
* a task fails when its action budget (``max_actions``) is used up, and is abandoned after
  ``max_replans`` replans, with the cause of each listed in its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kg_memory.formula import Formula
from kg_memory.memory import WorldMemory
from kg_memory.model import Delta, UpdateSource
from l3mp.llm.base import LanguageModel
from l3mp.outcomes import Question
from l3mp.pipelines.plans import PlanReport, TaskPlanner, world_of
from l3mp.runtime.config import RuntimeConfig
from l3mp.runtime.environment import Environment, TaskRequest
from l3mp.runtime.records import (
    ActionRecord,
    ExplorationRecord,
    PlanRecord,
    ReplanCause,
    ReplanRecord,
    Stage,
    TaskRecord,
    TaskStatus,
    UpdateRecord,
)
from l3mp.runtime.senses import Senses
from planning.evaluator import ActionEvaluator, GroundAction
from planning.goal_reader import parse_goal
from planning.world import World


@dataclass(slots=True, kw_only=True)
class TaskLog:
    """What happened in a task so far; :meth:`finish` freezes it into its :class:`TaskRecord`."""

    request: TaskRequest
    goal: str | None = None
    plans: list[PlanRecord] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    replans: list[ReplanRecord] = field(default_factory=list)
    updates: list[UpdateRecord] = field(default_factory=list)
    # open world
    questions: tuple[Question, ...] = ()
    exploration: list[ExplorationRecord] = field(default_factory=list)
    stages: Stage | None = None

    def finish(self, status: TaskStatus, reason: str = "") -> TaskRecord:
        return TaskRecord(
            id=self.request.id,
            request=self.request.text,
            goal=self.goal,
            status=status,
            reason=reason,
            plans=tuple(self.plans),
            actions=tuple(self.actions),
            replans=tuple(self.replans),
            updates=tuple(self.updates),
            questions=self.questions,
            exploration=tuple(self.exploration),
            stages=self.stages,
        )


class TaskPlanning(Protocol):
    """How a task gets its next plan to follow (one per kind of world)."""

    def next_plan(self, request: TaskRequest, log: TaskLog) -> PlanReport | TaskRecord:
        """A solved plan for the loop to follow, or the end of the task (``log.finish(...)``).

        Every plan report it got is recorded in ``log.plans``.
        """
        ...


def no_plan(report: PlanReport) -> str:
    """Why a task ends without a plan, for its record."""
    return f"no plan ({report.status}): {'; '.join(report.issues) or 'no details'}"


class ClosedWorld:
    """The closed world: the memory is taken as the whole truth; a task plans or fails."""

    def __init__(self, planner: TaskPlanner) -> None:
        self.planner = planner

    def next_plan(self, request: TaskRequest, log: TaskLog) -> PlanReport | TaskRecord:
        report = self.planner.plan(request.text, goal=log.goal)
        log.plans.append(PlanRecord.of(report))
        return report if report.solved else log.finish(TaskStatus.FAILED, no_plan(report))


class TaskLoop:
    """Runs tasks in ``env`` from ``memory`` (see the module)."""

    def __init__(
        self,
        memory: WorldMemory,
        env: Environment,
        model: LanguageModel | None,
        config: RuntimeConfig,
        senses: Senses,
    ) -> None:
        self.memory = memory
        self.env = env
        self.model = model
        self.config = config
        self.senses = senses
        self.evaluator = ActionEvaluator(memory.domain)

    def run(self, request: TaskRequest, planning: TaskPlanning) -> TaskRecord:
        """Plan, follow, judge and replan until the task succeeds, fails or is abandoned."""
        log = TaskLog(request=request, goal=request.goal)
        if request.goal is None and self.model is None:
            return log.finish(TaskStatus.FAILED, "an English task needs a language model; none was given")
        while True:
            report = planning.next_plan(request, log)
            if isinstance(report, TaskRecord):
                return report
            assert report.goal is not None  # a solved plan has a goal
            log.goal = report.goal  # replans keep the goal: the request is not re-read
            replan = self.follow(report.goal, report.plan, log)
            if replan is None:
                if self.achieved(request, report.goal):
                    return log.finish(TaskStatus.SUCCEEDED)
                replan = ReplanRecord(ReplanCause.GOAL_NOT_REACHED, None, ("the plan ran but the goal does not hold",))
            log.replans.append(replan)
            if len(log.actions) >= self.config.max_actions:
                return log.finish(TaskStatus.FAILED, f"action budget of {self.config.max_actions} used up")
            if len(log.replans) > self.config.max_replans:
                return log.finish(TaskStatus.ABANDONED, self._abandoned(log.replans))

    def achieved(self, request: TaskRequest, goal: str) -> bool:
        """Whether the goal holds: the environment's verdict where it can judge, else the memory's."""
        verdict = self.env.judge(request, goal)
        if verdict is not None:
            return verdict
        return self.evaluator.evaluate(parse_goal(goal), self._world())

    def follow(self, goal: str, plan: Sequence[GroundAction], log: TaskLog) -> ReplanRecord | None:
        """Execute the plan for ``goal``; the reason to replan, or None when it ran to its end as expected."""
        formula = parse_goal(goal)
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
                log.updates.append(self.senses.perceive()[0])  # see what is actually there
                return ReplanRecord(ReplanCause.ACTION_FAILED, str(action), outcome.reasons)
            meta = {"task": log.request.id, "plan": len(log.plans), "step": index}
            update = self.memory.apply(expected.delta, source=UpdateSource.EXECUTION, input=str(action), meta=meta)
            log.actions.append(ActionRecord(str(action), True, update=UpdateRecord.of(update)))
            log.updates.append(UpdateRecord.of(update))
            self.env.advance()
            log.updates.extend(self.senses.read_reports()[1])
            sensed, delta = self.senses.perceive()
            log.updates.append(sensed)
            diverged = self._divergence(plan[index + 1 :], formula, expected.delta, delta, objects)
            if diverged:
                return ReplanRecord(ReplanCause.DIVERGENCE, str(action), diverged)
        return None

    def _divergence(
        self, rest: Sequence[GroundAction], goal: Formula, expected: Delta, sensed: Delta, objects: set[str]
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

    def _abandoned(self, replans: Sequence[ReplanRecord]) -> str:
        causes = "; ".join(f"{r.cause.value} at {r.action}: {' '.join(r.details[:1])}" for r in replans)
        return f"replanned {self.config.max_replans} times: {causes}"

    def _world(self) -> World:
        return world_of(self.memory.domain, self.memory.state())
