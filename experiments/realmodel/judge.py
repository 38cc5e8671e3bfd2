"""What became of a report and of a task request, against the data's exact answer.

A report's outcome, from the best to the worst for a memory: ``exact`` (the delta meant, or a noop
for a report that changes nothing), ``partial`` (every fact written was meant, something meant is
missing), ``rejected`` or ``noop`` (nothing written for a report that meant a change; rejected also
for a "nothing" report the reader refused), ``wrong`` (a fact written that was not meant, or any
write for a report that changes nothing). A goal is ``right`` when its literals are the meant ones
(order-free, ``(and ...)`` opened), ``wrong`` otherwise, ``none`` when no goal came out.
"""

from __future__ import annotations

from collections.abc import Iterable

from kg_memory import Delta, UpdateStatus
from kg_memory.formula import And, Formula
from planning import parse_goal

OUTCOMES: tuple[str, ...] = ("exact", "partial", "wrong", "rejected", "noop")
GOAL_OUTCOMES: tuple[str, ...] = ("right", "wrong", "none")


def report_outcome(*, status: UpdateStatus, written: Delta, expected: Delta) -> str:
    """The outcome of a recorded update whose applied delta is ``written`` (see the module)."""
    if status is UpdateStatus.REJECTED:
        return "rejected"
    if status is UpdateStatus.NOOP or written.is_empty:
        return "exact" if expected.is_empty else "noop"
    wrote = _sided(written)
    meant = _sided(expected)
    if not wrote <= meant:
        return "wrong"
    return "exact" if wrote == meant else "partial"


def _sided(delta: Delta) -> set[tuple[str, str]]:
    return {("-", str(f)) for f in delta.remove} | {("+", str(f)) for f in delta.add}


def literals(goal: str) -> frozenset[str]:
    """A goal's literals, ``(and ...)`` opened at every level, each written canonically."""
    return frozenset(_opened(parse_goal(goal)))


def _opened(formula: Formula) -> Iterable[str]:
    if isinstance(formula, And):
        for part in formula.args:
            yield from _opened(part)
    else:
        yield str(formula)


def goal_outcome(found: Iterable[str] | None, expected: Iterable[str]) -> str:
    """``right``, ``wrong`` or ``none`` for the goal ``found`` (its literals) against ``expected``."""
    if found is None:
        return "none"
    chosen = frozenset(found)
    if not chosen:
        return "none"
    meant = frozenset(lit for text in expected for lit in literals(text))
    return "right" if frozenset(lit for text in chosen for lit in literals(text)) == meant else "wrong"
