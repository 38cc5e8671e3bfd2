"""What the experiments share beyond the benchmarks' helpers (experiments._common): their stores and progress bars."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kg_memory import DomainRegistry, GraphStore


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


@contextlib.contextmanager
def progress(console: Console, label: str, total: int) -> Iterator[Callable[[], None]]:
    """A transient progress bar; the caller advances it one unit per call."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)


@contextlib.contextmanager
def progress_bars(console: Console, labels: Sequence[str], total: int) -> Iterator[Callable[[str], None]]:
    """One transient bar per label, all of ``total`` units; the caller advances a bar by its label."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        tasks = {label: bar.add_task(label, total=total) for label in labels}
        yield lambda label: bar.advance(tasks[label])
