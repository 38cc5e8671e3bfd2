"""Classical planners through unified-planning, fed PDDL text, chosen by name.

Names: ``fast-downward`` (lama-first, the default), ``fast-downward-opt`` (A* with LM-cut),
``lapkt`` (SIW+ then BFS(f), the paper's), and any other one-shot planner unified-planning
has installed (``pyperplan`` if up-pyperplan is there); :func:`available_planners` lists them.

Expected outcomes (solved, unsolvable, timeout, error) are values; only misuse raises
:class:`PlanningError`: an unknown planner, one that cannot run here, a problem that does
not parse.
"""

from __future__ import annotations

import enum
import re
import time
import warnings
from dataclasses import dataclass
from typing import Any

from kg_memory import UP_LOCK, Domain
from planning import _fd_text
from planning._engines import engine_name, planner_names, unavailable
from planning.errors import PlanningError
from planning.evaluator import GroundAction
from planning.shared import active_memo, solve_key

DEFAULT_PLANNER = "fast-downward"


class PlanStatus(enum.StrEnum):
    SOLVED = "solved"
    UNSOLVABLE = "unsolvable"
    TIMEOUT = "timeout"
    ERROR = "error"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanResult:
    """One planner call. ``parse_seconds`` is reading the PDDL into a problem; ``plan_seconds``
    is the engine (writing its input files, the planner's process, reading the plan back).

    ``cost`` is set when solved in a domain without action costs: the plan's length. With action
    costs the planner works in scaled integer units; the plan's real cost is our evaluator's
    (``ActionEvaluator.plan_cost``), which the tiers report. ``optimal`` is ``True`` only when the
    planner proved it (A* with LM-cut finished). ``message`` says why a call was not solved, or,
    for a plan that is not proven optimal when that was asked for, why not (the deadline).
    """

    status: PlanStatus
    plan: tuple[GroundAction, ...]
    planner: str
    parse_seconds: float
    plan_seconds: float
    message: str = ""
    cost: float | None = None
    optimal: bool = False

    @property
    def solved(self) -> bool:
        return self.status is PlanStatus.SOLVED


OPTIMAL_PLANNER = "fast-downward-opt"
ANYTIME_PLANNER = "fast-downward-anytime"
COST_PLANNERS = tuple(_fd_text.CONFIGS)


def available_planners() -> tuple[str, ...]:
    """The planner names :func:`solve` accepts on this machine, ours first."""
    with UP_LOCK:
        names = planner_names()
    return (*names[:2], ANYTIME_PLANNER, *names[2:])


def check_readable(domain: Domain, problem_text: str, timeout: float = 120.0) -> None:
    """Raise :class:`PlanningError` with the translator's own words if Fast Downward cannot read
    ``domain`` and ``problem_text`` (what an import checks before it installs anything)."""
    outcome = _fd_text.run(DEFAULT_PLANNER, domain.planner_pddl, problem_text, timeout, translate_only=True)
    if outcome.code != 0:
        raise PlanningError(f"Fast Downward cannot read this task: {outcome.errors() or outcome.status}")


def solve(
    domain: Domain, problem_text: str, planner: str = DEFAULT_PLANNER, timeout: float = 60.0, *, via: str = "text"
) -> PlanResult:
    """Plan for ``problem_text`` (PDDL) in ``domain`` with the named planner.

    Fast Downward (lama-first) gets the PDDL text as it is (``via="text"``, the default): going through
    unified-planning (``via="up"``) parses it into objects and writes it back, which took several
    times the planner's own time on our problems (see ``experiments.planning``). Other planners
    always go through unified-planning.

    ``timeout`` (seconds) bounds the whole call: the engine gets what parsing left of it, and
    a planner still running then is killed (status ``timeout``). Writing the engine's input
    files cannot be interrupted, so a huge problem can overrun the limit by that much.

    Inside :func:`planning.shared.shared_solves` an identical call (planner, route, domain, problem
    text) is answered by the first one's result when that was solved or unsolvable.
    """
    if via not in ("text", "up"):
        raise PlanningError(f"unknown route {via!r}: use 'text' or 'up'")
    memo = active_memo()
    if memo is None or planner in _fd_text.ANYTIME:
        return _solve(domain, problem_text, planner, timeout, via)
    key = solve_key(planner, via, (domain.pddl, domain.planner_pddl), problem_text)
    return memo.answer(key, lambda: _solve(domain, problem_text, planner, timeout, via))


def _solve(domain: Domain, problem_text: str, planner: str, timeout: float, via: str) -> PlanResult:
    if domain.costs and (via == "up" or planner not in _fd_text.CONFIGS):
        # unified-planning reads PDDL costs as reals, which its engines refuse; LAPKT has no costs
        raise PlanningError(
            f"planner {planner!r} cannot plan with action costs (domain {domain.name} has them); "
            f"use one of {', '.join(COST_PLANNERS)}"
        )
    if via == "text" and planner in _fd_text.CONFIGS:
        return _solve_text(domain, problem_text, planner, timeout)
    started = time.perf_counter()
    with UP_LOCK:  # unified-planning is not thread-safe; the planners themselves run in subprocesses
        _check_planner(planner)
        problem = _parse(domain, problem_text)
        parsed = time.perf_counter()
        left = timeout - (parsed - started)
        if left <= 0:
            message = f"reading problem {problem.name} took the whole {timeout:g} s"
            return PlanResult(
                status=PlanStatus.TIMEOUT,
                plan=(),
                planner=planner,
                parse_seconds=parsed - started,
                plan_seconds=0.0,
                message=message,
            )
        status, plan, cost, message = _run(planner, problem, left)
    return PlanResult(
        status=status,
        plan=plan,
        planner=planner,
        parse_seconds=parsed - started,
        plan_seconds=time.perf_counter() - parsed,
        message=message,
        cost=cost,
    )


