"""A plan request's deadline, kept while a goal is evaluated against the memory before any planner runs.

Within :data:`planning.goal_checker.MAX_GOAL_BINDINGS` a goal is cheap to decide on a small home, but on
a large memory its bindings still take seconds; a request's deadline bounds the whole request, so the
evaluation counts the bindings it tries and reads the clock once every :data:`CLOCK_EVERY` of them (a
clock read per binding would cost more than most bindings do).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from planning.errors import PlanningError

T = TypeVar("T")

CLOCK_EVERY = 1024  # bindings tried between two reads of the clock


class EvaluationDeadlinePassed(PlanningError):
    """A goal's evaluation reached its request's deadline (a ``time.monotonic()`` instant) before it ended."""

    def __init__(self, deadline: float, tried: int) -> None:
        self.deadline = deadline
        self.tried = tried
        super().__init__(f"the deadline passed while checking the goal against the memory, after {tried:,} bindings")


class BindingWatch:
    """Counts the bindings an evaluation tries and raises :class:`EvaluationDeadlinePassed` once the
    clock has reached ``deadline``; the clock is read at the first binding and then every ``every``."""

    def __init__(
        self, deadline: float, *, clock: Callable[[], float] = time.monotonic, every: int = CLOCK_EVERY
    ) -> None:
        if every < 1:
            raise PlanningError(f"a binding watch reads the clock every 1 or more bindings, not {every}")
        self.deadline = deadline
        self.tried = 0
        self._clock = clock
        self._every = every
        self._next_read = 0  # the count at which the clock is read next: the first binding reads it

    def counted(self, bindings: Iterable[T]) -> Iterator[T]:
        """``bindings`` as they are, each counted as tried before it is handed on."""
        for binding in bindings:
            if self.tried >= self._next_read:
                self._read_clock()
            self.tried += 1
            yield binding

    def _read_clock(self) -> None:
        self._next_read = self.tried + self._every
        if self._clock() >= self.deadline:
            raise EvaluationDeadlinePassed(self.deadline, self.tried)


def watch_until(deadline: float | None) -> BindingWatch | None:
    """A watch for ``deadline``; ``None`` (nothing to watch) without one."""
    return None if deadline is None else BindingWatch(deadline)


def counted(bindings: Iterable[T], watch: BindingWatch | None) -> Iterable[T]:
    """``bindings`` counted by ``watch``, or untouched (at no cost per binding) without one."""
    return bindings if watch is None else watch.counted(bindings)
