"""Open-world tasks: items with unknown or stale locations, explored for vs the closed world.

For each task a fresh simulated home: the target item was moved in the truth (most often into a closed
container); the memory has lost track of ``--fraction`` of its items, the target among them (or, for
every other task, still believes the target's old place: a stale fact). The same task runs on the
open-world runtime (ask, explore, replan) and on the closed-world runtime (plans from what it has).

    python -m experiments openworld [--tasks 30] [--fraction 0.3]
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from experiments.harness import (
    RESULTS,
    Benchmark,
    add_gc_argument,
    header,
    judged,
    machine_info,
    measures_table,
    verdict,
    write_results,
)
from kg_memory import DomainRegistry, WorldMemory
from kg_memory.stores import SQLiteStore
from l3mp.runtime import Runtime, RuntimeConfig
from sim import HomeSpec, Simulator, generate_home
from sim.environment import SimEnvironment
from sim.partial import hide_target, lose_track


def run_task(index: int, open_world: bool, fraction: float, folder: Path) -> dict[str, Any]:
    home = generate_home(HomeSpec(seed=100 + index, rooms=6, items=24, people=2))
    sim = Simulator(home, seed=index)
    store = SQLiteStore(folder / f"{index}-{open_world}.db", DomainRegistry())
    memory = WorldMemory.create(store, "home", "household")
    memory.add_entities(home.entities, facts=home.facts, input="survey")
    rng = random.Random(index)
    stale = index % 2 == 1
    task = hide_target(sim, rng, stale=stale)
    lost = lose_track(memory, fraction, rng, must=() if stale else (task.item,), keep=(task.item,) if stale else ())
    env = SimEnvironment(sim)
    env.add_task(f"Bring the {home.label(task.item)} to {home.label(task.person)}.", task.goal)
    config = RuntimeConfig(open_world=open_world, max_explorations=20, max_actions=150, max_replans=3)
    started = time.perf_counter()
    record = Runtime(memory, env, None, config).step().task
    seconds = time.perf_counter() - started
    assert record is not None
    exploring = sum(e.actions for e in record.exploration)
    store.close()
    return {
        "task": index,
        "item": task.item,
        "stale": stale,
        "hidden_in": task.now.args[1],
        "lost_track_of": lost,
        "status": record.status.value,
        "success": record.succeeded,
        "actions": sum(1 for a in record.actions if a.executed),
        "exploring_actions": exploring,
        "subgoals": len(record.exploration),
        "plans": len(record.plans),
        "seconds": round(seconds, 3),
        "planner_seconds": round(sum(p.planner_seconds for p in record.plans), 3),
        "reason": record.reason[:200],
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    won = [r for r in rows if r["success"]]

    def mean(key: str) -> float:
        return round(statistics.mean(r[key] for r in rows), 3) if rows else 0.0

    return {
        "tasks": len(rows),
        "success_rate": round(len(won) / len(rows), 3) if rows else 0.0,
        "mean_actions_exploring": round(statistics.mean(r["exploring_actions"] for r in rows), 2) if rows else 0.0,
        "mean_actions": round(statistics.mean(r["actions"] for r in rows), 2) if rows else 0.0,
        "mean_seconds_per_task": mean("seconds"),
        "mean_planner_seconds_per_task": mean("planner_seconds"),
        "p95_seconds_per_task": round(sorted(r["seconds"] for r in rows)[int(0.95 * (len(rows) - 1))], 3)
        if rows
        else 0.0,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--fraction", type=float, default=0.3, help="share of items whose location is unknown")
    add_gc_argument(parser, help="(unused)")
    args = parser.parse_args(argv)
    console = Console()
    results = header("openworld", args, machine_info())
    runs: dict[str, list[dict[str, Any]]] = {"open_world": [], "closed_world": []}
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.tasks):
            for name, flag in (("open_world", True), ("closed_world", False)):
                runs[name].append(run_task(index, flag, args.fraction, Path(folder)))
            console.print(
                f"task {index}: open {runs['open_world'][-1]['status']}, closed {runs['closed_world'][-1]['status']}"
            )
    summaries = {name: summary(rows) for name, rows in runs.items()}
    results |= {"summaries": summaries, "runs": runs}
    rate = summaries["open_world"]["success_rate"]
    results["targets"] = {
        "open-world success": judged(
            "> closed-world success", rate, rate > summaries["closed_world"]["success_rate"], samples=args.tasks
        ),
        "tasks": judged(">= 30 tasks", args.tasks, args.tasks >= 30),
    }
    write_results(args.out, results)
    for name, s in summaries.items():
        console.print(measures_table(name, [(k, str(v)) for k, v in s.items()]))
    console.print(measures_table("targets", [(k, verdict(t)) for k, t in results["targets"].items()]))
    return 0


BENCHMARK = Benchmark(name="openworld", results=RESULTS / "openworld.json", main=main)
