"""Plans checked by unified-planning's validator against the original PDDL files.

This is the external judge: our own evaluator validates plans in the pipeline, and this
one, knowing nothing of memories, says whether a plan solves the problem as its authors
wrote it.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_memory import UP_LOCK
from planning.evaluator import GroundAction
from planning.pddl_io import parse_up_problem

VALIDATOR = "sequential_plan_validator"


@dataclass(frozen=True, slots=True)
class Validation:
    """Whether a plan is valid; if not, ``reason`` says which step or goal failed."""

    valid: bool
    reason: str = ""
    cost: float | None = None  # the metric's value (total-cost) when the problem has one

    def to_json(self) -> dict[str, Any]:
        return {"valid": self.valid, "reason": self.reason, "validator": VALIDATOR, "cost": self.cost}


def validate_plan(
    domain_text: str, problem_text: str, plan: Sequence[GroundAction], source: Path | str = "<problem>"
) -> Validation:
    """Validate ``plan`` on the problem the two texts define.

    A plan naming an unknown action or object, or with the wrong number of arguments, is
    invalid (a planner or model may write anything); only texts that do not parse raise
    (:class:`planning.pddl_io.PddlError`).
    """
    from unified_planning.exceptions import UPException
    from unified_planning.plans import ActionInstance, SequentialPlan
    from unified_planning.shortcuts import PlanValidator, get_environment

    with UP_LOCK:  # unified-planning is not thread-safe
        problem = parse_up_problem(domain_text, problem_text, source)
        actions = {a.name.lower(): a for a in problem.actions}
        objects = {o.name.lower(): o for o in problem.all_objects}
        steps = []
        for index, step in enumerate(plan, start=1):
            where = f"step {index} {step}"
            action = actions.get(step.name)
            if action is None:
                return Validation(False, f"{where}: the domain has no action {step.name!r}")
            if len(step.args) != len(action.parameters):
                count = len(action.parameters)
                return Validation(False, f"{where}: {step.name} takes {count} argument(s), not {len(step.args)}")
            missing = [a for a in step.args if a not in objects]
            if missing:
                return Validation(False, f"{where}: the problem has no object {', '.join(missing)}")
            try:
                steps.append(ActionInstance(action, tuple(objects[a] for a in step.args)))
            except UPException as exc:  # e.g. an argument of the wrong type
                return Validation(False, f"{where}: {' '.join(str(exc).split())}")
        get_environment().credits_stream = None  # no engine banner on stdout
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            # its simulator says the same of the same kind, as a warning
            warnings.filterwarnings(
                "ignore", message="(We cannot establish whether|The Grounder used)", category=UserWarning
            )
            with PlanValidator(name=VALIDATOR) as validator:
                # its declared kind leaves out the real-valued total-cost that PDDL action costs read
                # as, though it evaluates them: without this it warns and cannot be asked
                validator.skip_checks = bool(problem.quality_metrics)
                result = validator.validate(problem, SequentialPlan(steps))
    if result.status.name == "VALID":
        metrics = list((getattr(result, "metric_evaluations", None) or {}).values())
        value = metrics[0] if metrics else None
        cost = getattr(value, "constant_value", lambda: value)()  # an expression, or a plain number
        return Validation(True, cost=float(cost) if cost is not None else None)
    messages = " ".join(m.message for m in result.log_messages or ())
    return Validation(False, messages or (result.reason.name.lower() if result.reason else "invalid"))
