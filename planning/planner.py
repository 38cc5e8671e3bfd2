"""Classical planners through unified-planning, fed PDDL text.

Expected outcomes (solved, unsolvable, timeout, error) are values; only misuse raises.
"""

from __future__ import annotations

import enum
import time
import warnings
from dataclasses import dataclass

from kg_memory import UP_LOCK, Domain
from kg_memory.errors import L3mpError
from planning._engines import engine_name
from planning.evaluator import GroundAction

DEFAULT_PLANNER = "fast-downward"


class PlanningError(L3mpError):
    """Misuse of the planning package (an unknown planner, a problem that does not parse)."""


class PlanStatus(enum.StrEnum):
    SOLVED = "solved"
    UNSOLVABLE = "unsolvable"
    TIMEOUT = "timeout"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class PlanResult:
    status: PlanStatus
    plan: tuple[GroundAction, ...]
    planner: str
    parse_seconds: float
    plan_seconds: float
    message: str = ""

    @property
    def solved(self) -> bool:
        return self.status is PlanStatus.SOLVED


def solve(domain: Domain, problem_text: str, planner: str = DEFAULT_PLANNER, timeout: float = 60.0) -> PlanResult:
    """Plan for ``problem_text`` (PDDL) in ``domain`` with the named unified-planning engine."""
    from unified_planning.engines import PlanGenerationResultStatus as UpStatus
    from unified_planning.exceptions import UPException
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import OneshotPlanner, get_environment

    started = time.perf_counter()
    with UP_LOCK:  # unified-planning is not thread-safe; Fast Downward itself runs in a subprocess
        get_environment().credits_stream = None
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=DeprecationWarning)  # pyparsing API used by the reader
                problem = PDDLReader().parse_problem_string(domain.pddl, problem_text)
        except Exception as exc:  # the reader raises SyntaxError, UPException and pyparsing errors
            raise PlanningError(f"the problem does not parse: {' '.join(str(exc).split())}") from exc
        parsed = time.perf_counter()
        try:
            engine = OneshotPlanner(name=engine_name(planner))
        except UPException as exc:
            raise PlanningError(f"planner {planner!r} is not available: {exc}") from exc
        try:
            with engine:
                result = engine.solve(problem, timeout=timeout)
        except UPException as exc:  # the engine ran but failed: an outcome, not misuse
            return PlanResult(
                PlanStatus.ERROR,
                (),
                planner,
                parsed - started,
                time.perf_counter() - parsed,
                f"{planner} failed: {' '.join(str(exc).split()) or type(exc).__name__}",
            )
    done = time.perf_counter()
    status = {
        UpStatus.SOLVED_SATISFICING: PlanStatus.SOLVED,
        UpStatus.SOLVED_OPTIMALLY: PlanStatus.SOLVED,
        UpStatus.UNSOLVABLE_PROVEN: PlanStatus.UNSOLVABLE,
        UpStatus.UNSOLVABLE_INCOMPLETELY: PlanStatus.UNSOLVABLE,
        UpStatus.TIMEOUT: PlanStatus.TIMEOUT,
    }.get(result.status, PlanStatus.ERROR)
    plan = tuple(GroundAction.from_up(a) for a in result.plan.actions) if result.plan is not None else ()
    message = "" if status is PlanStatus.SOLVED else f"{planner} returned {result.status.name}"
    return PlanResult(status, plan, planner, parsed - started, done - parsed, message)
