"""LAPKT's SIW-then-BFS(f), the planner of the L3M+P paper, as a unified-planning engine.

The ``lapkt`` wheel (PyPI) ships the C++ planners and a command-line driver, ``lapkt_cmd.py``,
that grounds with tarski (whose reachability analysis runs clingo) and writes the plan to a
file. unified-planning has no engine for it: this one writes the problem, runs
``lapkt_cmd.py SIW_PLUS_BFS_F_Planner`` in a subprocess (so ``timeout`` kills it) and reads
the plan back.

Three things of lapkt's are worked around here rather than left to fail:
- tarski cannot expand a ``forall`` effect over a type with no objects ("No constants were
  defined!"), which is the common case for a pruned household problem (a run_washer
  action, no clothes in the context), so quantifiers are expanded first with
  unified-planning's own compiler; actions left with no effect at all are dropped, since
  tarski's parser rejects an action without ``:effect`` and such an action never helps;
- the planner segfaults on a negated disjunction, which is what "the cup is empty",
  ``(not (exists (?l - liquid) (filled cup_1 ?l)))``, expands to, so goals and preconditions
  are put in negation normal form;
- tarski leaves a temporary file behind per call, so the planner runs with ``TMPDIR`` set to
  the per-call directory unified-planning deletes afterwards.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from unified_planning.engines import PDDLPlanner
from unified_planning.engines import PlanGenerationResultStatus as Status
from unified_planning.engines.results import LogLevel, LogMessage, PlanGenerationResult
from unified_planning.model import ProblemKind

from planning._subprocess_reaping import ReapedProcess

SEARCH = "SIW_PLUS_BFS_F_Planner"  # SIW+ first; BFS(f), which is complete, if SIW+ fails
SCRIPT = "lapkt_cmd.py"
NO_PLAN = "No solution found"  # what lapkt writes into the plan file when BFS(f) finds none
EXHAUSTED = "BFS(f) search completed"  # printed when BFS(f) ends, with or without a plan
UNREACHABLE = "ReachabilityLPUnsolvable"  # tarski proved the goal relaxed-unreachable while grounding


def lapkt_script() -> Path | None:
    """Where pip put lapkt's command-line driver for this Python, if anywhere."""
    candidate = Path(sysconfig.get_path("scripts")) / SCRIPT
    if candidate.is_file():
        return candidate
    found = shutil.which(SCRIPT)
    return Path(found) if found else None


def missing() -> str | None:
    """Why the lapkt planner cannot run here, or ``None`` if it can."""
    if find_spec("lapkt") is None:
        return "the lapkt package is not installed (pip install lapkt)"
    if find_spec("clingo") is None and shutil.which("gringo") is None:
        return "lapkt grounds with tarski, which needs the clingo package (pip install clingo) or a gringo binary"
    if lapkt_script() is None:
        return f"lapkt is installed but its command-line planner {SCRIPT} is not among this Python's scripts"
    return None


class LapktPlanner(ReapedProcess, PDDLPlanner):  # type: ignore[misc]
    """SIW+ then BFS(f) through ``lapkt_cmd.py``."""

    def __init__(self) -> None:
        PDDLPlanner.__init__(self, needs_requirements=True)

    @property
    def name(self) -> str:
        return "LAPKT SIW+BFS(f)"

    @staticmethod
    def supported_kind() -> Any:
        kind = ProblemKind(version=2)
        kind.set_problem_class("ACTION_BASED")
        kind.set_typing("FLAT_TYPING")
        kind.set_typing("HIERARCHICAL_TYPING")
        kind.set_conditions_kind("NEGATIVE_CONDITIONS")
        kind.set_conditions_kind("DISJUNCTIVE_CONDITIONS")  # tarski splits an action per disjunct
        kind.set_conditions_kind("EXISTENTIAL_CONDITIONS")  # expanded in _solve, like the two below
        kind.set_conditions_kind("UNIVERSAL_CONDITIONS")
        kind.set_effects_kind("FORALL_EFFECTS")
        kind.set_effects_kind("CONDITIONAL_EFFECTS")
        return kind

    @staticmethod
    def supports(problem_kind: Any) -> bool:
        return bool(problem_kind <= LapktPlanner.supported_kind())

    def _solve(self, problem: Any, heuristic: Any = None, timeout: Any = None, output_stream: Any = None) -> Any:
        from unified_planning.engines import CompilationKind
        from unified_planning.engines.compilers import QuantifiersRemover

        compiled = QuantifiersRemover().compile(problem, CompilationKind.QUANTIFIERS_REMOVING)
        task = compiled.problem
        useful = [action for action in task.actions if action.effects]
        task.clear_actions()
        task.add_actions(useful)
        _negation_normal_form(task)
        result = super()._solve(task, heuristic, timeout, output_stream)
        if result.plan is None:
            return result
        plan = result.plan.replace_action_instances(compiled.map_back_action_instance)
        return PlanGenerationResult(result.status, plan, result.engine_name, result.metrics, result.log_messages)

    def _get_cmd(self, domain_filename: str, problem_filename: str, plan_filename: str) -> list[str]:
        folder = Path(plan_filename).parent
        return [
            "env",
            f"TMPDIR={folder}",
            sys.executable,
            str(lapkt_script()),
            SEARCH,
            "--domain",
            domain_filename,
            "--problem",
            problem_filename,
            "--plan_file",
            plan_filename,
            "--log_file",
            str(folder / "lapkt.log"),  # its default, "log", would land in our working directory
        ]

    def _plan_from_file(self, problem: Any, plan_filename: str, get_item_named: Any) -> Any:
        text = Path(plan_filename).read_text(encoding="utf-8")
        if NO_PLAN in text:
            return None  # a comment-only file would otherwise read as the empty plan
        return self._plan_from_str(problem, text, get_item_named)

    def _result_status(self, problem: Any, plan: Any, retval: int, log_messages: Any = None) -> Any:
        if plan is not None and retval == 0:
            return Status.SOLVED_SATISFICING
        logs = "".join(m.message for m in log_messages or ())
        if UNREACHABLE in logs:
            return Status.UNSOLVABLE_PROVEN
        if retval == 0 and EXHAUSTED in logs:
            return Status.UNSOLVABLE_INCOMPLETELY  # BFS(f) searched the whole grounded space
        # e.g. lapkt_cmd.py exits 0 without planning when it cannot ground; a crash leaves no
        # stderr, so the exit is logged where the caller's message looks first
        how = f"was killed by signal {-retval}" if retval < 0 else f"exited with code {retval} and no plan"
        if log_messages is not None:
            log_messages.append(LogMessage(LogLevel.ERROR, f"{SCRIPT} {how}"))
        return Status.INTERNAL_ERROR


def _negation_normal_form(task: Any) -> None:
    from unified_planning.model.walkers import Nnf

    nnf = Nnf(task.environment)
    goals = [nnf.get_nnf_expression(goal) for goal in task.goals]
    task.clear_goals()
    for goal in goals:
        task.add_goal(goal)
    for action in task.actions:
        preconditions = [nnf.get_nnf_expression(p) for p in action.preconditions]
        action.clear_preconditions()
        for precondition in preconditions:
            action.add_precondition(precondition)
