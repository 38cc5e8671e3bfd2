"""Lifelong benchmark: how apply, ``state_at``, one entity's week, last seen and export+import
scale with the length of a memory's history, on SQLite and Neo4j.

A 400-entity ``example_home`` is surveyed through :class:`WorldMemory`; its history then grows
through the store's raw bulk path (``load_history``: perception updates that each move one item
and back, so the materialized state stays the log's, with checkpoints every K versions) to each
size in turn. At each size: verified ``WorldMemory.apply`` throughput, ``state_at`` of random
versions, one entity's history for the last week, last seen; at the largest size, a gzipped JSON
Lines export and a verified re-import with the process's peak RSS (export and import timed
apart; the target is on their sum, the round trip). A log-log plot goes to
``docs/figures/lifelong.png``. ``--exchange-only`` measures the export and re-import alone.

    .venv/bin/python -m experiments lifelong [--updates 10000] [--neo4j-updates 10000] [--stores sqlite,neo4j]
"""

from __future__ import annotations

import gzip
import os
import random
import resource
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments.harness import (
    RESULTS,
    Benchmark,
    header,
    judged,
    machine_info,
    ms,
    open_store,
    targets_by_store,
    verdict,
    write_results,
)
from experiments.household import build_household, load_batches
from kg_memory import Checkpoint, Delta, Fact, GraphStore, HistoryQuery, Update, UpdateSource, UpdateStatus, WorldMemory
from kg_memory.jsonl_stream import open_lines

DOMAIN = "example_home"
STEP = timedelta(seconds=20)  # a busy robot: 3 updates a minute
TARGETS = {"sqlite": {"state_at_ms": 50.0}, "neo4j": {"state_at_ms": 200.0}}
WEEK_MS, LAST_SEEN_MS, APPLY_KEEP, EXCHANGE_RATE, RSS_MB = 20.0, 5.0, 0.8, 20_000, 500


