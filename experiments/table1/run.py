"""The Table I experiment's run: its options, every seed in worker processes, and what it writes.

Writes ``table1.json`` (every number that depends on the simulator and the model's answers; a
``--replay`` reproduces it byte for byte), ``table1_timings.json`` (times, load, machine),
``table1.md`` (the table the README embeds) and Figs. 2-4 as PNG files.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments.harness import machine_info, progress_bars, write_results
from experiments.table1.figures import write_figures
from experiments.table1.models import (
    KINDS,
    ModelSource,
    configured_source,
    read_manifest,
    simulated_name,
    write_manifest,
)
from experiments.table1.report import markdown, outcomes, timings
from experiments.table1.workers import SeedJob, config_of, rates_of, run_jobs
from experiments.updates import VARIANTS

DEFAULT_FIGURES = Path("docs/figures")
SPEC_FIELDS = ("rooms", "items", "people")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=3, help="how many seeds (homes and episodes), from --first-seed")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=100, help="state changes per seed")
    parser.add_argument("--task-every", type=int, default=5, help="a task after every N state changes")
    parser.add_argument("--variants", default=",".join(v.name for v in VARIANTS), help="comma-separated variants")
    parser.add_argument("--model", choices=KINDS, default="simulated", help="the simulated oracle or the configured")
    parser.add_argument("--error-rate", type=float, default=0.2, help="simulated: share of answers with an error")
    parser.add_argument("--correct-on-reprompt", type=float, default=0.75, help="simulated: re-prompts answered right")
    for name in SPEC_FIELDS:
        parser.add_argument(f"--{name}", type=int, default=None, help=f"home {name} (default: the paper's scale)")
    parser.add_argument("--planner", default="fast-downward")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per planner call")
    parser.add_argument("--record", type=Path, default=None, help="write every model exchange to cassettes here")
    parser.add_argument("--replay", type=Path, default=None, help="re-run a recorded run offline from its cassettes")
    parser.add_argument(
        "--jobs", type=int, default=None, help="seeds run at once, in worker processes (default: every seed)"
    )
    parser.add_argument("--figures", type=Path, default=DEFAULT_FIGURES, help="folder for the PNG figures")
    parser.add_argument(
        "--no-share",
        dest="share",
        action="store_false",
        help="run every planner call, lanes one after another (the same outcomes, slower)",
    )


def parameters(args: argparse.Namespace) -> dict[str, Any]:
    """What defines the run (and a replay takes from the manifest): nothing about files or the machine."""
    chosen = {n.strip() for n in args.variants.split(",")}
    variants = [v.name for v in VARIANTS if v.name in chosen]
    if not variants or args.steps < 1 or args.seeds < 1 or args.task_every < 0:
        known = ", ".join(v.name for v in VARIANTS)
        raise SystemExit(f"use --seeds >= 1, --steps >= 1, --task-every >= 0 and variants among {known}")
    spec = {name: getattr(args, name) for name in SPEC_FIELDS if getattr(args, name) is not None}
    values: dict[str, Any] = {
        "seeds": list(range(args.first_seed, args.first_seed + args.seeds)),
        "steps": args.steps,
        "task_every": args.task_every,
        "variants": variants,
        "home": spec or "paper scale",
        "planner": args.planner,
        "timeout": args.timeout,
    }
    if args.model == "simulated":
        values |= {"error_rate": args.error_rate, "correct_on_reprompt": args.correct_on_reprompt}
    return values


def model_source(args: argparse.Namespace) -> tuple[ModelSource, dict[str, Any]]:
    """The lanes' model source and the run's parameters (a replay's come from its manifest)."""
    if args.replay is not None:
        if args.record is not None:
            raise SystemExit("use --record or --replay, not both")
        manifest = read_manifest(args.replay)
        values = manifest["parameters"]
        source = ModelSource(kind="replay", name=manifest["model"], rates=rates_of(values), replay=args.replay)
        return source, values
    values = parameters(args)
    if args.model == "configured":
        source = configured_source(rates_of(values), args.record)
    else:
        rates = rates_of(values)
        source = ModelSource(kind="simulated", name=simulated_name(rates), rates=rates, record=args.record)
    if args.record is not None:
        write_manifest(args.record, source.name, values)
    return source, values


def execute(
    values: dict[str, Any], source: ModelSource, workers: int, console: Console, *, share: bool = True
) -> list[dict[str, Any]]:
    """Every seed, each variant with its own progress bar; the seeds' figures in order."""
    config = config_of(values)
    jobs = [
        SeedJob(
            seed=seed,
            values=values,
            kind=source.kind,
            name=source.name,
            record=source.record,
            replay=source.replay,
            share=share,
        )
        for seed in config.seeds
    ]
    tasks = config.steps // config.task_every if config.task_every else 0
    labels = {(j.seed, v.name): f"seed {j.seed} {v.name} ({source.name})" for j in jobs for v in config.variants}
    with progress_bars(console, list(labels.values()), config.steps + tasks) as advance:
        return run_jobs(jobs, workers, lambda key: advance(labels[key]))


def run_table1(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    source, values = model_source(args)
    values = json.loads(json.dumps(values, sort_keys=True))  # the same bytes whether read back or not
    # every seed at once by default: a seed waits on its planner subprocesses, so more seeds than cores
    # keep the cores busy to the end (with two workers the third seed ran alone)
    jobs = len(values["seeds"]) if args.jobs is None else args.jobs
    workers = max(1, min(jobs, len(values["seeds"])))
    load_before = os.getloadavg()
    started, cpu_before = time.perf_counter(), _cpu_seconds()
    runs = execute(values, source, workers, console, share=args.share)
    wall, cpu = time.perf_counter() - started, _cpu_seconds() - cpu_before
    results = outcomes(runs, source.name, values)
    timed = timings(runs, source.name) | {
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "workers": workers,  # this process and its planner subprocesses: the figure load does not inflate
        "shared_solves": args.share,  # identical planner calls ran once: a shared call carries the first's seconds
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "machine": machine_info(),
        "replayed_from": str(args.replay) if args.replay else None,
        "recorded_to": str(args.record) if args.record else None,
    }
    out: Path = args.out
    write_results(out, results)
    write_results(out.with_name(out.stem + "_timings.json"), timed)
    table = markdown(results, timed)
    out.with_suffix(".md").write_text(table, encoding="utf-8")
    figures = write_figures(results, timed, args.figures)
    print_report(console, results, timed)
    console.print(f"results: {out}, {out.with_name(out.stem + '_timings.json')}, {out.with_suffix('.md')}")
    console.print("figures: " + ", ".join(str(f) for f in figures))
    load = ", ".join(map(str, timed["load_average_before"]))
    console.print(f"wall {timed['wall_s']} s, CPU {timed['cpu_s']} s (load average before: {load})")
    return results


def _cpu_seconds() -> float:
    """User and system CPU time of this process and its finished children (workers, planner runs)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def print_report(console: Console, results: dict[str, Any], timed: dict[str, Any]) -> None:
    table = Table(title=f"Table I — model: {results['model']} (mean ± 95% CI over {len(results['seeds'])} seed(s))")
    for column in ("variant", "state changes %", "paper", "plans %", "paper", "mem wrong/goal err/no plan %"):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for name, s in results["summary"].items():
        paper = s["paper"] or {"state_changes": "-", "plans": "-"}
        share = s["plan_outcome_share"]
        failures = " / ".join(f"{100 * share[o]['mean']:.1f}" for o in ("memory_wrong", "goal_error", "no_plan"))
        table.add_row(
            name,
            _pm(s["state_change_success"]),
            str(paper["state_changes"]),
            _pm(s["plan_success"]),
            str(paper["plans"]),
            failures,
        )
    console.print(table)
    fig3 = timed["fig3"]
    if fig3["speedup_mean"] is not None:
        console.print(f"Fig. 3: RSV pipeline vs full-state planner: {fig3['speedup_mean']:.1f}x (paper 12.5x)")
    console.print(f"identical episodes across variants: {results['identical_episodes']}")


def _pm(figure: dict[str, Any]) -> str:
    mean, half = 100 * figure["mean"], figure["ci95"]
    return f"{mean:.1f}" if half is None else f"{mean:.1f} ± {100 * half:.1f}"
