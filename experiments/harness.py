"""What every benchmark uses: its record (name, entry point, results file), its command line, machine
facts, timing and the garbage collector, percentiles, the results file's common fields and its writing,
targets judged (a target without a sample is not measured, never passed) and their PASS/MISS/NOT
MEASURED cells for the rich tables, the store it measures and its progress bars."""

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
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kg_memory import DomainRegistry, GraphStore

T = TypeVar("T")
RESULTS = Path("experiments/results")
Targets = Callable[[dict[str, Any]], list[tuple[str, dict[str, Any]]]]


# -- the benchmark --------------------------------------------------------------------------


def listed_targets(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A results file's ``targets`` as (label, target) pairs; none for an experiment without any."""
    return list(results.get("targets", {}).items())


def single_target(label: str) -> Targets:
    """The one ``target`` of a results file, under ``label``."""

    def found(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        return [(label, results["target"])]

    return found


def targets_by_store(labels: Mapping[str, str] | None = None) -> Targets:
    """The targets of a results file that keeps them per store (``stores.KIND.targets``), labelled by store."""
    names = dict(labels or {})

    def found(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        return [
            (f"{kind} {names.get(key, key)}", target)
            for kind, figures in results["stores"].items()
            for key, target in figures["targets"].items()
        ]

    return found


@dataclass(frozen=True, slots=True, kw_only=True)
class Benchmark:
    """One benchmark as ``python -m experiments NAME`` runs it; each benchmark module declares its own."""

    name: str
    results: Path  # the results file it writes unless ``--out`` says otherwise
    main: Callable[[Sequence[str] | None], int]  # its command line; 0 unless it crashed or failed a check
    targets: Targets = listed_targets  # what the summary of all benchmarks lists from its results

    def parser(self, doc: str | None) -> argparse.ArgumentParser:
        """Its command line: the module's docstring as help, and ``--out`` defaulting to :attr:`results`."""
        parser = argparse.ArgumentParser(prog=f"python -m experiments {self.name}", description=description(doc))
        parser.add_argument("--out", type=Path, default=self.results, help=f"results file (default {self.results})")
        return parser


def description(doc: str | None) -> str:
    """The first paragraph of a module docstring, on one line, for ``argparse``."""
    return " ".join((doc or "").split("\n\n")[0].split())


def add_gc_argument(parser: argparse.ArgumentParser, *, help: str) -> None:
    """``--no-gc-freeze``: what the results file's ``gc_frozen`` reports."""
    parser.add_argument("--no-gc-freeze", action="store_true", help=help)


# -- machine facts and timing ---------------------------------------------------------------


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


def parameters(args: argparse.Namespace, *, skip: Iterable[str] = ()) -> dict[str, Any]:
    """The command line's options as a results file records them (paths as text), but ``skip``."""
    left_out = set(skip)
    return {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in left_out}


def header(benchmark: str, args: argparse.Namespace, machine: dict[str, Any]) -> dict[str, Any]:
    """The fields every results file starts with."""
    return {
        "benchmark": benchmark,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "gc_frozen": not getattr(args, "no_gc_freeze", False),
        "parameters": parameters(args),
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


# -- tables ---------------------------------------------------------------------------------


def verdict_word(target: dict[str, Any]) -> str:
    """A rich table cell: PASS, MISS or NOT MEASURED."""
    if target.get("pass") is None:
        return "[yellow]NOT MEASURED[/]"
    return "[green]PASS[/]" if target["pass"] else "[red]MISS[/]"


def verdict(target: dict[str, Any]) -> str:
    """A rich table cell: PASS, MISS or NOT MEASURED, and the target."""
    return f"{verdict_word(target)} {target['target']}"


def measures_table(title: str, rows: Iterable[tuple[str, str]]) -> Table:
    """A two-column rich table: what was measured, and the figure (or a :func:`verdict`)."""
    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in rows:
        table.add_row(label, value)
    return table


def targets_table(title: str, targets: Iterable[dict[str, Any]]) -> Table:
    """One row per target: what it asks, what was measured, and its PASS/MISS/NOT MEASURED."""
    table = Table(title=title)
    for column in ("target", "measured", "verdict"):
        table.add_column(column)
    for target in targets:
        table.add_row(target["target"], str(target["measured"]), verdict_word(target))
    return table


# -- stores and progress --------------------------------------------------------------------


@contextlib.contextmanager
def open_store(kind: str) -> Iterator[GraphStore]:
    """SQLite in a temporary folder, or the Neo4j the settings (``L3MP_NEO4J_*``) point at."""
    if kind == "sqlite":
        from kg_memory.stores import SQLiteStore

        with tempfile.TemporaryDirectory(prefix="l3mp-experiment-") as folder:
            sqlite = SQLiteStore(Path(folder) / "eval.db", DomainRegistry())
            try:
                yield sqlite
            finally:
                sqlite.close()
        return
    if kind != "neo4j":
        raise ValueError(f"unknown store {kind!r}: use sqlite or neo4j")
    from l3mp.settings import Settings
    from l3mp.wiring import open_store as open_configured

    store = open_configured(Settings(store="neo4j"))
    try:
        yield store
    finally:
        store.close()


def _columns() -> tuple[TextColumn, BarColumn, MofNCompleteColumn, TimeElapsedColumn]:
    return TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()


@contextlib.contextmanager
def progress(console: Console, label: str, total: int) -> Iterator[Callable[[], None]]:
    """A transient progress bar; the caller advances it one unit per call."""
    with Progress(*_columns(), console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)


@contextlib.contextmanager
def progress_bars(console: Console, labels: Sequence[str], total: int) -> Iterator[Callable[[str], None]]:
    """One transient bar per label, all of ``total`` units; the caller advances a bar by its label."""
    with Progress(*_columns(), console=console, transient=True) as bar:
        tasks = {label: bar.add_task(label, total=total) for label in labels}
        yield lambda label: bar.advance(tasks[label])
