"""The ground truth of a simulated home.

Human events change it; tasks are proposed against it and given a reference plan; plans
are executed step by step (an action whose preconditions are false is refused, with the
reason) or judged: a plan succeeds when it is executable and the goal holds afterwards,
whichever plan it is.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from kg_memory import Domain, DomainRegistry, Fact
from kg_memory.formula import Formula
from perception.observation import Observation
from planning.evaluator import ActionEvaluator, GroundAction, StepOutcome
from planning.planner import DEFAULT_PLANNER, PlanResult, solve
from planning.problem import Context, full_context, problem_pddl, pruned_context
from planning.world import World
from sim.errors import SimulationError
from sim.events import Event, EventGenerator
from sim.floorplan import home_facts
from sim.household import Home
from sim.observe import observe
from sim.tasks import Task, TaskGenerator

DOMAIN = "household"


@dataclass(frozen=True, slots=True, kw_only=True)
class Judgement:
    success: bool
    executable: bool
    goal_reached: bool
    steps: int
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PlannedTask:
    task: Task
    reference: PlanResult
    attempts: int  # tasks proposed until one could be planned


class Simulator:
    def __init__(self, home: Home, seed: int = 0, planner: str = DEFAULT_PLANNER, domain: Domain | None = None) -> None:
        self.home = home
        self.domain = domain or DomainRegistry().get(DOMAIN)
        self.world = World(self.domain, home.entities, home_facts(home, self.domain))
        self.evaluator = ActionEvaluator(self.domain)
        streams = random.Random(seed)  # independent streams, so events and tasks do not mirror each other
        self.events = EventGenerator(home, streams.getrandbits(32))
        self.tasks = TaskGenerator(streams.getrandbits(32))
        self.planner = planner

    @property
    def state(self) -> frozenset[Fact]:
        return self.world.facts

    def next_event(self) -> Event:
        """A human event, applied to the true state."""
        event = self.events.next(self.world.facts)
        self.world.apply(event.delta)
        return event

    def new_task(self, attempts: int = 10, timeout: float = 60.0) -> PlannedTask:
        """A task with a validated reference plan; tasks the planner cannot solve are skipped."""
        for attempt in range(1, attempts + 1):
            task = self.tasks.propose(self.world)
            if self.evaluator.evaluate(task.goal, self.world):
                continue  # nothing to do is no task
            reference = self.reference_plan(task, timeout)
            if reference.solved and self.judge(reference.plan, task.goal).success:
                return PlannedTask(task, reference, attempt)
        raise SimulationError(f"no solvable task found in {attempts} attempts")

    def reference_plan(self, task: Task, timeout: float = 60.0) -> PlanResult:
        """Plan from the pruned context first; the full state only if that plan fails here."""
        result = self._plan(pruned_context(self.world, task.goal, anchors=[self.home.robot]), task, timeout)
        if result.solved and self.judge(result.plan, task.goal).success:
            return result
        return self._plan(full_context(self.world), task, timeout)

    def _plan(self, context: Context, task: Task, timeout: float) -> PlanResult:
        problem = problem_pddl(self.domain, context.entities, context.facts, task.goal)
        return solve(self.domain, problem, self.planner, timeout)

    def _object_names(self) -> set[str]:
        return {e.name for e in self.home.entities}

    def judge(self, plan: Sequence[GroundAction], goal: Formula) -> Judgement:
        """Run ``plan`` on a copy of the true state: executable, and the goal holds after it?"""
        outcome = self.evaluator.validate(plan, self.world, goal)
        reached = bool(outcome.goal_reached)
        if not outcome.executable:
            reason = "; ".join(outcome.reasons)
        elif not reached:
            detail = "; ".join(outcome.goal_reasons)
            reason = f"the plan runs but the goal {goal} does not hold afterwards" + (f": {detail}" if detail else "")
        else:
            reason = ""
        return Judgement(
            success=outcome.executable and reached,
            executable=outcome.executable,
            goal_reached=reached,
            steps=len(outcome.steps),
            reason=reason,
        )

    def execute(self, action: GroundAction) -> StepOutcome:
        """One robot action on the true state; refused (state unchanged) if its preconditions are false."""
        return self.evaluator.execute(action, self.world)

    def observe(self) -> Observation:
        entities = {
            name: e
            for name in self._object_names() | set(self.domain.constants)
            if (e := self.world.entity(name)) is not None
        }
        return observe(entities, self.world.facts)
