"""Fast Downward on PDDL text, without unified-planning in between.

Our problems are PDDL text already. Through unified-planning each is parsed into objects (a large
share of the planner's time at paper scale) only to be written back to PDDL for Fast Downward; here the text goes to
the planner binary shipped in up-fast-downward's wheel as it is. The exit codes are Fast Downward's
(https://www.fast-downward.org/ExitCodes).
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kg_memory import scaled_cost
from planning.evaluator import GroundAction

# What each planner name runs here. lama-first is what unified-planning's engine runs; the optimal
# one is A* with LM-cut (admissible: a plan it returns is optimal); the anytime one is LAMA's
# iterated search, which writes plan.1, plan.2, ... each cheaper than the last until time runs out.
CONFIGS: dict[str, list[str]] = {
    "fast-downward": ["--alias", "lama-first"],
    "fast-downward-opt": ["--search-options", "--search", "astar(lmcut())"],
    "fast-downward-anytime": ["--alias", "lama"],
}
OPTIMAL = frozenset({"fast-downward-opt"})
# LM-cut supports neither conditional effects (the household's wash and run_washer) nor axioms (what
# the translator makes of quantified preconditions): Fast Downward then exits with SEARCH_UNSUPPORTED
# after translating, and the optimal search runs again on the same translated task, in the time that
# is left, with h^max (admissible with conditional effects, but not with axioms) or, if the task has
# axioms, blind search (admissible with both; slow).
UNSUPPORTED = 34
ANYTIME = frozenset({"fast-downward-anytime"})
_STEP = re.compile(r"^\s*\(([^()]*)\)\s*$")
_VALUE = re.compile(r"\(=\s*(\([^()]*\))\s*([-+0-9.eE]+)\s*\)")
# Lines of Fast Downward's log that are progress, not the reason for a failure.
_NOISE = re.compile(
    r"^(INFO|\[t=|Parsing|Normalizing|Instantiating|Computing|Translating|Building|Processing"
    r"|Detecting|Reordering|Writing|Done!|Generating|Simplifying|Finding|Checking|Removing|Translator"
    r"|translate exit code|search exit code|Driver aborting|Remove intermediate|\s|->|Peak memory|Search time"
    r"|Total time|Planner time)"
)


class FastDownwardOutcome:
    """The planner's exit code, its plan (if any) and the seconds it took; ``status`` in our words."""

    def __init__(self, code: int, plan: tuple[GroundAction, ...], seconds: float, log: str, plans: int = 0) -> None:
        self.code = code
        self.plan = plan
        self.seconds = seconds
        self.log = log
        self.plans = plans  # how many improving plans an anytime search wrote

    def errors(self) -> str:
        """The planner's own words for a failure (the translator's message, say), not its progress."""
        lines = [line.strip() for line in self.log.splitlines() if line.strip() and not _NOISE.match(line)]
        return " ".join(lines[-6:])[:600]

    @property
    def status(self) -> str:
        if self.code == 0 or (self.code in (1, 2, 3, 23) and self.plan):
            return "solved"  # an empty plan: the goal holds already
        if self.code in (10, 11, 12, 13):
            return "unsolvable"
        if self.code in (21, 23, -9, -24, 232):  # -24/232: the translator hit its CPU limit (SIGXCPU)
            return "timeout"
        return "error"


def _driver() -> Path:
    return Path(str(importlib.resources.files("up_fast_downward").joinpath("downward/fast-downward.py")))


def _latest_plan(plan: Path) -> tuple[tuple[GroundAction, ...], int]:
    """The plan file, or an anytime search's last (cheapest) ``plan.N``, and how many it wrote."""
    numbered = sorted(
        plan.parent.glob(plan.name + ".*"), key=lambda p: int(p.suffix[1:]) if p.suffix[1:].isdigit() else 0
    )
    numbered = [p for p in numbered if p.suffix[1:].isdigit()]
    if numbered:
        return _read_plan(numbered[-1]), len(numbered)
    return _read_plan(plan), int(plan.exists())


