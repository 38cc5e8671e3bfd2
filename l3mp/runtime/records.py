"""What the runtime did, step by step: frozen records with ``to_json()`` (nothing here writes)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kg_memory.model import Update
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


@dataclass(frozen=True, slots=True)
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
        issues = tuple(i.message for i in update.issues)
        return cls(update.id, update.source.value, update.status.value, update.version, text, issues)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "status": self.status,
            "version": self.version,
            "input": self.input,
            "issues": list(self.issues),
        }


@dataclass(frozen=True, slots=True)
class PlanRecord:
    status: str
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
        plan = tuple(str(a) for a in report.plan)
        seconds = sum(report.timings.get(k, 0.0) for k in ("world", "planning", "exploration_planning"))
        return cls(
            report.status,
            report.goal,
            plan,
            report.tier,
            report.version,
            tuple(report.issues),
            seconds,
            report.cost,
            report.optimal,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "goal": self.goal,
            "plan": list(self.plan),
            "tier": self.tier,
            "version": self.version,
            "issues": list(self.issues),
            "planner_seconds": round(self.planner_seconds, 4),
            "cost": self.cost,
            "optimal": self.optimal,
        }


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """One plan step: ``executed`` (with the execution update), ``failed`` (refused by the environment)."""

    action: str
    executed: bool
    reasons: tuple[str, ...] = ()
    update: UpdateRecord | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "executed": self.executed,
            "reasons": list(self.reasons),
            "update": self.update.to_json() if self.update else None,
        }


@dataclass(frozen=True, slots=True)
class ReplanRecord:
    cause: ReplanCause
    action: str | None  # the step at which it was noticed
    details: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"cause": self.cause.value, "action": self.action, "details": list(self.details)}


@dataclass(frozen=True, slots=True)
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
    questions: tuple[Mapping[str, Any], ...] = ()
    exploration: tuple[Mapping[str, Any], ...] = ()
    stages: Mapping[str, Any] | None = None

    @property
    def succeeded(self) -> bool:
        return self.status is TaskStatus.SUCCEEDED

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "request": self.request,
            "goal": self.goal,
            "status": self.status.value,
            "reason": self.reason,
            "plans": [p.to_json() for p in self.plans],
            "actions": [a.to_json() for a in self.actions],
            "replans": [r.to_json() for r in self.replans],
            "updates": [u.to_json() for u in self.updates],
            "questions": [dict(q) for q in self.questions],
            "exploration": [dict(e) for e in self.exploration],
            "stages": dict(self.stages) if self.stages is not None else None,
        }


@dataclass(frozen=True, slots=True)
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

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "version_before": self.version_before,
            "version_after": self.version_after,
            "reports": list(self.reports),
            "updates": [u.to_json() for u in self.updates],
            "task": self.task.to_json() if self.task else None,
            "accuracy": self.accuracy,
        }


@dataclass(frozen=True, slots=True)
class RunReport:
    memory: str
    start_version: int
    end_version: int
    steps: tuple[StepRecord, ...]
    stopped: bool  # ended by a stop request (the current step was finished first)

    @property
    def tasks(self) -> tuple[TaskRecord, ...]:
        return tuple(s.task for s in self.steps if s.task is not None)

    def summary(self) -> dict[str, Any]:
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

    def to_json(self) -> dict[str, Any]:
        return {
            "memory": self.memory,
            "start_version": self.start_version,
            "end_version": self.end_version,
            "stopped": self.stopped,
            "summary": self.summary(),
            "steps": [s.to_json() for s in self.steps],
        }
