"""``l3mp sim generate`` and ``l3mp sim show``: simulator episodes from the command line."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


def add_commands(commands: Any) -> None:
    sim = commands.add_parser("sim", help="the text household simulator")
    sub = sim.add_subparsers(dest="sim_command", required=True)
    generate = sub.add_parser("generate", help="generate an episode (events and tasks with reference plans) as JSONL")
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--steps", type=int, default=100, help="steps in all; every --task-every-th is a task")
    generate.add_argument("--task-every", type=int, default=5)
    generate.add_argument("--rooms", type=int, help="default: paper scale (35)")
    generate.add_argument("--items", type=int, help="default: paper scale (150)")
    generate.add_argument("--people", type=int, help="default: paper scale (25)")
    generate.add_argument("--undescriptive", action="store_true", help="name entities object_17 etc., keep labels")
    generate.add_argument("--out", type=Path, required=True)
    show = sub.add_parser("show", help="summarize an episode file")
    show.add_argument("file", type=Path)


def run(args: argparse.Namespace, console: Console) -> None:
    if args.sim_command == "generate":
        _generate(args, console)
    else:
        _show(args.file, console)


def _generate(args: argparse.Namespace, console: Console) -> None:
    from sim.episode import EpisodeConfig, generate_episode, write_episode
    from sim.household import HomeSpec

    sizes = {k: v for k, v in (("rooms", args.rooms), ("items", args.items), ("people", args.people)) if v is not None}
    spec = HomeSpec(seed=args.seed, undescriptive_names=args.undescriptive, **sizes)
    config = EpisodeConfig(seed=args.seed, steps=args.steps, task_every=args.task_every, spec=spec)
    started = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task("generating", total=args.steps)

        def on_step(record: dict[str, Any]) -> None:
            progress.update(bar, advance=1, description=f"step {record['step']}: {record['type']} {record['kind']}")

        steps = write_episode(args.out, generate_episode(config, on_step))
    console.print(f"wrote {steps} steps to {args.out} in {time.perf_counter() - started:.1f} s")


def _show(path: Path, console: Console) -> None:
    from sim.episode import read_episode, summarize

    summary = summarize(read_episode(path))
    console.print(
        f"[bold]{path}[/]: seed {summary['seed']}, {summary['entities']} entities, {summary['facts']} facts, "
        f"{summary['events']} events, {summary['tasks']} tasks "
        f"(mean reference plan {summary['mean_plan_length']:.1f} steps)"
    )
    _counts(console, "entities by type", summary["entity_types"])
    _counts(console, "events by category", summary["events_by_category"])
    _counts(console, "events by kind", summary["events_by_kind"])
    _counts(console, "events by wording", summary["events_by_vagueness"])
    _counts(console, "tasks by kind", summary["tasks_by_kind"])
    console.print("[bold]sample events[/]")
    for text in summary["event_samples"]:
        console.print(f"  • {text}")
    console.print("[bold]sample tasks[/]")
    for text, goal, length in summary["task_samples"]:
        console.print(f"  • {text}\n    goal {goal}, reference plan of {length} steps")


def _counts(console: Console, title: str, counts: dict[str, int]) -> None:
    table = Table(title=title, show_header=False)
    for key, value in counts.items():
        table.add_row(key, str(value))
    console.print(table)
