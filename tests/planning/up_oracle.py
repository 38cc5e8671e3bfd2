"""unified-planning's sequential plan validator as an independent oracle for our evaluator.

One problem is parsed per random world (parsing is the slow part); each plan to judge only
swaps the problem's goal, built from expressions rather than re-parsed text.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from random_worlds import RandomWorld

from kg_memory import Fact
from planning import GroundAction


@dataclass(frozen=True, slots=True)
class UpVerdict:
    valid: bool
    failed_at: int | None  # the first step that does not apply; None if all apply


class UpOracle:
    """Validates plans for one random world with ``sequential_plan_validator``."""

    def __init__(self, world: RandomWorld) -> None:
        from unified_planning.engines import ValidationResultStatus
        from unified_planning.io import PDDLReader
        from unified_planning.shortcuts import PlanValidator, get_environment

        get_environment().credits_stream = None
        with warnings.catch_warnings():
            # unified-planning 1.3 still calls pyparsing's camelCase API, deprecated in 3.3
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            self.problem: Any = PDDLReader().parse_problem_string(world.domain.pddl, world.problem_pddl())
        self.validator: Any = PlanValidator(name="sequential_plan_validator")
        self._valid = ValidationResultStatus.VALID

    def verdict(self, plan: Sequence[GroundAction], goal: Iterable[tuple[Fact, bool]] = ()) -> UpVerdict:
        """Validate ``plan`` against the goal "every (fact, positive) pair holds as given".

        A step that unified-planning refuses to build (an argument of the wrong type) counts
        as the failing step, unless an earlier one already fails.
        """
        instances, refused = self._instances(plan)
        self._set_goal(goal if refused is None else ())
        result = self.validator.validate(self.problem, self._plan(instances))
        if result.status == self._valid:
            return UpVerdict(refused is None, refused)
        failed = [i for i, a in enumerate(instances) if a is result.inapplicable_action]
        return UpVerdict(False, failed[0] if failed else refused)

    def _instances(self, plan: Sequence[GroundAction]) -> tuple[list[Any], int | None]:
        from unified_planning.exceptions import UPTypeError
        from unified_planning.plans import ActionInstance

        instances = []
        for index, step in enumerate(plan):
            try:
                objects = [self.problem.object(a) for a in step.args]
                instances.append(ActionInstance(self.problem.action(step.name), objects))
            except UPTypeError:
                return instances, index
        return instances, None

    def _set_goal(self, goal: Iterable[tuple[Fact, bool]]) -> None:
        manager = self.problem.environment.expression_manager
        self.problem.clear_goals()
        for fact, positive in goal:
            atom = self.problem.fluent(fact.predicate)(*(self.problem.object(a) for a in fact.args))
            self.problem.add_goal(atom if positive else manager.Not(atom))

    @staticmethod
    def _plan(instances: list[Any]) -> Any:
        from unified_planning.plans import SequentialPlan

        return SequentialPlan(instances)

    def instance(self, step: GroundAction) -> Any:
        """``step`` as unified-planning's ``ActionInstance`` (to test :meth:`GroundAction.from_up`)."""
        return self._instances([step])[0][0]