def _driver_options(planner: str) -> list[str]:
    config = CONFIGS[planner]
    return config[: config.index("--search-options")] if "--search-options" in config else config


def _search_options(planner: str) -> list[str]:
    """Options for the search component, which the driver takes after the files."""
    config = CONFIGS[planner]
    return config[config.index("--search-options") + 1 :] if "--search-options" in config else []


def scale_costs(problem_text: str) -> str:
    """Numeric values in ``:init`` in the planners' integer cost units (see COST_SCALE)."""
    return _VALUE.sub(lambda m: f"(= {m.group(1)} {scaled_cost(float(m.group(2)))})", problem_text)


def _read_plan(path: Path) -> tuple[GroundAction, ...]:
    if not path.exists():
        return ()
    steps = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _STEP.match(line)
        if match:
            name, *args = match.group(1).lower().split()
            steps.append(GroundAction(name, tuple(args)))
    return tuple(steps)


def run(
    planner: str, domain_text: str, problem_text: str, timeout: float, *, translate_only: bool = False
) -> FastDownwardOutcome:
    """Plan with Fast Downward (``planner`` is one of :data:`CONFIGS`) within ``timeout`` seconds.

    ``domain_text`` is the domain in the planners' spelling (``Domain.planner_pddl``); the problem's
    costs are scaled here to match. ``translate_only`` runs the translator alone: whether the
    planner can read the task at all. The driver's own time limit stops an anytime search and
    keeps its plans; the subprocess timeout only backs it up.
    """
    with tempfile.TemporaryDirectory(prefix="l3mp-fd-") as folder:
        work = Path(folder)
        domain, problem, plan = work / "domain.pddl", work / "problem.pddl", work / "plan"
        domain.write_text(domain_text, encoding="utf-8")
        problem.write_text(scale_costs(problem_text), encoding="utf-8")
        limit = max(1, int(timeout))
        command = [
            sys.executable,
            str(_driver()),
            *(["--translate"] if translate_only else ["--overall-time-limit", f"{limit}s"]),
            *([] if translate_only else _driver_options(planner)),
            "--plan-file",
            str(plan),
            "--sas-file",
            str(work / "output.sas"),  # private: plans made at once must not share the file
            str(domain),
            str(problem),
            *([] if translate_only else _search_options(planner)),
        ]
        started = time.perf_counter()
        outcome = _drive(command, work, plan, timeout, started)
        sas = work / "output.sas"
        left = timeout - (time.perf_counter() - started)
        if outcome.code == UNSUPPORTED and planner in OPTIMAL and sas.exists() and left >= 1:
            overall = ["--overall-time-limit", f"{max(1, int(left))}s"]
            again = [sys.executable, str(_driver()), *overall, "--plan-file", str(plan), str(sas), *_fallback(sas)]
            outcome = _drive(again, work, plan, left, started)
        return outcome


def _fallback(sas: Path) -> list[str]:
    """An admissible search that reads what LM-cut refused in the translated task ``sas``."""
    with sas.open(encoding="utf-8") as file:
        axioms = any(line.startswith("begin_rule") for line in file)
    return ["--search", "astar(blind())" if axioms else "astar(hmax())"]


def _drive(command: list[str], work: Path, plan: Path, timeout: float, started: float) -> FastDownwardOutcome:
    # the deadline is wall-clock: Fast Downward's own limit counts CPU time (an anytime run overruns
    # it), so the whole process group (driver, translator, search) is killed at it
    process = subprocess.Popen(
        command, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        log, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        found, count = _latest_plan(plan)
        return FastDownwardOutcome(23, found, time.perf_counter() - started, "time limit reached", count)
    found, count = _latest_plan(plan)
    return FastDownwardOutcome(process.returncode, found, time.perf_counter() - started, log[-8000:], count)


def _kill_group(process: subprocess.Popen[str]) -> None:
    """Kill the planner's process group (it was started in a session of its own) and reap it."""
    with contextlib.suppress(ProcessLookupError):  # it ended on its own between the timeout and the kill
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
