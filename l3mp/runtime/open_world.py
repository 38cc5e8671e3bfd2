"""The open world's way to a task's plan, on the shared task loop: ask back, explore, split into stages.

For each task (with ``RuntimeConfig.open_world``), :class:`OpenWorld` is the loop's
:class:`~l3mp.runtime.task_loop.TaskPlanning`:

* the :class:`~l3mp.pipelines.openworld.OpenWorldPlanner` plans, asks or proposes an exploration
  sub-goal;
* ``needs_information``: the questions go back to whoever asked (an environment implementing
  :class:`~l3mp.runtime.environment.Asker`) and the task ends with that status; a follow-up task with
  ``answers`` completes it;
* ``needs_exploration``: the sub-goal's plan is followed (perceiving after each action); the place is
  marked searched and planning resumes: with the item seen, the end goal plans; at most
  ``max_explorations`` sub-goals, each recorded with its outcome;
* ``solved``: the plan goes back to the loop, which follows, judges and replans it like any task's;
* a request in English that does not plan whole (and is not ``impossible``) is split by the model into
  ordered stages, each run through the loop as a task of its own (recursively, to ``max_stage_depth``);
  the tree of attempts is recorded.
"""

from __future__ import annotations

from dataclasses import replace

from kg_memory.unknowns import unplaced
from l3mp.outcomes import PlanOutcome
from l3mp.pipelines.conversation import Exchange, ask_parsed
from l3mp.pipelines.errors import AnswerProblem
from l3mp.pipelines.openworld import OpenWorldPlanner
from l3mp.pipelines.plans import PlanReport
from l3mp.prompts import StagesInput, stages
from l3mp.runtime.environment import Asker, TaskRequest
from l3mp.runtime.records import ExplorationOutcome, ExplorationRecord, PlanRecord, Stage, TaskRecord, TaskStatus
from l3mp.runtime.task_loop import TaskLog, TaskLoop, no_plan


class OpenWorld:
    """The open-world planning of one task (it keeps the places searched), at stage ``depth``."""

    def __init__(self, loop: TaskLoop, depth: int = 0) -> None:
        self.loop = loop
        self.depth = depth
        self.planner = OpenWorldPlanner(loop.memory, loop.model, loop.config.plan)
        self.explored: set[str] = set()

    def next_plan(self, request: TaskRequest, log: TaskLog) -> PlanReport | TaskRecord:
        budget = self.loop.config.max_explorations
        while True:
            report = self.planner.plan(
                request.text, goal=log.goal, answers=dict(request.answers), explored=self.explored
            )
            log.plans.append(PlanRecord.of(report))
            if report.status is PlanOutcome.NEEDS_INFORMATION:
                log.questions = report.questions
                if isinstance(self.loop.env, Asker):
                    self.loop.env.ask(request, report.questions)
                return log.finish(TaskStatus.NEEDS_INFORMATION, "; ".join(report.issues))
            if report.status is not PlanOutcome.NEEDS_EXPLORATION:
                return report if report.solved else self._unsolved(request, report, log)
            if len(log.exploration) >= budget:
                return log.finish(TaskStatus.FAILED, f"exploration budget of {budget} used up")
            log.goal = report.goal  # the end goal stays; only the sub-goal changes
            log.exploration.append(self._explore(report, log))

    def _explore(self, report: PlanReport, log: TaskLog) -> ExplorationRecord:
        """Follow the sub-goal's plan; the record of the sub-goal with its outcome."""
        chosen = report.exploration[-1]
        assert chosen.subgoal is not None  # a sub-goal that planned has its goal
        self.explored.add(chosen.place)
        before = len(log.actions)
        replan = self.loop.follow(chosen.subgoal, report.plan, log)
        memory = self.loop.memory
        state = memory.state()
        if chosen.item not in {e.name for e in unplaced(memory.domain, state.entities, state.facts)}:
            outcome = ExplorationOutcome.FOUND
        else:
            outcome = ExplorationOutcome.INTERRUPTED if replan is not None else ExplorationOutcome.NOT_THERE
        return ExplorationRecord(step=chosen, outcome=outcome, actions=len(log.actions) - before)

    def _unsolved(self, request: TaskRequest, report: PlanReport, log: TaskLog) -> TaskRecord:
        reason = no_plan(report)
        if report.status is PlanOutcome.IMPOSSIBLE or request.goal is not None or self.loop.model is None:
            return log.finish(TaskStatus.FAILED, reason)
        if self.depth >= self.loop.config.max_stage_depth:
            return log.finish(TaskStatus.FAILED, f"{reason}; stage depth {self.depth} reached")
        return self._run_stages(request, log, reason)

    def _run_stages(self, request: TaskRequest, log: TaskLog, reason: str) -> TaskRecord:
        model, memory = self.loop.model, self.loop.memory
        assert model is not None
        exchange = Exchange(
            model=model,
            messages=stages.render(StagesInput(memory.domain, request.text)),
            schema=stages.SCHEMA,
            name=stages.NAME,
        )
        asked = ask_parsed(exchange, _stage_list, 1)
        if asked.value is None:
            log.stages = Stage(request=request.text, status=TaskStatus.FAILED, reason=reason, stages=())
            return log.finish(TaskStatus.FAILED, f"{reason}; it could not be split: {'; '.join(asked.problems)}")
        children: list[Stage] = []
        status = TaskStatus.SUCCEEDED
        for text in asked.value:
            child = self.loop.run(TaskRequest(text, answers=request.answers), OpenWorld(self.loop, self.depth + 1))
            log.actions.extend(child.actions)
            log.updates.extend(child.updates)
            split = child.stages or Stage(request=text, status=child.status)
            children.append(replace(split, status=child.status, reason=child.reason))
            if not child.succeeded:
                status = child.status
                break
        log.stages = Stage(request=request.text, whole=reason, status=status, stages=tuple(children))
        if status is TaskStatus.SUCCEEDED:
            if self.loop.env.judge(request, None) is False:
                return log.finish(TaskStatus.FAILED, "every stage ran but the request's goal does not hold")
            return log.finish(TaskStatus.SUCCEEDED)
        return log.finish(status, f"stage {len(children)} did not succeed: {children[-1].reason}")


def _stage_list(data: object) -> list[str]:
    found = data.get("stages") if isinstance(data, dict) else None
    if not isinstance(found, list) or not all(isinstance(s, str) and s.strip() for s in found) or len(found) < 2:
        raise AnswerProblem(['answer {"stages": [...]} with two or more requests, in order'])
    return list(found)
