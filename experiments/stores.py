"""Store benchmark: load time, verified apply throughput and 2-hop neighbourhood latency.

A deterministic synthetic household in ``example_home`` (valid under its rules) is loaded
through :class:`WorldMemory` as perception updates; then, per store: ``WorldMemory.apply``
(verification included) of updates moving items between furniture, the verification
alone, the raw ``store.commit`` alone, and ``memory.neighbourhood`` of 3 random seeds.
The harness's own objects are frozen out of the garbage collector first (unless
``--no-gc-freeze``); each phase reports the collector's time as ``gc_ms``.

    python -m experiments stores [--stores sqlite,neo4j] [--entities 10000] [--facts 50000]
        [--out experiments/results/stores.json] [--profile]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import neo4j
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from experiments.harness import (
    RESULTS,
    Benchmark,
    GcClock,
    add_gc_argument,
    header,
    judged,
    machine_info,
    ms,
    open_store,
    profile,
    targets_by_store,
    timed,
    verdict,
    write_results,
)
from experiments.household import Household, Mover, build_household, load_batches
from kg_memory import Delta, DomainRegistry, Entity, Fact, Update, UpdateSource, UpdateStatus, WorldMemory
from l3mp.gc_freeze import gc_frozen
from l3mp.settings import Settings

DOMAIN = "example_home"
# Per store: verified apply changes/s at least, and 2-hop neighbourhood p95 ms at most.
TARGETS: dict[str, tuple[int, float]] = {"sqlite": (20_000, 5.0), "neo4j": (5_000, 30.0)}


# -- measurement ----------------------------------------------------------------------------


GC = GcClock()


def _expect_applied(update: Update) -> None:
    if update.status is not UpdateStatus.APPLIED:
        raise RuntimeError(f"update {update.status}: {[i.message for i in update.issues[:3]]}")


def measure_load(memory: WorldMemory, batches: list[tuple[list[Entity], list[Fact]]]) -> dict[str, Any]:
    times = []
    for entities, facts in batches:
        elapsed, update = timed(lambda e=entities, f=facts: memory.add_entities(e, facts=f))  # type: ignore[misc]
        _expect_applied(update)
        times.append(elapsed)
    n_facts = sum(len(f) for _, f in batches)
    return {
        "updates": len(batches),
        "entities": sum(len(e) for e, _ in batches),
        "facts": n_facts,
        "seconds": round(sum(times), 3),
        "facts_per_s": round(n_facts / sum(times)),
        **GC.reset(),
    }


def _apply(memory: WorldMemory, delta: Delta) -> float:
    """Seconds of a verified update: ``WorldMemory.apply`` (version read, verification, commit)."""
    elapsed, update = timed(lambda: memory.apply(delta, source=UpdateSource.EXECUTION))
    _expect_applied(update)
    return elapsed


def _verify(memory: WorldMemory, delta: Delta) -> float:
    """Seconds of the verification alone; nothing is written."""
    elapsed, issues = timed(lambda: memory.verify(delta, UpdateSource.EXECUTION))
    if issues:
        raise RuntimeError(f"verification found issues: {[i.message for i in issues[:3]]}")
    return float(elapsed)


def _commit(memory: WorldMemory, delta: Delta) -> float:
    """Seconds of ``store.commit`` of an update nobody verified: the store's share of an apply."""
    version = memory.version
    update = Update(
        memory=memory.name, source=UpdateSource.EXECUTION, delta=delta, status=UpdateStatus.APPLIED, version=version
    )
    return timed(lambda: memory.store.commit(update, expected_version=version))[0]


def measure_updates(
    memory: WorldMemory,
    mover: Mover,
    work: Callable[[WorldMemory, Delta], float],
    *,
    updates: int,
    changes: int,
    writes: bool,
) -> dict[str, Any]:
    times = []
    for _ in range(updates):
        delta, moves = mover.propose(changes)
        times.append(work(memory, delta))
        if writes:
            mover.on.update(moves)
    return {
        "updates": updates,
        "changes_per_update": changes,
        "changes_per_s": round(changes * updates / sum(times)),
        "seconds": round(sum(times), 3),
        "p50_ms": ms(times, 50),
        "p95_ms": ms(times, 95),
        **GC.reset(),
    }


