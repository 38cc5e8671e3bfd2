"""What the benchmarks share: machine facts, garbage-collector handling, percentiles, the results
file's common fields and its writing, targets judged (a target without a sample is not measured,
never passed) and their PASS/MISS/NOT MEASURED cells for the rich tables."""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from rich.table import Table

T = TypeVar("T")


def machine_info(**extra: Any) -> dict[str, Any]:
    """CPU count, Python and platform, plus what a benchmark adds (library and server versions)."""
    return {"cpu_count": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform(), **extra}


def timed(work: Callable[[], T]) -> tuple[float, T]:
    """Seconds ``work`` took, and what it returned."""
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def profile(work: Callable[[], Any], top: int = 25) -> list[str]:
    """cProfile's top entries by cumulative time, as text lines."""
    profiler = cProfile.Profile()
    profiler.runcall(work)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]


# -- percentiles ----------------------------------------------------------------------------


def quantile(seconds: Sequence[float], q: int) -> float:
    """The q-th percentile (linear interpolation, inclusive); NaN for no values."""
    if len(seconds) < 2:
        return seconds[0] if seconds else float("nan")
    return statistics.quantiles(seconds, n=100, method="inclusive")[q - 1]


def ms(seconds: Sequence[float], q: int) -> float:
    """The q-th percentile in milliseconds, to the microsecond."""
    return round(1000 * quantile(seconds, q), 3)


def us(seconds: Sequence[float], q: int) -> float:
    """The q-th percentile in microseconds, to a tenth."""
    return round(1e6 * quantile(seconds, q), 1)


# -- the garbage collector ------------------------------------------------------------------


class GcClock:
    """Time spent in garbage collection since :meth:`reset`, while registered by :meth:`running`."""

    def __init__(self) -> None:
        self.seconds, self.passes, self.start = 0.0, 0, 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.start = time.perf_counter()
        else:
            self.seconds, self.passes = self.seconds + time.perf_counter() - self.start, self.passes + 1

    def reset(self) -> dict[str, float]:
        """The figures since the last reset (``gc_ms``, ``gc_passes``), then zero."""
        figures = {"gc_ms": round(1000 * self.seconds, 1), "gc_passes": self.passes}
        self.seconds, self.passes = 0.0, 0
        return figures

    @contextlib.contextmanager
    def running(self) -> Iterator[GcClock]:
        gc.callbacks.append(self)
        try:
            yield self
        finally:
            gc.callbacks.remove(self)


# -- results --------------------------------------------------------------------------------


def add_common_arguments(parser: argparse.ArgumentParser, out: str, *, gc_help: str) -> None:
    parser.add_argument("--no-gc-freeze", action="store_true", help=gc_help)
    parser.add_argument("--out", type=Path, default=Path(out), help=f"results file (default {out})")


def header(benchmark: str, args: argparse.Namespace, machine: dict[str, Any]) -> dict[str, Any]:
    """The fields every results file starts with."""
    return {
        "benchmark": benchmark,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "gc_frozen": not getattr(args, "no_gc_freeze", False),
        "parameters": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
    }


def write_results(path: Path, results: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


NOT_MEASURED = "not measured"


def judged(target: str, measured: Any, passed: bool | None, *, samples: int | None = None) -> dict[str, Any]:
    """A target's entry in a results file (``pass`` a plain bool, even from numpy).

    With no sample to judge (``samples`` 0, or ``passed`` None) the target was not measured: ``pass`` is
    null and ``verdict`` says so, since an empty set meets every "all of" and "none of" vacuously.
    """
    if passed is None or samples == 0:
        return {"target": target, "measured": measured, "pass": None, "verdict": NOT_MEASURED}
    return {"target": target, "measured": measured, "pass": bool(passed)}


def judged_all(target: str, hits: int, samples: int) -> dict[str, Any]:
    """A target every sample must meet, measured as ``hits/samples``: not measured without a sample."""
    return judged(target, f"{hits}/{samples}", hits == samples, samples=samples)


def verdict_word(target: dict[str, Any]) -> str:
    """A rich table cell: PASS, MISS or NOT MEASURED."""
    if target.get("pass") is None:
        return "[yellow]NOT MEASURED[/]"
    return "[green]PASS[/]" if target["pass"] else "[red]MISS[/]"


def verdict(target: dict[str, Any]) -> str:
    """A rich table cell: PASS, MISS or NOT MEASURED, and the target."""
    return f"{verdict_word(target)} {target['target']}"


def description(doc: str | None) -> str:
    """The first line of a module docstring, for ``argparse``."""
    return (doc or "").split("\n")[0]


def measures_table(title: str, rows: Iterable[tuple[str, str]]) -> Table:
    """A two-column rich table: what was measured, and the figure (or a :func:`verdict`)."""
    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in rows:
        table.add_row(label, value)
    return table
