"""Run every benchmark in sequence with its defaults: stores, evaluator, sim, retrieval, updates, planning,
service, dashboard.

Each prints its own tables and writes its results file; a last table lists the targets. The exit
code is 1 only if a benchmark crashed or reported a failure (the evaluator refusing one of its own
applicable actions, say), never because a target was missed.

    .venv/bin/python -m experiments [--only stores,evaluator,sim,retrieval,updates,planning,costs,impossible,...]
    .venv/bin/python -m experiments NAME [its options]     # one of them, e.g. `updates --steps 20`

``l3mp bench`` is the same front door.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
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
    retrieval,
    service,
    sim,
    stores,
    table1,
    updates,
)
from experiments._common import description, verdict

BENCHMARKS: dict[str, tuple[Callable[[Sequence[str] | None], int], Path]] = {
    "stores": (stores.main, Path("experiments/results/stores.json")),
    "evaluator": (evaluator.main, Path("experiments/results/evaluator.json")),
    "sim": (sim.main, Path("experiments/results/sim.json")),
    "retrieval": (retrieval.main, Path("experiments/results/retrieval.json")),
    "updates": (updates.main, Path("experiments/results/updates.json")),
    "planning": (planning.main, Path("experiments/results/planning.json")),
    "costs": (costs.main, costs.DEFAULT_OUT),
    "service": (service.main, Path("experiments/results/service.json")),
    "cli": (cli_startup.main, Path("experiments/results/cli.json")),
    "dashboard": (dashboard.main, Path("experiments/results/dashboard.json")),
    "lifelong": (lifelong.main, Path("experiments/results/lifelong.json")),
    "crowded": (crowded.main, Path("experiments/results/crowded.json")),
    "openworld": (openworld.main, Path("experiments/results/openworld.json")),
    "impossible": (impossible.main, Path(impossible.DEFAULT_OUT)),
    "table1": (table1.main, table1.DEFAULT_OUT),
}


LABELS = {
    "apply_changes_per_s": "apply changes/s",
    "neighbourhood_p95_ms": "2-hop p95 ms",
    "evaluator": "10,000 actions, s",
    "sim": "100-step episode, s",
}


def targets(name: str, results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(label, target) pairs from a results file."""
    if name == "stores":
        found = results["stores"].items()
        return [(f"{kind} {LABELS.get(key, key)}", t) for kind, r in found for key, t in r["targets"].items()]
    if name == "lifelong":
        found = results["stores"].items()
        return [(f"{kind} {key}", t) for kind, r in found for key, t in r["targets"].items()]
    if name == "table1":
        return []  # an experiment, not a speed benchmark: its table is the result
    if "targets" in results:
        return [(key, t) for key, t in results["targets"].items()]
    return [(LABELS.get(name, name), results["target"])]


def run(name: str, console: Console) -> tuple[str, float, list[tuple[str, dict[str, Any]]]]:
    """Run one benchmark; its status ("ok", "failed", "crashed"), wall seconds and targets."""
    main, out = BENCHMARKS[name]
    console.rule(f"[bold]experiments.{name}")
    start = time.perf_counter()
    try:
        code = main([f"--out={out}"])
    except SystemExit as exc:  # a benchmark's own refusal to run (bad setup)
        code = exc.code if isinstance(exc.code, int) else 1
        console.print(f"[red]{name} exited: {exc.code}")
    except Exception:
        console.print_exception()
        return "crashed", time.perf_counter() - start, []
    seconds = time.perf_counter() - start
    if code != 0:
        return "failed", seconds, []
    return "ok", seconds, targets(name, json.loads(out.read_text(encoding="utf-8")))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(argv or ())
    if args and args[0] in BENCHMARKS:  # one benchmark with its own options
        return BENCHMARKS[args[0]][0](args[1:])
    parser = argparse.ArgumentParser(prog="python -m experiments", description=description(__doc__))
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="comma-separated: " + ", ".join(BENCHMARKS))
    names = [n.strip() for n in parser.parse_args(args).only.split(",") if n.strip()]
    if unknown := [n for n in names if n not in BENCHMARKS]:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}: use {', '.join(BENCHMARKS)}")
    return run_all(names)


def run_all(names: Sequence[str]) -> int:
    console = Console()
    table = Table(title="benchmarks")
    for column in ("benchmark", "status", "wall s", "measure", "measured", "target"):
        table.add_column(column, justify="right" if column in ("wall s", "measured") else "left")
    statuses = []
    for name in names:
        status, seconds, found = run(name, console)
        statuses.append(status)
        first = (name, f"[{'green' if status == 'ok' else 'red'}]{status}", f"{seconds:.1f}")
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