def measure_hood(
    memory: WorldMemory, rng: random.Random, names: list[str], queries: int, warmup: int
) -> dict[str, Any]:
    times, sizes, truncated = [], [], 0
    for n in range(warmup + queries):
        if n == warmup:
            GC.reset()
        seeds = rng.sample(names, 3)
        elapsed, hood = timed(lambda s=seeds: memory.neighbourhood(s, hops=2, max_facts=200))  # type: ignore[misc]
        if n >= warmup:
            times.append(elapsed)
            sizes.append(len(hood.facts))
            truncated += hood.truncated
    return {
        "queries": queries,
        "warmup": warmup,
        "seeds": 3,
        "hops": 2,
        "max_facts": 200,
        "p50_ms": ms(times, 50),
        "p95_ms": ms(times, 95),
        "p99_ms": ms(times, 99),
        "mean_ms": round(1000 * statistics.fmean(times), 3),
        "mean_facts": round(statistics.fmean(sizes), 1),
        "truncated_share": round(truncated / queries, 3),
        **GC.reset(),
    }


# -- stores ---------------------------------------------------------------------------------


def _check_state(memory: WorldMemory, household: Household, mover: Mover) -> None:
    """The store ends where the benchmark thinks: as many facts, and every item where it was moved."""
    facts = memory.facts()
    on = {f.args[0]: f.args[1] for f in facts if f.predicate == "on"}
    if len(facts) != len(household.facts) or on != mover.on:
        raise RuntimeError(f"final state differs: {len(facts)} facts, expected {len(household.facts)}")


def run_store(kind: str, household: Household, args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    rng = random.Random(args.seed + 1)
    mover, names = Mover(rng, household), [e.name for e in household.entities]

    def updates(work: Callable[[WorldMemory, Delta], float], writes: bool) -> Callable[[WorldMemory], dict[str, Any]]:
        return lambda m: measure_updates(m, mover, work, updates=args.updates, changes=args.changes, writes=writes)

    phases: dict[str, Callable[[WorldMemory], dict[str, Any]]] = {
        "load": lambda m: measure_load(m, load_batches(household, args.load_batch)),
        "verify_only": updates(_verify, writes=False),
        "apply_verified": updates(_apply, writes=True),
        "commit_raw": updates(_commit, writes=True),
        "neighbourhood": lambda m: measure_hood(m, rng, names, args.queries, args.warmup),
    }
    task = progress.add_task(kind, total=len(phases) + 1)
    with open_store(kind) as store:
        memory = WorldMemory.create(store, f"bench_{uuid.uuid4().hex[:10]}", DOMAIN)
        result: dict[str, Any] = {"memory": memory.name}
        try:
            for key, phase in phases.items():
                progress.update(task, description=f"{kind}: {key}")
                GC.reset()
                result[key] = phase(memory)
                progress.advance(task)
            _check_state(memory, household, mover)
            if args.profile:
                progress.update(task, description=f"{kind}: profile")
                result["profile"] = profile_store(memory, mover, rng, names, args.changes)
        finally:
            store.delete_memory(memory.name)
            progress.advance(task)
    result["apply_verified"]["verification_included"] = True
    result["commit_raw"]["verification_included"] = False
    result["targets"] = judge(kind, result)
    return result


def profile_store(
    memory: WorldMemory, mover: Mover, rng: random.Random, names: list[str], changes: int
) -> dict[str, list[str]]:
    """Extra, profiled (so slower) runs: 5 verified applies and 100 neighbourhood queries."""

    def hoods() -> None:
        for _ in range(100):
            memory.neighbourhood(rng.sample(names, 3), hops=2, max_facts=200)

    applies = profile(lambda: measure_updates(memory, mover, _apply, updates=5, changes=changes, writes=True))
    return {"apply_5_updates": applies, "neighbourhood_100_queries": profile(hoods)}


def judge(kind: str, result: dict[str, Any]) -> dict[str, Any]:
    rate_target, p95_target = TARGETS[kind]
    rate, p95 = result["apply_verified"]["changes_per_s"], result["neighbourhood"]["p95_ms"]
    return {
        "apply_changes_per_s": judged(f">= {rate_target:,}", rate, rate >= rate_target),
        "neighbourhood_p95_ms": judged(f"<= {p95_target}", p95, p95 <= p95_target),
    }


# -- report ---------------------------------------------------------------------------------


def store_machine_info(kinds: list[str]) -> dict[str, Any]:
    info = machine_info(sqlite=sqlite3.sqlite_version, neo4j_driver=neo4j.__version__)
    if "neo4j" in kinds:
        try:
            settings = Settings()
            with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=settings.neo4j_auth) as driver:
                info["neo4j_server"] = str(driver.get_server_info().agent)
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, OSError) as exc:
            info["neo4j_server"] = f"unknown ({type(exc).__name__})"
        info["neo4j_uri"] = Settings().neo4j_uri
    return info


def _percentiles(phase: dict[str, Any], *qs: int) -> str:
    """The phase's percentiles ``qs`` in milliseconds, slash-separated."""
    return "/".join(f"{phase[f'p{q}_ms']:.1f}" for q in qs)


