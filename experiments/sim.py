"""Simulator benchmark: generating a paper-scale episode, Fast Downward reference plans included.

``sim.episode.write_episode(path, generate_episode(EpisodeConfig(seed, steps)))`` writes a JSONL
episode to a temporary folder (the same bytes as ``l3mp sim generate``; the file's SHA-256 is kept):
the default ``HomeSpec`` (35 rooms, 150 items, 25 people, the paper's scale), a human event at most
steps and a task every ``--task-every``-th, each task with a reference plan from Fast Downward
through unified-planning, validated on the true state. The whole write is timed (the target: under
60 s for 100 steps). Each record's generation is timed too, as the time spent inside the episode
generator (the JSON writing between records excluded), which gives the seconds per event and per
task; and every planner call is timed, so a task's seconds split into planning (problem parsing
plus Fast Downward) and the rest (proposing, pruning, validating).

    python -m experiments sim [--seed 0] [--steps 100] [--task-every 5]
        [--out experiments/results/sim.json]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any
from unittest import mock

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import sim.simulator
from experiments.harness import (
    RESULTS,
    Benchmark,
    add_gc_argument,
    header,
    judged,
    machine_info,
    measures_table,
    quantile,
    single_target,
    timed,
    verdict,
    write_results,
)
from kg_memory import Domain, DomainRegistry
from l3mp.gc_freeze import gc_frozen
from planning.planner import PlanResult, solve
from sim.episode import EpisodeConfig, generate_episode, write_episode
from sim.household import HomeSpec

TARGET_SECONDS = 60.0  # for a 100-step paper-scale episode
TARGET_STEPS = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannerCall:
    status: str
    seconds: float  # the whole call, as the simulator waits for it
    parse_seconds: float  # unified-planning reading the problem
    plan_seconds: float  # the engine: Fast Downward in a subprocess
    plan_length: int


@dataclass(slots=True)
class Recorder:
    """Times each record's generation and each planner call the simulator makes meanwhile."""

    records: list[tuple[dict[str, Any], float, tuple[PlannerCall, ...]]] = field(default_factory=list)
    calls: list[PlannerCall] = field(default_factory=list)

    def timed(self, source: Iterator[dict[str, Any]], progress: Progress) -> Iterator[dict[str, Any]]:
        """``source``'s records, each timed while the generator makes it (not while it is written)."""
        bar, clock = progress.add_task("episode", total=None), time.perf_counter
        while True:
            first = len(self.calls)
            start = clock()
            record = next(source, None)
            seconds = clock() - start
            if record is None:
                return
            self.records.append((record, seconds, tuple(self.calls[first:])))
            progress.update(bar, advance=1, description=f"step {record.get('step', 0)}: {record['type']}")
            yield record

    def solve(self, domain: Domain, problem: str, planner: str, timeout: float = 60.0) -> PlanResult:
        """``planning.planner.solve``, timed."""
        seconds, result = timed(lambda: solve(domain, problem, planner, timeout))
        call = PlannerCall(
            status=result.status.value,
            seconds=seconds,
            parse_seconds=result.parse_seconds,
            plan_seconds=result.plan_seconds,
            plan_length=len(result.plan),
        )
        self.calls.append(call)
        return result


def run_episode(config: EpisodeConfig, folder: Path, console: Console) -> tuple[float, Recorder, Path]:
    """Write the episode (timed as a whole) with every record and planner call timed too."""
    recorder, path = Recorder(), folder / f"episode_{config.seed}.jsonl"
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with (
        Progress(*columns, console=console, transient=True) as progress,
        mock.patch.object(sim.simulator, "solve", recorder.solve),
    ):
        records = recorder.timed(generate_episode(config), progress)
        seconds, steps = timed(lambda: write_episode(path, records))
    if steps != config.steps:
        raise RuntimeError(f"the episode has {steps} steps, not {config.steps}")
    return seconds, recorder, path


def _s(values: Sequence[float], q: int) -> float:
    return round(quantile(values, q), 3)


