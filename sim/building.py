"""Multi-floor buildings (a care home, a hospital, an office block) in the ``household`` domain.

``generate_home(HomeSpec.building(50_000, seed))`` builds one (see :mod:`sim._floors` for its rooms and
doors): floors of an elevator lobby, a stairwell and corridors with wards, washrooms, offices, day
rooms, kitchenettes, canteens and sluice rooms off them, every room with ``attrs["floor"]``.

Events and tasks are the household's own. Their reference plans are not: the simulator's pruned
context keeps every room and fixture, about half of a building, and a planner does not finish on that
or on the full state in minutes. :class:`BuildingSimulator` plans each task as the robot's tiered
planner does, on the rooms between the robot and what the task names, widened when that fails, every
plan validated on the full true state, and never on the full state itself. A task no bounded problem
solves in time is skipped like any unsolvable one, and so, without a planner call, is a task whose
focused problem is already larger than :data:`MAX_REFERENCE_OBJECTS`: "switch every light off" or
"bring Ana a glass of water" (any cup in the building will do) in a large building.
"""

from __future__ import annotations

import time

from planning.planner import PlanResult, PlanStatus
from planning.problem import focused_context
from planning.tiers import TieredPlanner
from sim._floors import CROSS_FLOOR_KINDS
from sim.home import ROOMS_PER_FLOOR, BuildingSpec, Home
from sim.simulator import Simulator
from sim.tasks import Task

__all__ = [
    "CROSS_FLOOR_KINDS",
    "MAX_REFERENCE_OBJECTS",
    "ROOMS_PER_FLOOR",
    "BuildingSimulator",
    "BuildingSpec",
    "simulator_for",
]

# Objects in a task's focused problem beyond which no reference is attempted: a goal over every light
# or every cup of a large building pulls thousands in, and Fast Downward then runs for minutes.
MAX_REFERENCE_OBJECTS = 2_000


class BuildingSimulator(Simulator):
    """A :class:`~sim.simulator.Simulator` whose reference plans come from bounded problems."""

    max_objects: int = MAX_REFERENCE_OBJECTS

    def reference_plan(self, task: Task, timeout: float = 60.0) -> PlanResult:
        """The first plan of a focused, then widened, context that runs to the goal on the true state;
        ``timeout`` bounds both tiers together."""
        robot = self.home.robot
        first = focused_context(self.world, task.goal, anchors=[robot])
        objects = len(first.entities)
        if objects > self.max_objects:
            message = f"not planned: the task's focused problem has {objects} objects, over {self.max_objects}"
            return self._unplanned(PlanStatus.ERROR, message)
        planner = TieredPlanner(self.domain, planner=self.planner, timeout=timeout)
        deadline = time.monotonic() + timeout
        tiered = planner.plan(self.world, task.goal, first, anchors=[robot], full_state=False, deadline=deadline)
        accepted = [a.result for a in tiered.attempts if a.accepted]
        if accepted:
            return accepted[0]
        if tiered.attempts:
            return tiered.attempts[-1].result
        return self._unplanned(tiered.status, "")

    def _unplanned(self, status: PlanStatus, message: str) -> PlanResult:
        return PlanResult(
            status=status, plan=(), planner=self.planner, parse_seconds=0.0, plan_seconds=0.0, message=message
        )


def simulator_for(home: Home, seed: int = 0, planner: str | None = None) -> Simulator:
    """The simulator that suits ``home``: bounded reference plans for a building, the usual ones for a home."""
    kind = BuildingSimulator if isinstance(home.spec, BuildingSpec) else Simulator
    return kind(home, seed) if planner is None else kind(home, seed, planner)
