"""Fast Downward on PDDL text, without unified-planning in between.

Our problems are PDDL text already. Through unified-planning each is parsed into objects (0.13-0.43 s
at paper scale, measured) only to be written back to PDDL for Fast Downward; here the text goes to
the planner binary shipped in up-fast-downward's wheel as it is. The exit codes are Fast Downward's
(https://www.fast-downward.org/ExitCodes).
"""

from __future__ import annotations

import importlib.resources
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from planning.evaluator import GroundAction

# What each planner name runs here (the configuration unified-planning's engine uses). The optimal
# configuration stays with unified-planning, which names the features A* with LM-cut refuses.
CONFIGS: dict[str, list[str]] = {"fast-downward": ["--alias", "lama-first"]}
_STEP = re.compile(r"^\s*\(([^()]*)\)\s*$")


class FastDownwardOutcome:
    """The planner's exit code, its plan (if any) and the seconds it took; ``status`` in our words."""

    def __init__(self, code: int, plan: tuple[GroundAction, ...], seconds: float, log: str) -> None:
        self.code = code
        self.plan = plan
        self.seconds = seconds
        self.log = log

    @property
    def status(self) -> str:
        if self.code == 0 or (self.code in (1, 2, 3) and self.plan):
            return "solved"  # an empty plan: the goal holds already
        if self.code in (10, 11, 12, 13):
            return "unsolvable"
        if self.code in (21, 23, -9):
            return "timeout"
        return "error"


def _driver() -> Path:
    return Path(str(importlib.resources.files("up_fast_downward").joinpath("downward/fast-downward.py")))


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


def run(planner: str, domain_text: str, problem_text: str, timeout: float) -> FastDownwardOutcome:
    """Plan with Fast Downward (``planner`` is one of :data:`CONFIGS`) within ``timeout`` seconds."""
    with tempfile.TemporaryDirectory(prefix="l3mp-fd-") as folder:
        work = Path(folder)
        domain, problem, plan = work / "domain.pddl", work / "problem.pddl", work / "plan"
        domain.write_text(domain_text, encoding="utf-8")
        problem.write_text(problem_text, encoding="utf-8")
        command = [
            sys.executable,
            str(_driver()),
            *CONFIGS[planner],
            "--plan-file",
            str(plan),
            "--sas-file",
            str(work / "output.sas"),  # private: plans made at once must not share the file
            str(domain),
            str(problem),
        ]
        started = time.perf_counter()
        try:
            done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return FastDownwardOutcome(23, (), time.perf_counter() - started, "time limit reached")
        seconds = time.perf_counter() - started
        return FastDownwardOutcome(done.returncode, _read_plan(plan), seconds, (done.stdout + done.stderr)[-2000:])
