"""The runtime's open-world task loop: ask back, explore for unknown locations, split into stages.

For each task (with ``RuntimeConfig.open_world``):

* the :class:`~l3mp.pipelines.openworld.OpenWorldPlanner` plans, asks or proposes an exploration
  sub-goal;
* ``needs_information``: the questions go back to whoever asked (an environment implementing
  :class:`~l3mp.runtime.environment.Asker`) and the task ends with that status; a follow-up task with
  ``answers`` completes it;
* ``needs_exploration``: the sub-goal's plan is executed (perceiving after each action); the place is
  marked searched and planning resumes: with the item seen, the end goal plans; at most
  ``max_explorations`` sub-goals, each recorded with its outcome;
* ``solved``: executed, monitored and replanned like any task;
* a request in English that does not plan whole (and is not ``impossible``) is split by the model into
  ordered stages, each run as a task of its own (recursively, to ``max_stage_depth``); the tree of
  attempts is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

from kg_memory.unknowns import unplaced
from l3mp.pipelines.exchange import AnswerProblem, Exchange, ask_parsed
from l3mp.pipelines.openworld import OpenWorldPlanner
from l3mp.pipelines.plans import IMPOSSIBLE, NEEDS_EXPLORATION, NEEDS_INFORMATION
from l3mp.prompts import StagesInput, stages
from l3mp.runtime.environment import Asker, TaskRequest
from l3mp.runtime.records import (
    ActionRecord,
    PlanRecord,
    ReplanCause,
    ReplanRecord,
    TaskRecord,
    TaskStatus,
    UpdateRecord,
)

# The runtime and its task log are passed in (not imported), so runtime -> explore is the only edge.
Runtime = Any


class _TaskLog(Protocol):
    """What the loop needs of the runtime's task log."""

    goal: str | None
    plans: list[PlanRecord]
    actions: list[ActionRecord]
    replans: list[ReplanRecord]
    updates: list[UpdateRecord]
    questions: tuple[Any, ...]
    exploration: list[dict[str, Any]]
    stages: dict[str, Any] | None

    def finish(self, status: TaskStatus, reason: str = "") -> TaskRecord: ...


LogFactory = Callable[[TaskRequest, str | None], _TaskLog]


def run_open_task(runtime: Runtime, request: TaskRequest, new_log: LogFactory, depth: int = 0) -> TaskRecord:
    planner = OpenWorldPlanner(runtime.memory, runtime.model, runtime.config.plan)
    log = new_log(request, request.goal)
    explored: set[str] = set()
    if request.goal is None and runtime.model is None:
        return log.finish(TaskStatus.FAILED, "an English task needs a language model; none was given")
    while True:
        report = planner.plan(request.text, goal=log.goal, answers=dict(request.answers), explored=explored)
        log.plans.append(PlanRecord.of(report))
        if report.status == NEEDS_INFORMATION:
            log.questions = report.questions
            if isinstance(runtime.env, Asker):
                runtime.env.ask(request, tuple(dict(q) for q in report.questions))
            return log.finish(TaskStatus.NEEDS_INFORMATION, "; ".join(report.issues))
        if report.status == NEEDS_EXPLORATION:
            if len(log.exploration) >= runtime.config.max_explorations:
                return log.finish(TaskStatus.FAILED, f"exploration budget of {runtime.config.max_explorations} used up")
            log.goal = report.goal  # the end goal stays; only the sub-goal changes
            log.exploration.append(_explore(runtime, report, log, explored))
            continue
        if not report.solved:
            return _unsolved(runtime, request, report.status, report.issues, log, new_log, depth)
        log.goal = report.goal
        replan = runtime._follow(report, log)
        if replan is None:
            if runtime._achieved(request, report):
                return log.finish(TaskStatus.SUCCEEDED)
            replan = ReplanRecord(ReplanCause.GOAL_NOT_REACHED, None, ("the plan ran but the goal does not hold",))
        log.replans.append(replan)
        if len(log.actions) >= runtime.config.max_actions:
            return log.finish(TaskStatus.FAILED, f"action budget of {runtime.config.max_actions} used up")
        if len(log.replans) > runtime.config.max_replans:
            return log.finish(TaskStatus.ABANDONED, f"replanned {runtime.config.max_replans} times")


def _explore(runtime: Runtime, report: Any, log: _TaskLog, explored: set[str]) -> dict[str, Any]:
    """Execute the sub-goal's plan; the record of the sub-goal with its outcome."""
    chosen = dict(report.exploration[-1])
    explored.add(chosen["place"])
    before = len(log.actions)
    replan = runtime._follow(replace(report, goal=chosen["subgoal"]), log)
    state = runtime.memory.state()
    missing = {e.name for e in unplaced(runtime.memory.domain, state.entities, state.facts)}
    found = chosen["item"] not in missing
    outcome = "found" if found else ("interrupted" if replan is not None else "not there")
    return {**chosen, "outcome": outcome, "actions": len(log.actions) - before}


def _unsolved(
    runtime: Runtime,
    request: TaskRequest,
    status: str,
    issues: tuple[str, ...],
    log: _TaskLog,
    new_log: LogFactory,
    depth: int,
) -> TaskRecord:
    reason = f"no plan ({status}): {'; '.join(issues) or 'no details'}"
    if status == IMPOSSIBLE or request.goal is not None or runtime.model is None:
        return log.finish(TaskStatus.FAILED, reason)
    if depth >= runtime.config.max_stage_depth:
        return log.finish(TaskStatus.FAILED, f"{reason}; stage depth {depth} reached")
    return _run_stages(runtime, request, log, new_log, depth, reason)


def _stage_list(data: Any) -> list[str]:
    found = data.get("stages") if isinstance(data, dict) else None
    if not isinstance(found, list) or not all(isinstance(s, str) and s.strip() for s in found) or len(found) < 2:
        raise AnswerProblem(['answer {"stages": [...]} with two or more requests, in order'])
    return list(found)


def _run_stages(
    runtime: Runtime, request: TaskRequest, log: _TaskLog, new_log: LogFactory, depth: int, reason: str
) -> TaskRecord:
    assert runtime.model is not None
    exchange = Exchange(
        runtime.model, stages.render(StagesInput(runtime.memory.domain, request.text)), stages.SCHEMA, stages.NAME
    )
    asked = ask_parsed(exchange, _stage_list, 1)
    if asked.value is None:
        log.stages = {"request": request.text, "status": "failed", "reason": reason, "stages": []}
        return log.finish(TaskStatus.FAILED, f"{reason}; it could not be split: {'; '.join(asked.problems)}")
    children: list[dict[str, Any]] = []
    status = TaskStatus.SUCCEEDED
    for text in asked.value:
        child = run_open_task(runtime, TaskRequest(text, answers=request.answers), new_log, depth + 1)
        log.actions.extend(child.actions)
        log.updates.extend(child.updates)
        children.append({**(child.stages or {"request": text}), "status": child.status.value, "reason": child.reason})
        if not child.succeeded:
            status = child.status
            break
    log.stages = {"request": request.text, "whole": reason, "status": status.value, "stages": children}
    if status is TaskStatus.SUCCEEDED:
        verdict = runtime.env.judge(request, None)
        if verdict is False:
            return log.finish(TaskStatus.FAILED, "every stage ran but the request's goal does not hold")
        return log.finish(TaskStatus.SUCCEEDED)
    return log.finish(status, f"stage {len(children)} did not succeed: {children[-1]['reason']}")