class Grower:
    """Appends synthetic perception updates (a move and its return) through ``load_history``."""

    def __init__(
        self, store: GraphStore, world: WorldMemory, start: datetime, seed: int, step: timedelta = STEP
    ) -> None:
        self.store, self.world, self.rng, self.step = store, world, random.Random(seed), step
        self.on = {f.args[0]: f.args[1] for f in world.facts("on")}
        self.furniture = sorted({f.args[0] for f in world.facts("in_room")})
        self.base = world.facts()
        self.entities = tuple(sorted(world.entities().values(), key=lambda e: e.name))
        self.time, self.version, self.seq = start, world.version, len(world.history()) + 1

    def resync(self) -> None:
        """After measured applies, carry on from the memory's real state and counters."""
        self.on = {f.args[0]: f.args[1] for f in self.world.facts("on")}
        self.base = self.world.facts()
        self.version = self.world.version
        self.seq = self.world.query_history(newest_first=True, limit=1)[0].seq + 1

    def grow(self, count: int, batch: int = 2_000) -> None:
        """``count`` more updates (an even number, so the state ends where it began)."""
        updates: list[Update] = []
        checkpoints: list[Checkpoint] = []
        for _ in range(count // 2):
            item = self.rng.choice(sorted(self.on))
            here = self.on[item]
            there = self.rng.choice([f for f in self.furniture if f != here])
            away, back = Fact("on", (item, here)), Fact("on", (item, there))
            for remove, add in ((away, back), (back, away)):
                self.version += 1
                self.time += self.step
                meta = {"seen": [item, here, there]}
                delta = Delta(remove=frozenset({remove}), add=frozenset({add}))
                update = Update(
                    memory=self.world.name,
                    source=UpdateSource.SENSOR,
                    delta=delta,
                    status=UpdateStatus.APPLIED,
                    input="",
                    issues=(),
                    version=self.version,
                    seq=self.seq,
                    time=self.time,
                    meta=meta,
                )
                updates.append(update)
                self.seq += 1
                if self.version % self.store.checkpoint_every == 0:
                    facts = self.base if add == away else (self.base - {away}) | {back}
                    checkpoints.append(Checkpoint(self.version, self.entities, facts))
            if len(updates) >= batch:
                self.store.load_history(self.world.name, updates, checkpoints)
                updates, checkpoints = [], []
        self.store.load_history(self.world.name, updates, checkpoints)


def _timed(work: Any, times: int) -> list[float]:
    found = []
    for _ in range(times):
        start = time.perf_counter()
        work()
        found.append(time.perf_counter() - start)
    return found


def measure(world: WorldMemory, rng: random.Random, samples: int) -> dict[str, float]:
    """Apply (verified, through WorldMemory), state_at, a week of one entity, last seen."""
    names = sorted(world.entities())
    on = {f.args[0]: f.args[1] for f in world.facts("on")}
    furniture = sorted({f.args[0] for f in world.facts("in_room")})

    def apply() -> None:
        item = rng.choice(sorted(on))
        there = rng.choice([f for f in furniture if f != on[item]])
        delta = Delta(remove={Fact("on", (item, on[item]))}, add={Fact("on", (item, there))})
        assert world.apply(delta, source=UpdateSource.SENSOR).status is UpdateStatus.APPLIED
        on[item] = there

    applies = _timed(apply, samples)
    top = world.version
    state_at = _timed(lambda: world.state_at(rng.randint(1, top)), samples)
    week = datetime.now(UTC) - timedelta(days=7)
    weeks = _timed(lambda: world.query_history(HistoryQuery(entity=rng.choice(names), since=week)), samples)
    seen = _timed(lambda: world.last_seen(rng.choice(names)), samples)
    return {
        "apply_per_s": round(len(applies) / sum(applies), 1),
        "state_at_p95_ms": ms(state_at, 95),
        "week_p95_ms": ms(weeks, 95),
        "last_seen_p95_ms": ms(seen, 95),
    }


def exchange(store: GraphStore, world: WorldMemory) -> dict[str, float]:
    """Gzipped JSON Lines export, then a verified re-import under another name; with the
    process's CPU seconds for each (the machine may be shared: wall time then includes waiting)."""
    count = world.version
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "export.jsonl.gz"
        start, cpu = time.perf_counter(), time.process_time()
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
            out.writelines(world.export_lines())
        exported, export_cpu = time.perf_counter() - start, time.process_time() - cpu
        start, cpu = time.perf_counter(), time.process_time()
        with open_lines(path) as lines:
            copy = WorldMemory.import_lines(store, lines, name=f"{world.name}_copy")
        imported, import_cpu = time.perf_counter() - start, time.process_time() - cpu
        size = path.stat().st_size
    store.delete_memory(copy.name)
    return {
        "updates": count,
        "export_per_s": round(count / exported),
        "import_per_s": round(count / imported),
        "round_trip_per_s": round(count / (exported + imported)),
        "export_cpu_s": round(export_cpu, 2),
        "import_cpu_s": round(import_cpu, 2),
        "load_before": round(load, 2),
        "gzip_mb": round(size / 1e6, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def sizes(largest: int) -> list[int]:
    return [*(n for n in (1_000, 10_000, 100_000) if n < largest), largest]


def surveyed(store: GraphStore, name: str) -> WorldMemory:
    world = WorldMemory.create(store, name, DOMAIN)
    for entities, facts in load_batches(build_household(400, 1_200, seed=7), 400):
        world.add_entities(entities, facts=facts, input="survey")
    return world


def run_store(
    kind: str, largest: int, samples: int, console: Console, *, exchange_only: bool = False
) -> dict[str, Any]:
    """Grow one memory size by size and measure at each; then export and re-import another one
    grown without measurements (the measured applies are stamped now, out of the synthetic timeline)."""
    with open_store(kind) as store:
        stamp = int(time.time())
        names = [f"lifelong_{kind}_{stamp}", f"lifelong_{kind}_{stamp}_x"]
        try:
            world = surveyed(store, names[0])
            start = datetime.now(UTC) - STEP * largest - timedelta(hours=2)
            grower = Grower(store, world, start, seed=1)
            rows, rng = [], random.Random(3)
            for size in [] if exchange_only else sizes(largest):
                began = time.perf_counter()
                grower.grow((size - world.version) // 2 * 2)
                built = time.perf_counter() - began
                row = {"updates": world.version, "build_s": round(built, 1), **measure(world, rng, samples)}
                grower.resync()
                console.print(f"{kind} {row}")
                rows.append(row)
            store.delete_memory(names[0])
            other = surveyed(store, names[1])
            # after the survey, whose time is now: a microsecond apart, so none is in the future by import time
            survey_time = other.query_history(newest_first=True, limit=1)[0].time
            Grower(store, other, survey_time, seed=2, step=timedelta(microseconds=1)).grow(largest // 2 * 2)
            return {"rows": rows, "exchange": exchange(store, other)}
        finally:
            for name in names:
                if name in {m.name for m in store.list_memories()}:
                    store.delete_memory(name)


def targets(kind: str, found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    judged_ = history_targets(kind, found["rows"]) if found["rows"] else {}
    x = found["exchange"]
    if kind == "sqlite":
        judged_[f"export+import updates/s at {x['updates']:,}"] = judged(
            f">= {EXCHANGE_RATE:,}", x["round_trip_per_s"], x["round_trip_per_s"] >= EXCHANGE_RATE
        )
        judged_["peak RSS MB"] = judged(f"< {RSS_MB}", x["peak_rss_mb"], x["peak_rss_mb"] < RSS_MB)
    return judged_


def history_targets(kind: str, rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    first, last = rows[0], rows[-1]
    n = last["updates"]
    limit = TARGETS[kind]["state_at_ms"]
    return {
        f"apply at {n:,} >= 80% of at {first['updates']:,}": judged(
            f">= {APPLY_KEEP * first['apply_per_s']:.0f}/s",
            last["apply_per_s"],
            last["apply_per_s"] >= APPLY_KEEP * first["apply_per_s"],
        ),
        f"state_at p95 ms at {n:,}": judged(f"<= {limit}", last["state_at_p95_ms"], last["state_at_p95_ms"] <= limit),
        f"entity week p95 ms at {n:,}": judged(f"<= {WEEK_MS}", last["week_p95_ms"], last["week_p95_ms"] <= WEEK_MS),
        f"last seen p95 ms at {n:,}": judged(
            f"<= {LAST_SEEN_MS}", last["last_seen_p95_ms"], last["last_seen_p95_ms"] <= LAST_SEEN_MS
        ),
    }


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for kind, found in results["stores"].items():
        xs = [r["updates"] for r in found["rows"]]
        for key, label in (
            ("state_at_p95_ms", "state_at p95"),
            ("week_p95_ms", "entity week p95"),
            ("last_seen_p95_ms", "last seen p95"),
        ):
            ax.plot(xs, [r[key] for r in found["rows"]], marker="o", label=f"{kind}: {label} (ms)")
        ax.plot(
            xs,
            [1000 / r["apply_per_s"] for r in found["rows"]],
            marker="s",
            linestyle="--",
            label=f"{kind}: apply (ms per update)",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("updates in the history")
    ax.set_ylabel("milliseconds")
    ax.set_title("l3mp: cost against the history's length")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--updates", type=int, default=10_000, help="largest history on SQLite")
    parser.add_argument("--neo4j-updates", type=int, default=None, help="largest on Neo4j (default: --updates)")
    parser.add_argument("--stores", default="sqlite,neo4j")
    parser.add_argument("--samples", type=int, default=100, help="timed operations per measure and size")
    parser.add_argument("--plot", type=Path, default=Path("docs/figures/lifelong.png"))
    parser.add_argument("--exchange-only", action="store_true", help="only the export and verified re-import (no plot)")
    args = parser.parse_args(argv)
    console = Console()
    results: dict[str, Any] = {**header("lifelong", args, machine_info(load=list(os.getloadavg()))), "stores": {}}
    for kind in [k.strip() for k in args.stores.split(",") if k.strip()]:
        largest = args.updates if kind == "sqlite" else (args.neo4j_updates or args.updates)
        found = run_store(kind, largest, args.samples, console, exchange_only=args.exchange_only)
        found["targets"] = targets(kind, found)
        results["stores"][kind] = found
        x = found["exchange"]
        console.print(
            f"{kind} export+import of {x['updates']:,} updates: export {x['export_per_s']:,}/s,"
            f" verified import {x['import_per_s']:,}/s, round trip {x['round_trip_per_s']:,}/s"
            f" (CPU {x['export_cpu_s']} s + {x['import_cpu_s']} s; load average {x['load_before']})"
        )
    results["machine"]["load_after"] = list(os.getloadavg())
    write_results(args.out, results)
    if not args.exchange_only:
        plot(results, args.plot)
    table = Table(title="lifelong")
    for column in ("store", "measure", "measured", "target"):
        table.add_column(column)
    for kind, found in results["stores"].items():
        for label, target in found["targets"].items():
            table.add_row(kind, label, f"{target['measured']:,}", verdict(target))
    console.print(table)
    return 0


BENCHMARK = Benchmark(name="lifelong", results=RESULTS / "lifelong.json", main=main, targets=targets_by_store())
