"""Run every benchmark in sequence with its defaults, or one of them with its own options.

Each prints its own tables and writes its results file; a last table lists the targets. The exit
code is 1 only if a benchmark crashed or reported a failure (the evaluator refusing one of its own
applicable actions, say), never because a target was missed.

    python -m experiments [--only stores,evaluator,sim,retrieval,updates,planning,costs,impossible,...]
    python -m experiments NAME [its options]     # one of them, e.g. `updates --steps 20`

``l3mp bench`` is the same front door. Each benchmark module declares its ``BENCHMARK`` (name, entry
point, results file); :data:`BENCHMARKS` lists them in the order they run.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments import (
    cli_startup,
    costs,
    crowded,
    dashboard,
    evaluator,
    impossible,
    lifelong,
    openworld,
    planning,
    realmodel,
    retrieval,
    service,
    sim,
    stores,
    table1,
    updates,
)
from experiments.harness import Benchmark, description, verdict

BENCHMARKS: tuple[Benchmark, ...] = (
    stores.BENCHMARK,
    evaluator.BENCHMARK,
    sim.BENCHMARK,
    retrieval.BENCHMARK,
    updates.BENCHMARK,
    planning.BENCHMARK,
    costs.BENCHMARK,
    service.BENCHMARK,
    cli_startup.BENCHMARK,
    dashboard.BENCHMARK,
    lifelong.BENCHMARK,
    crowded.BENCHMARK,
    openworld.BENCHMARK,
    impossible.BENCHMARK,
    table1.BENCHMARK,
    realmodel.BENCHMARK,
)
BY_NAME = {benchmark.name: benchmark for benchmark in BENCHMARKS}


def run(benchmark: Benchmark, console: Console) -> tuple[str, float, list[tuple[str, dict[str, Any]]]]:
    """Run one benchmark; its status ("ok", "failed", "crashed"), wall seconds and targets."""
    console.rule(f"[bold]experiments {benchmark.name}")
    start = time.perf_counter()
    try:
        code = benchmark.main([f"--out={benchmark.results}"])
    except SystemExit as exc:  # a benchmark's own refusal to run (bad setup)
        code = exc.code if isinstance(exc.code, int) else 1
        console.print(f"[red]{benchmark.name} exited: {exc.code}")
    except Exception:
        console.print_exception()
        return "crashed", time.perf_counter() - start, []
    seconds = time.perf_counter() - start
    if code != 0:
        return "failed", seconds, []
    return "ok", seconds, benchmark.targets(json.loads(benchmark.results.read_text(encoding="utf-8")))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(argv or ())
    if args and args[0] in BY_NAME:  # one benchmark with its own options
        return BY_NAME[args[0]].main(args[1:])
    parser = argparse.ArgumentParser(prog="python -m experiments", description=description(__doc__))
    parser.add_argument("--only", default=",".join(BY_NAME), help="comma-separated: " + ", ".join(BY_NAME))
    names = [n.strip() for n in parser.parse_args(args).only.split(",") if n.strip()]
    if unknown := [n for n in names if n not in BY_NAME]:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}: use {', '.join(BY_NAME)}")
    return run_all([BY_NAME[n] for n in names])


def run_all(benchmarks: Sequence[Benchmark]) -> int:
    console = Console()
    table = Table(title="benchmarks")
    for column in ("benchmark", "status", "wall s", "measure", "measured", "target"):
        table.add_column(column, justify="right" if column in ("wall s", "measured") else "left")
    statuses = []
    for benchmark in benchmarks:
        status, seconds, found = run(benchmark, console)
        statuses.append(status)
        first = (benchmark.name, f"[{'green' if status == 'ok' else 'red'}]{status}", f"{seconds:.1f}")
        for n, (label, target) in enumerate(found or [("", {})]):
            measured = target.get("measured", "")
            cells = (
                label,
                f"{measured:,}" if isinstance(measured, int) else str(measured),
                verdict(target) if target else "",
            )
            table.add_row(*(first if n == 0 else ("", "", "")), *cells)
    console.rule()
    console.print(table)
    return 0 if all(s == "ok" for s in statuses) else 1


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
