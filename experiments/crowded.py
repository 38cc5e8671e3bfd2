"""The crowded table: N items on one kitchen table; widening and planning time.

    python -m experiments crowded [--sizes 2000,10000,14000] [--out experiments/results/crowded.json]

For each N: ``widen`` alone (it once grew quadratically with N), then a plan request with a goal
that already holds and one that does not, each under the request's deadline. The memory is SQLite
in a temporary folder.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from experiments.harness import RESULTS, Benchmark, machine_info, measures_table, verdict, write_results
from kg_memory import DomainRegistry, Entity, Fact, WorldMemory
from kg_memory.stores import SQLiteStore
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS
from l3mp.pipelines.plans import PlanConfig, TaskPlanner
from planning import World
from planning.goal_reader import parse_goal
from planning.problem import focused_context
from planning.tiers import formula_predicates, widen

DEADLINE = 120.0
GOALS = {"holds": "(on mug_1 table_1)", "moves": "(on book_1 table_1)"}


def _memory(folder: Path, n: int) -> WorldMemory:
    store = SQLiteStore(folder / f"crowded_{n}.db", DomainRegistry())
    memory = WorldMemory.create(store, f"crowded_{n}", "example_home")
    things = [Entity(f"thing_{i}", "item") for i in range(n)]
    facts = [Fact("on", (t.name, "table_1")) for t in things]
    memory.add_entities([*SURVEY_ENTITIES, *things], facts=[*SURVEY_FACTS, *facts], input="survey")
    return memory


def measure(n: int, folder: Path) -> dict[str, Any]:
    memory = _memory(folder, n)
    state = memory.state()
    constants = memory.domain.constants
    world = World(memory.domain, (e for k, e in state.entities.items() if k not in constants), state.facts)
    goal = parse_goal(GOALS["moves"])
    first = focused_context(world, goal, ["robot_1"])
    started = time.perf_counter()
    widened = widen(world, first, goal, formula_predicates(goal), ["robot_1"])
    row: dict[str, Any] = {"n": n, "widen_s": time.perf_counter() - started, "widened_objects": len(widened.entities)}
    for label, text in GOALS.items():
        started = time.perf_counter()
        report = TaskPlanner(memory, config=PlanConfig(retriever="full", deadline=DEADLINE)).plan(goal=text)
        row[f"{label}_s"] = time.perf_counter() - started
        row[f"{label}_status"] = report.status
        row[f"{label}_steps"] = len(report.plan)
    memory.store.close()
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--sizes", default="2000,10000,14000")
    args = parser.parse_args(argv)
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(int(n), Path(tmp)) for n in args.sizes.split(",")]
    for row in rows:
        console.print(measures_table(f"N = {row['n']:,} items on one table", [(k, f"{v}") for k, v in row.items()]))
    targets = {
        f"N={r['n']} answered within {DEADLINE:g} s": {
            "target": f"both goals solved within {DEADLINE:g} s",
            "value": round(max(r["holds_s"], r["moves_s"]), 3),
            "pass": r["holds_status"] == r["moves_status"] == "solved" and max(r["holds_s"], r["moves_s"]) < DEADLINE,
        }
        for r in rows
    }
    for label, target in targets.items():
        console.print(f"{label}: {verdict(target)} ({target['value']} s)")
    results = {"machine": machine_info(), "rows": rows, "targets": targets}
    write_results(args.out, results)
    return 0


BENCHMARK = Benchmark(name="crowded", results=RESULTS / "crowded.json", main=main)