ROWS: tuple[tuple[str, Callable[[dict[str, Any]], str]], ...] = (
    ("load: sensor updates", lambda r: f"{r['load']['updates']} in {r['load']['seconds']:.2f} s"),
    ("load: facts/s", lambda r: f"{r['load']['facts_per_s']:,}"),
    ("apply (verified): changes/s", lambda r: f"{r['apply_verified']['changes_per_s']:,}"),
    ("apply: p50/p95 ms", lambda r: _percentiles(r["apply_verified"], 50, 95)),
    ("verify only: p50/p95 ms", lambda r: _percentiles(r["verify_only"], 50, 95)),
    ("raw commit: changes/s", lambda r: f"{r['commit_raw']['changes_per_s']:,}"),
    ("raw commit: p50/p95 ms", lambda r: _percentiles(r["commit_raw"], 50, 95)),
    ("2-hop: p50/p95/p99 ms", lambda r: _percentiles(r["neighbourhood"], 50, 95, 99)),
    (
        "2-hop: facts, truncated",
        lambda r: f"{r['neighbourhood']['mean_facts']:.0f}, {r['neighbourhood']['truncated_share']:.0%}",
    ),
    ("gc ms: apply, 2-hop", lambda r: f"{r['apply_verified']['gc_ms']:.0f}, {r['neighbourhood']['gc_ms']:.0f}"),
)


def print_report(console: Console, results: dict[str, Any]) -> None:
    p, h, stores = results["parameters"], results["household"], results["stores"]
    table = Table(title=f"{h['entities']:,} entities, {h['facts']:,} facts; {p['updates']} updates x {p['changes']:,}")
    table.add_column("measure")
    for kind in stores:
        table.add_column(kind, justify="right")
    for label, cell in ROWS:
        table.add_row(label, *(cell(r) for r in stores.values()))
    for key, label in (("apply_changes_per_s", "target: apply"), ("neighbourhood_p95_ms", "target: 2-hop p95 ms")):
        table.add_row(label, *(verdict(r["targets"][key]) for r in stores.values()))
    console.print(table)
    for kind, r in stores.items():
        for phase, lines in r.get("profile", {}).items():
            console.print(f"\n[bold]{kind} profile: {phase}[/]")
            console.print("\n".join(lines), highlight=False, markup=False, soft_wrap=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--stores", default="sqlite,neo4j", help="comma-separated: sqlite, neo4j")
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--facts", type=int, default=50_000)
    parser.add_argument("--changes", type=int, default=1_000, help="fact changes per update (even)")
    parser.add_argument("--updates", type=int, default=20, help="updates per measured phase")
    parser.add_argument("--queries", type=int, default=300, help="timed neighbourhood queries")
    parser.add_argument("--warmup", type=int, default=30, help="untimed neighbourhood queries first")
    parser.add_argument("--load-batch", type=int, default=5_000, help="facts per perception update when loading")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="also cProfile 5 applies and 100 queries per store")
    add_gc_argument(parser, help="leave the harness's objects to the collector")
    args = parser.parse_args(argv)
    if args.entities < 100 or args.changes < 2 or args.changes % 2 or min(args.updates, args.queries) < 1:
        parser.error("use --entities >= 100, an even --changes >= 2, and at least one update and query")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    console, kinds = Console(), [k.strip() for k in args.stores.split(",") if k.strip()]
    elapsed, household = timed(lambda: build_household(args.entities, args.facts, args.seed))
    if len(household.on) < args.changes // 2:
        raise SystemExit(f"only {len(household.on)} items to move: use fewer --changes or more --entities")
    console.print(f"household: {len(household.entities):,} entities, {len(household.facts):,} facts ({elapsed:.1f} s)")
    DomainRegistry().get(DOMAIN)  # cached: the parser's imports (unified-planning, scipy, ...) load now
    results: dict[str, Any] = {
        **header("stores", args, store_machine_info(kinds)),
        "household": {
            "domain": DOMAIN,
            "entities": len(household.entities),
            "facts": len(household.facts),
            "facts_by_predicate": dict(sorted(Counter(f.predicate for f in household.facts).items())),
        },
        "stores": {},
    }
    with gc_frozen(not args.no_gc_freeze), GC.running(), Progress(console=console, transient=True) as progress:
        for kind in kinds:
            results["stores"][kind] = run_store(kind, household, args, progress)
    write_results(args.out, results)
    print_report(console, results)
    console.print(f"results written to {args.out}")
    return 0


# the summary of all benchmarks labels each store's targets
LABELS = {"apply_changes_per_s": "apply changes/s", "neighbourhood_p95_ms": "2-hop p95 ms"}
BENCHMARK = Benchmark(name="stores", results=RESULTS / "stores.json", main=main, targets=targets_by_store(LABELS))
