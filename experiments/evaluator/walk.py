"""The evaluator benchmark's walk: a home of a given size, random applicable actions executed and
timed one by one, the walk replayed as one plan, and the tables."""

from __future__ import annotations

import dataclasses
import random
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments.evaluator.chooser import Chooser
from experiments.harness import measures_table, timed, us, verdict
from kg_memory import Domain
from planning import ActionEvaluator, GroundAction, World
from sim.household import Home, HomeSpec

DOMAIN = "household"


def home_spec(n_entities: int, seed: int) -> HomeSpec:
    """``HomeSpec.scaled``, with as many more (or fewer) items as make exactly ``n_entities`` entities."""
    spec = HomeSpec.scaled(n_entities, seed)
    return dataclasses.replace(spec, items=max(0, spec.items + n_entities - spec.entity_count()))


# -- measuring ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Walk:
    plan: tuple[GroundAction, ...]
    seconds: tuple[float, ...]  # of each execute
    refused: tuple[str, ...]  # reasons of chosen actions the evaluator refused (must be none)
    changes: int  # fact changes applied


def walk(evaluator: ActionEvaluator, world: World, home: Home, actions: int, seed: int) -> Walk:
    """``actions`` random applicable actions executed on ``world``; only ``execute`` is timed."""
    chooser, clock = Chooser(world, home, random.Random(seed)), time.perf_counter
    plan: list[GroundAction] = []
    seconds: list[float] = []
    refused: list[str] = []
    changes = 0
    for _ in range(actions):
        action = chooser.next()
        start = clock()
        outcome = evaluator.execute(action, world)
        seconds.append(clock() - start)
        plan.append(action)
        changes += outcome.delta.size
        refused.extend(outcome.reasons)
    return Walk(tuple(plan), tuple(seconds), tuple(refused), changes)


def summarize(result: Walk) -> dict[str, Any]:
    by_kind: dict[str, list[float]] = {}
    for action, seconds in zip(result.plan, result.seconds, strict=True):
        by_kind.setdefault(action.name, []).append(seconds)
    total = sum(result.seconds)
    return {
        "actions": len(result.plan),
        "seconds": round(total, 4),
        "actions_per_s": round(len(result.plan) / total) if total else None,
        "us_mean": round(1e6 * total / max(1, len(result.plan)), 1),
        "us_p50": us(result.seconds, 50),
        "us_p99": us(result.seconds, 99),
        "us_max": round(1e6 * max(result.seconds, default=0.0), 1),
        "fact_changes": result.changes,
        "refused": len(result.refused),
        "by_kind": {
            kind: {"count": len(s), "us_mean": round(1e6 * statistics.fmean(s), 1), "us_max": round(1e6 * max(s), 1)}
            for kind, s in sorted(by_kind.items())
        },
    }


def replay(evaluator: ActionEvaluator, domain: Domain, home: Home, result: Walk, final: World) -> dict[str, Any]:
    """The walk as one plan through ``validate`` on the start state: it must run and end where the walk did."""
    start = World(domain, home.entities, home.facts)
    seconds, outcome = timed(lambda: evaluator.validate(result.plan, start))
    return {
        "seconds": round(seconds, 3),
        "executable": outcome.executable,
        "same_final_state": outcome.world.facts == final.facts,
        "start_unchanged": start.facts == home.facts,
    }


def describe_home(home: Home, world: World) -> dict[str, Any]:
    by_type = Counter(e.type for e in home.entities)
    return {
        "domain": DOMAIN,
        "generator": "sim.household.generate_home",
        "spec": dataclasses.asdict(home.spec),
        "entities": len(home.entities),
        "objects": len(world.entities),  # with the domain's constants (robot_1 and the liquids)
        "facts": len(home.facts),
        "rooms": len(home.rooms),
        "receptacles": len(home.receptacles),
        "appliances": len(home.appliances),
        "people": len(home.people),
        "items": len(home.items),
        "entities_by_type": dict(sorted(by_type.items())),
        "facts_by_predicate": dict(sorted(Counter(f.predicate for f in home.facts).items())),
    }


# -- report ---------------------------------------------------------------------------------


def print_report(console: Console, results: dict[str, Any]) -> None:
    run, home, target, replayed = results["walk"], results["home"], results["target"], results["validate"]
    table = Table(title=f"evaluator: check+execute by action kind ({run['actions']:,} random applicable actions)")
    table.add_column("action")
    for column in ("count", "mean µs", "max µs"):
        table.add_column(column, justify="right")
    for kind, row in run["by_kind"].items():
        table.add_row(kind, f"{row['count']:,}", f"{row['us_mean']:.1f}", f"{row['us_max']:.1f}")
    table.add_section()
    table.add_row("all", f"{run['actions']:,}", f"{run['us_mean']:.1f}", f"{run['us_max']:.1f}")
    console.print(table)
    title = (
        f"evaluator: {home['entities']:,} entities ({home['rooms']:,} rooms, {home['items']:,} items, "
        f"{home['people']:,} people), {home['facts']:,} facts"
    )
    rows = [
        ("check+execute, all actions", f"{run['seconds']:.3f} s"),
        ("actions/s", f"{run['actions_per_s']:,}"),
        ("p50 / p99 / max µs", f"{run['us_p50']} / {run['us_p99']} / {run['us_max']}"),
        ("fact changes", f"{run['fact_changes']:,}"),
        ("refused (must be 0)", str(run["refused"])),
        ("validate of the walk as one plan", f"{replayed['seconds']:.3f} s"),
        ("same final state, start unchanged", f"{replayed['same_final_state']}, {replayed['start_unchanged']}"),
        ("10,000 actions (scaled)", f"{target['scaled_seconds']:.3f} s"),
        ("target", verdict(target)),
    ]
    console.print(measures_table(title, rows))