def summarize(total: float, recorder: Recorder, path: Path) -> dict[str, Any]:
    (home, setup, _), steps = recorder.records[0], recorder.records[1:]
    events = [(r, s) for r, s, _ in steps if r["type"] == "event"]
    tasks = [(r, s, c) for r, s, c in steps if r["type"] == "task"]
    event_seconds, task_seconds = [s for _, s in events], [s for _, s, _ in tasks]
    lengths = [len(r["reference_plan"]) for r, _, _ in tasks]
    planning = [sum(c.seconds for c in calls) for _, _, calls in tasks]
    calls = [c for _, _, cs in tasks for c in cs]
    data = path.read_bytes()
    return {
        "total_seconds": round(total, 3),
        "setup_seconds": round(setup, 3),  # the home record: generate_home, the Simulator, its World
        "write_seconds": round(total - setup - sum(s for _, s, _ in steps), 3),  # JSON between records
        "home": {"entities": len(home["entities"]), "facts": len(home["facts"]), "spec": home["spec"]},
        "file": {"bytes": len(data), "lines": data.count(b"\n"), "sha256": hashlib.sha256(data).hexdigest()},
        "events": {
            "count": len(events),
            "seconds": round(sum(event_seconds), 4),
            "events_per_s": round(len(events) / sum(event_seconds)) if events else None,
            "ms_p50": round(1000 * quantile(event_seconds, 50), 3),
            "ms_max": round(1000 * max(event_seconds, default=float("nan")), 3),
            "by_kind": dict(sorted(Counter(r["kind"] for r, _ in events).items())),
        },
        "tasks": {
            "count": len(tasks),
            "seconds": round(sum(task_seconds), 3),
            "s_p50": _s(task_seconds, 50),
            "s_p95": _s(task_seconds, 95),
            "s_max": round(max(task_seconds, default=float("nan")), 3),
            "planning_s_p50": _s(planning, 50),
            "planning_s_p95": _s(planning, 95),
            "mean_plan_length": round(statistics.fmean(lengths), 2) if lengths else None,
            "plan_length_range": [min(lengths), max(lengths)] if lengths else None,
            "by_kind": dict(sorted(Counter(r["kind"] for r, _, _ in tasks).items())),
        },
        "planner_calls": {
            "count": len(calls),
            "per_task_max": max((len(cs) for _, _, cs in tasks), default=0),
            "by_status": dict(sorted(Counter(c.status for c in calls).items())),
            "seconds": round(sum(c.seconds for c in calls), 3),
            "parse_seconds": round(sum(c.parse_seconds for c in calls), 3),
            "engine_seconds": round(sum(c.plan_seconds for c in calls), 3),
            "engine_s_p50": _s([c.plan_seconds for c in calls], 50),
            "engine_s_p95": _s([c.plan_seconds for c in calls], 95),
        },
        "tasks_detail": [
            {
                "step": r["step"],
                "kind": r["kind"],
                "seconds": round(s, 3),
                "plan_length": len(r["reference_plan"]),
                "planner_calls": [asdict(c) for c in cs],
            }
            for r, s, cs in tasks
        ],
    }


def print_report(console: Console, results: dict[str, Any]) -> None:
    run, p = results["episode"], results["parameters"]
    events, tasks, calls = run["events"], run["tasks"], run["planner_calls"]
    title = (
        f"sim: {p['steps']}-step episode, seed {p['seed']}; {run['home']['entities']} entities, "
        f"{run['home']['facts']} facts; {events['count']} events, {tasks['count']} tasks"
    )
    rows = [
        ("total (write_episode)", f"{run['total_seconds']:.2f} s"),
        ("setup: home + simulator", f"{run['setup_seconds']:.3f} s"),
        ("events/s (event steps)", f"{events['events_per_s']:,}" if events["events_per_s"] else "-"),
        ("event p50 / max ms", f"{events['ms_p50']:.2f} / {events['ms_max']:.2f}"),
        ("tasks: seconds in all", f"{tasks['seconds']:.2f} s"),
        ("task step p50 / p95 / max s", f"{tasks['s_p50']:.3f} / {tasks['s_p95']:.3f} / {tasks['s_max']:.3f}"),
        ("planning per task p50 / p95 s", f"{tasks['planning_s_p50']:.3f} / {tasks['planning_s_p95']:.3f}"),
        ("planner calls (max per task)", f"{calls['count']} ({calls['per_task_max']})"),
        ("  parse / engine s in all", f"{calls['parse_seconds']:.2f} / {calls['engine_seconds']:.2f}"),
        ("  engine p50 / p95 s per call", f"{calls['engine_s_p50']:.3f} / {calls['engine_s_p95']:.3f}"),
        ("mean reference plan length", f"{tasks['mean_plan_length']} (range {tasks['plan_length_range']})"),
        ("domain warm-up (untimed)", f"{results['warmup_seconds']:.2f} s"),
        (f"{TARGET_STEPS} steps (scaled)", f"{results['target']['measured']:.2f} s"),
        ("target", verdict(results["target"])),
    ]
    console.print(measures_table(title, rows))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=TARGET_STEPS)
    parser.add_argument("--task-every", type=int, default=5, help="every n-th step is a task (0: none)")
    add_gc_argument(parser, help="leave the imported modules to the collector")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.task_every < 0:
        parser.error("use --steps >= 1 and --task-every >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    console = Console()
    # The home seeded like the episode, as ``l3mp sim generate --seed`` does (so the files are identical).
    spec = HomeSpec(seed=args.seed)
    config = EpisodeConfig(seed=args.seed, steps=args.steps, task_every=args.task_every, spec=spec)
    # Loaded once per process (unified-planning's imports, the domain parsed): not the episode's cost.
    warmup, _ = timed(lambda: DomainRegistry().get(sim.simulator.DOMAIN))
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="l3mp-bench-sim-")))
        stack.enter_context(gc_frozen(not args.no_gc_freeze))
        total, recorder, path = run_episode(config, folder, console)
        episode = summarize(total, recorder, path)
    scaled = round(total * TARGET_STEPS / args.steps, 3)
    machine = machine_info(**{p: metadata.version(p) for p in ("unified-planning", "up-fast-downward")})
    results: dict[str, Any] = {
        **header("sim", args, machine),
        "warmup_seconds": round(warmup, 3),
        "episode": episode,
        "target": {
            **judged(f"< {TARGET_SECONDS:.0f} s", scaled, scaled < TARGET_SECONDS),
            "steps": TARGET_STEPS,
            "seconds": TARGET_SECONDS,
            "scaled_seconds": scaled,
        },
    }
    write_results(args.out, results)
    print_report(console, results)
    console.print(f"results written to {args.out}")
    return 0


BENCHMARK = Benchmark(name="sim", results=RESULTS / "sim.json", main=main, targets=single_target("100-step episode, s"))
