"""A stand-in for a planner's process that outlasts any deadline.

It runs in the planner's place. Started with ``--stall`` among its arguments (in place of the LAPKT
and unified-planning engines' planner) it blocks at once; in place of Fast Downward's driver it
blocks when the problem file is at least ``L3MP_STALL_BYTES`` bytes, or when an argument contains
``L3MP_STALL_SEARCH`` (a search, such as ``astar``), and otherwise hands the task to the real driver
(``L3MP_REAL_DRIVER``). So a pruned context, or a satisficing search, plans for real while the whole
state, or the optimal search, is sure to meet its deadline, however fast or busy the machine is. A
blocked search writes its pid into ``L3MP_STALL_PIDS`` and waits until it is killed.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path


def problem_bytes(arguments: list[str]) -> int:
    """The size of the problem file the planner was given (the largest .pddl file that is not a domain)."""
    named = [Path(a) for a in arguments if a.endswith(".pddl")]
    problems = [p for p in named if "domain" not in p.name and p.is_file()]
    return max((p.stat().st_size for p in problems), default=0)


def stalls(arguments: list[str]) -> bool:
    search = os.environ.get("L3MP_STALL_SEARCH")
    min_bytes = os.environ.get("L3MP_STALL_BYTES")
    return (
        "--stall" in arguments
        or (min_bytes is not None and problem_bytes(arguments) >= int(min_bytes))
        or (search is not None and any(search in a for a in arguments))
    )


def main() -> None:
    arguments = sys.argv[1:]
    if stalls(arguments):
        Path(os.environ["L3MP_STALL_PIDS"], str(os.getpid())).touch()
        while True:
            signal.pause()
    driver = os.environ["L3MP_REAL_DRIVER"]
    os.execv(sys.executable, [sys.executable, driver, *arguments])


if __name__ == "__main__":
    main()