_FD_STATUS = {"solved": PlanStatus.SOLVED, "unsolvable": PlanStatus.UNSOLVABLE, "timeout": PlanStatus.TIMEOUT}
_PROBLEM_NAME = re.compile(r"\(\s*problem\s+([^\s()]+)", re.IGNORECASE)
_FD_INPUT_ERRORS = (30, 33)  # the translator could not read the task: the problem is malformed


def _solve_text(domain: Domain, problem_text: str, planner: str, timeout: float) -> PlanResult:
    outcome = _fd_text.run(planner, domain.planner_pddl or domain.pddl, problem_text, timeout)
    detail = outcome.errors() or f"exit code {outcome.code}"
    if outcome.code in _FD_INPUT_ERRORS:
        raise PlanningError(f"the problem does not parse: {detail}")
    status = _FD_STATUS.get(outcome.status, PlanStatus.ERROR)
    if status is PlanStatus.SOLVED:
        length = None if domain.costs else float(len(outcome.plan))
        optimal = planner in _fd_text.OPTIMAL and outcome.code == 0
        note = ""
        if outcome.code == 23:  # the deadline stopped an anytime search: this is its best plan so far
            note = f"the best of {outcome.plans} plans found before the {timeout:.3g} s deadline; not proven optimal"
        return PlanResult(
            status=status,
            plan=outcome.plan,
            planner=planner,
            parse_seconds=0.0,
            plan_seconds=outcome.seconds,
            message=note,
            cost=length,
            optimal=optimal,
        )
    name = match.group(1) if (match := _PROBLEM_NAME.search(problem_text)) else "?"
    message = {
        PlanStatus.UNSOLVABLE: f"{planner} found no plan for {name}",
        PlanStatus.TIMEOUT: f"{planner} ran out of its {timeout:.3g} s on problem {name}",
    }.get(status, f"{planner} failed on problem {name}: {detail}")
    return PlanResult(
        status=status, plan=(), planner=planner, parse_seconds=0.0, plan_seconds=outcome.seconds, message=message
    )


def _check_planner(planner: str) -> None:
    names = planner_names()
    if planner in names:
        return
    reason = unavailable(planner)
    if reason is not None:
        raise PlanningError(f"planner {planner!r} cannot run here: {reason}")
    raise PlanningError(f"unknown planner {planner!r}; available: {', '.join(names)}")


def _parse(domain: Domain, problem_text: str) -> Any:
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import get_environment

    get_environment().credits_stream = None
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=DeprecationWarning)  # pyparsing API used by the reader
            return PDDLReader().parse_problem_string(domain.pddl, problem_text)
    except Exception as exc:  # the reader raises SyntaxError, UPException and pyparsing errors
        raise PlanningError(f"the problem does not parse: {_one_line(exc)}") from exc


_Outcome = tuple[PlanStatus, tuple[GroundAction, ...], float | None, str]


def _run(planner: str, problem: Any, timeout: float) -> _Outcome:
    from unified_planning.engines import PlanGenerationResultStatus as Up
    from unified_planning.exceptions import UPException
    from unified_planning.shortcuts import OneshotPlanner

    try:
        engine = OneshotPlanner(name=engine_name(planner))
    except UPException as exc:
        raise PlanningError(f"planner {planner!r} is not available: {_one_line(exc)}") from exc
    with engine:
        if not engine.supports(problem.kind):
            refused = sorted(set(problem.kind.features) - set(engine.supported_kind().features))
            detail = ", ".join(f.lower() for f in refused) or "its kind"
            return PlanStatus.ERROR, (), None, f"{planner} does not support problem {problem.name}: {detail}"
        try:
            result = engine.solve(problem, timeout=timeout)
        except Exception as exc:  # whatever the engine raises is its failure on this problem: an outcome
            return PlanStatus.ERROR, (), None, f"{planner} failed on problem {problem.name}: {_one_line(exc)}"
    if result.status in (Up.SOLVED_SATISFICING, Up.SOLVED_OPTIMALLY):
        plan = tuple(GroundAction.from_up(a) for a in result.plan.actions)
        return PlanStatus.SOLVED, plan, float(len(plan)), ""
    if result.status in (Up.UNSOLVABLE_PROVEN, Up.UNSOLVABLE_INCOMPLETELY):
        how = "proved problem {} unsolvable" if result.status is Up.UNSOLVABLE_PROVEN else "found no plan for {}"
        return PlanStatus.UNSOLVABLE, (), None, f"{planner} {how.format(problem.name)}"
    if result.status is Up.TIMEOUT:
        return PlanStatus.TIMEOUT, (), None, f"{planner} ran out of its {timeout:.3g} s on problem {problem.name}"
    detail = _last_error(result.log_messages)
    message = f"{planner} failed on problem {problem.name} ({result.status.name.lower()})"
    return PlanStatus.ERROR, (), None, f"{message}: {detail}" if detail else message


def _last_error(logs: Any) -> str:
    """The last line the planner wrote to stderr (or stdout), which usually names the failure."""
    for log in sorted(logs or (), key=lambda m: m.level.name != "ERROR"):
        lines: list[str] = [line.strip() for line in str(log.message).splitlines() if line.strip()]
        if lines:
            return lines[-1][:300]
    return ""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
