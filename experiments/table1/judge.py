"""A plan from a variant's memory, judged in the true world (not against a reference plan).

success       the plan runs in the true state and the task's goal holds afterwards, whichever plan it is;
memory_wrong  the plan fails in the true world although the memory said it works: a step's
              precondition is false in truth (the first such step is kept), or the plan runs but
              neither the task's goal nor the model's own goal holds afterwards;
goal_error    the model never gave a goal that passed the check, or its goal holds after the plan
              but the task's does not (a wrong goal planned correctly);
no_plan       the goal was accepted but the planner found no plan (unsolvable, timeout, error).
"""

from __future__ import annotations

from dataclasses import dataclass

from l3mp.outcomes import PlanOutcome
from l3mp.pipelines.plans import PlanReport
from planning import check_goal
from sim import Simulator, Task

OUTCOMES = ("success", "memory_wrong", "goal_error", "no_plan")


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanJudgement:
    step: int  # the state change after which the task was given
    task: str
    kind: str
    outcome: str  # one of OUTCOMES
    status: str  # the pipeline's status
    tier: str | None
    goal: str | None  # the model's goal, as checked
    plan: tuple[str, ...]
    matches_reference: bool
    reason: str  # why it failed, in English (the first failing precondition for memory_wrong)
    prompt_tokens: int
    completion_tokens: int


def judge_plan(sim: Simulator, task: Task, reference: tuple[str, ...], report: PlanReport, step: int) -> PlanJudgement:
    """Classify ``report`` by running its plan on a copy of ``sim``'s true state."""
    outcome, reason = _classify(sim, task, report)
    plan = tuple(str(a) for a in report.plan)
    return PlanJudgement(
        step=step,
        task=task.text,
        kind=task.kind,
        outcome=outcome,
        status=report.status,
        tier=report.tier,
        goal=report.goal,
        plan=plan,
        matches_reference=bool(plan) and plan == reference,
        reason=reason,
        prompt_tokens=report.usage.prompt_tokens,
        completion_tokens=report.usage.completion_tokens,
    )


def _classify(sim: Simulator, task: Task, report: PlanReport) -> tuple[str, str]:
    if report.status in (PlanOutcome.INVALID_GOAL, PlanOutcome.INVALID_REQUEST):
        return "goal_error", "; ".join(report.issues) or report.status
    if not report.solved:
        return "no_plan", f"{report.status}: " + ("; ".join(report.issues) or "the planner found no plan")
    judgement = sim.judge(report.plan, task.goal)
    if judgement.success:
        return "success", ""
    if not judgement.executable:
        return "memory_wrong", judgement.reason  # the first step whose precondition is false in truth
    if _own_goal_holds(sim, report):
        return "goal_error", f"the model's goal {report.goal} holds, the task's {task.goal} does not"
    return "memory_wrong", judgement.reason


def _own_goal_holds(sim: Simulator, report: PlanReport) -> bool:
    """Whether the model's goal holds in the true world after the plan."""
    checked = check_goal(report.goal or "", sim.domain, sim.world.entities)
    if checked.goal is None:
        return False
    return bool(sim.evaluator.validate(report.plan, sim.world, checked.goal).goal_reached)
