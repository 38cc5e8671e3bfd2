"""What the runtime did, step by step: frozen records with ``to_json()`` (nothing here writes)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kg_memory.model import Update
from l3mp._json import JSONObject, json_of
from l3mp.outcomes import ExplorationStep, PlanOutcome, Question
from l3mp.pipelines.plans import PlanReport


class TaskStatus(enum.StrEnum):
    SUCCEEDED = "succeeded"  # the goal holds in the environment (its truth, where it can judge)
    FAILED = "failed"  # no plan, or the plan ran out without the goal; ``reason`` says why
    ABANDONED = "abandoned"  # the replan bound was reached
    NEEDS_INFORMATION = "needs_information"  # open world: ``questions`` went back to whoever asked


class ReplanCause(enum.StrEnum):
    PRECONDITION = "precondition"  # the next action no longer applies in the memory
    ACTION_FAILED = "action_failed"  # the environment refused the action
    DIVERGENCE = "divergence"  # what was perceived or reported breaks the rest of the plan
    GOAL_NOT_REACHED = "goal_not_reached"  # the plan ran but the environment says the goal does not hold


class ExplorationOutcome(enum.StrEnum):
    FOUND = "found"  # perceived once the sub-goal's plan ran
    INTERRUPTED = "interrupted"  # the sub-goal's plan did not run to its end
    NOT_THERE = "not there"


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateRecord:
    id: str
    source: str
    status: str
    version: int
    input: str
    issues: tuple[str, ...] = ()

    @classmethod
    def of(cls, update: Update) -> UpdateRecord:
        text = update.input if len(update.input) <= 200 else update.input[:197] + "..."
        return cls(
            id=update.id,
            source=update.source.value,
            status=update.status.value,
            version=update.version,
            input=text,
            issues=tuple(i.message for i in update.issues),
        )

    def to_json(self) -> JSONObject:
        return json_of(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRecord:
    status: PlanOutcome
    goal: str | None
    plan: tuple[str, ...]
    tier: str | None
    version: int
    issues: tuple[str, ...] = ()
    planner_seconds: float = 0.0  # building the problem and planning, exploration sub-goals included
    cost: float | None = None  # in the memory's state (its length in a domain without action costs)
    optimal: bool = False  # proven the cheapest

    @classmethod
    def of(cls, report: PlanReport) -> PlanRecord:
        seconds = sum(report.timings.get(k, 0.0) for k in ("world", "planning", "exploration_planning"))
        return cls(
            status=report.status,
            goal=report.goal,
            plan=tuple(str(a) for a in report.plan),
            tier=report.tier,
            version=report.version,
            issues=tuple(report.issues),
            planner_seconds=seconds,
            cost=report.cost,
            optimal=report.optimal,
        )

    def to_json(self) -> JSONObject:
        return {**json_of(self), "planner_seconds": round(self.planner_seconds, 4)}


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """One plan step: ``executed`` (with the execution update), ``failed`` (refused by the environment)."""

    action: str
    executed: bool
    reasons: tuple[str, ...] = ()
    update: UpdateRecord | None = None

    def to_json(self) -> JSONObject:
        return json_of(self)


@dataclass(frozen=True, slots=True)
class ReplanRecord:
    cause: ReplanCause
    action: str | None  # the step at which it was noticed
    details: tuple[str, ...]

    def to_json(self) -> JSONObject:
        return json_of(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExplorationRecord:
    """An exploration sub-goal the runtime followed, and what it came to."""

    step: ExplorationStep
    outcome: ExplorationOutcome
    actions: int  # executed for it

    def to_json(self) -> JSONObject:
        return {**self.step.to_json(), "outcome": self.outcome.value, "actions": self.actions}


@dataclass(frozen=True, slots=True, kw_only=True)
class Stage:
    """A request split into stages (open world), or one stage of it: a tree of attempts.

    ``whole``: why the request did not plan whole (where it was split); ``reason``: why a stage, or a
    split that failed, ended as it did; ``stages``: the stages, in order, as far as they were run
    (``None`` for a stage that was not split).
    """

    request: str
    whole: str | None = None
    status: TaskStatus
    reason: str | None = None
    stages: tuple[Stage, ...] | None = None

    def to_json(self) -> JSONObject:
        return {k: v for k, v in json_of(self).items() if v is not None}


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRecord:
    id: str
    request: str
    goal: str | None
    status: TaskStatus
    reason: str
    plans: tuple[PlanRecord, ...]
    actions: tuple[ActionRecord, ...]
    replans: tuple[ReplanRecord, ...]
    updates: tuple[UpdateRecord, ...]  # written while the task ran (execution, sensor, reports)
    # open world: questions asked, exploration sub-goals with their outcomes, the tree of stages
    questions: tuple[Question, ...] = ()
    exploration: tuple[ExplorationRecord, ...] = ()
    stages: Stage | None = None

    @property
    def succeeded(self) -> bool:
        return self.status is TaskStatus.SUCCEEDED

    def to_json(self) -> JSONObject:
        return json_of(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRecord:
    index: int
    version_before: int
    version_after: int
    reports: tuple[str, ...]  # what people said this step
    updates: tuple[UpdateRecord, ...]  # perception and reports (a task's own are in ``task``)
    task: TaskRecord | None
    accuracy: float | None  # fact Jaccard of the memory vs the environment's truth, if it has one

    def all_updates(self) -> tuple[UpdateRecord, ...]:
        return self.updates + (self.task.updates if self.task else ())

    def to_json(self) -> JSONObject:
        return json_of(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunReport:
    memory: str
    start_version: int
    end_version: int
    steps: tuple[StepRecord, ...]
    stopped: bool  # ended by a stop request (the current step was finished first)

    @property
    def tasks(self) -> tuple[TaskRecord, ...]:
        return tuple(s.task for s in self.steps if s.task is not None)

    def summary(self) -> JSONObject:
        updates = [u for s in self.steps for u in s.all_updates()]
        accuracy = [s.accuracy for s in self.steps if s.accuracy is not None]
        return {
            "steps": len(self.steps),
            "tasks": {status.value: sum(t.status is status for t in self.tasks) for status in TaskStatus},
            "replans": sum(len(t.replans) for t in self.tasks),
            "actions": sum(sum(a.executed for a in t.actions) for t in self.tasks),
            "updates": {status: sum(u.status == status for u in updates) for status in ("applied", "rejected", "noop")},
            "final_accuracy": accuracy[-1] if accuracy else None,
            "mean_accuracy": sum(accuracy) / len(accuracy) if accuracy else None,
        }

    def to_json(self) -> JSONObject:
        return {
            "memory": self.memory,
            "start_version": self.start_version,
            "end_version": self.end_version,
            "stopped": self.stopped,
            "summary": self.summary(),
            "steps": [s.to_json() for s in self.steps],
        }
