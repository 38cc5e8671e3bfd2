"""Identical planner calls answered once, opt-in for a whole process (``with shared_solves(): ...``).

An experiment that plans the same problem several times (variants whose memories agree, a baseline on
the true state that equals one of them) pays for each call. Inside :func:`shared_solves` the first call
for a (planner, domain, problem text) runs; a second caller of the same key waits for the one in flight
(single flight) and gets its :class:`~planning.planner.PlanResult` as it was, measured seconds included.

Only outcomes the planner's input decides are kept: ``solved`` and ``unsolvable``. A ``timeout`` or an
``error`` can depend on the machine's load, so the next caller runs the planner itself, as it would have
without sharing. An anytime search's plan depends on when its deadline stopped it, so it is never shared.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, TypeVar, cast


class Outcome(Protocol):
    """What the memo needs of a planner call's result (``planning.planner.PlanResult``)."""

    @property
    def status(self) -> Enum: ...

    @property
    def parse_seconds(self) -> float: ...

    @property
    def plan_seconds(self) -> float: ...


R = TypeVar("R", bound=Outcome)

_STORED = frozenset({"solved", "unsolvable"})


@dataclass(kw_only=True)
class SolveMemo:
    """Finished outcomes by key, and an event per key being planned right now."""

    runs: int = 0  # planner calls that ran
    shared: int = 0  # calls answered from another's run
    waits: int = 0  # calls that waited for an identical one in flight
    _done: dict[str, Outcome] = field(default_factory=dict)
    _flying: dict[str, threading.Event] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, key: str, run: Callable[[], R]) -> R:
        """``run()``'s result for ``key``: kept from an earlier call, awaited from one in flight, or run here."""
        asked = time.perf_counter()
        while True:
            with self._lock:
                if (kept := self._done.get(key)) is not None:
                    self.shared += 1
                    _credit(kept.parse_seconds + kept.plan_seconds - (time.perf_counter() - asked))
                    return cast(R, kept)  # a key names one call, so its result is of the type run makes
                waiting = self._flying.get(key)
                if waiting is None:
                    self._flying[key] = threading.Event()
                    self.runs += 1
                    break
                self.waits += 1
            waiting.wait()  # then look again: a kept outcome, or (timeout, error) run it here
        return self._run(key, run)

    def _run(self, key: str, run: Callable[[], R]) -> R:
        result: R | None = None
        try:
            result = run()
            return result
        finally:
            with self._lock:
                if result is not None and result.status.value in _STORED:
                    self._done[key] = result
                self._flying.pop(key).set()


@dataclass(kw_only=True)
class Credit:
    """Seconds a thread's calls were spared by sharing: the first call's measured seconds, less the
    time spent waiting for it. Added back, a pipeline's time is what it would have been alone."""

    seconds: float = 0.0


_CREDITS = threading.local()


@contextmanager
def credited() -> Iterator[Credit]:
    """Count, for this thread until the block ends, the seconds shared calls spared it."""
    credit = _CREDITS.current = Credit()
    try:
        yield credit
    finally:
        _CREDITS.current = None


def _credit(seconds: float) -> None:
    credit: Credit | None = getattr(_CREDITS, "current", None)
    if credit is not None:
        credit.seconds += max(0.0, seconds)


_ACTIVE: SolveMemo | None = None
_ACTIVATING = threading.Lock()


@contextmanager
def shared_solves() -> Iterator[SolveMemo]:
    """Share identical planner calls of every thread of this process until the block ends."""
    global _ACTIVE
    with _ACTIVATING:
        if _ACTIVE is not None:
            raise RuntimeError("shared_solves() is already active in this process; nest no second one")
        memo = _ACTIVE = SolveMemo()
    try:
        yield memo
    finally:
        with _ACTIVATING:
            _ACTIVE = None


def active_memo() -> SolveMemo | None:
    return _ACTIVE


def solve_key(planner: str, via: str, domain_texts: tuple[str, ...], problem_text: str) -> str:
    digest = hashlib.sha256()
    for part in (planner, via, *domain_texts, problem_text):
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()
