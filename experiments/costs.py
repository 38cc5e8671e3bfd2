"""Action costs benchmark: plan cost and planning time for satisficing, anytime and optimal planning
in household-travel (moving costs the walk), and what pruning costs an optimal plan.

Homes at paper scale and at ``--mid-entities``; on each, simulator tasks plus one "go to" task whose
cheapest route takes more steps than the shortest (worked out by hand from the floor plan). Every
task is planned as ``l3mp plan --goal`` plans it (the goal's objects and the way to them first, then
the tiers; plans validated from the full state) by Fast Downward's lama-first (satisficing), LAMA's
anytime search and A* with LM-cut (``--optimal``: a plan proven cheapest for the retrieved context
is then checked against the whole state within the same timeout; when no optimal search finds a plan
in time, the satisficing searches' best plan comes back, unproven). The optimal runs give the pruning
gap: the cost proven optimal for the retrieved context against the cost proven optimal for the
whole state, on the tasks where the whole state was searched to the end. Planning runs on the
simulator's true state (no store, no model): this measures the planners, not the memory.

In AI2-THOR (``thor-travel``, ``--thor-scenes`` recorded kitchens from ``--thor-data``): the scene as
perception reports it, the agent in the middle of the floor, and the task to put two objects that fit
in the sink there, drawn per scene from the seed; going to an object costs the floor distance.

    python -m experiments costs [--paper-tasks 3] [--mid-tasks 1] [--mid-entities 2000]
        [--no-homes] [--thor-scenes 3] [--thor-data ../shared/thor] [--timeout 10] [--optimal-timeout 60] [--seed 0]
        [--out experiments/results/costs.json]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
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
    measures_table,
    progress,
    verdict_word,
    write_results,
)
from kg_memory import Domain, DomainRegistry
from kg_memory.formula import And, Atom, Formula
from perception import ThorNames, thor_observation
from planning import DEFAULT_PLANNER, PlanStatus, World
from planning.planner import ANYTIME_PLANNER
from planning.problem import focused_context
from planning.tiers import TieredPlan, TieredPlanner
from sim import HomeSpec, Simulator, generate_home
from sim.floorplan import detours
from sim.thor.data import read_scene
from sim.thor.environment import observed_world

DOMAIN = "household-travel"
THOR_DOMAIN = "thor-travel"
ROBOT = "robot_1"
MODES = ("satisficing", "anytime", "optimal")
EPSILON = 1e-6  # costs are sums of one-decimal distances


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    """One task planned one way."""

    task: str
    kind: str
    mode: str
    status: str
    tier: str | None
    seconds: float  # wall, the tiers and the whole-state check included
    steps: int
    cost: float | None  # in the full state
    valid: bool  # runs on the true state and reaches the goal
    proven: bool  # optimal for the whole state
    pruned_optimum: float | None = None  # optimal runs: cost proven cheapest for the retrieved context
    full_optimum: float | None = None  # optimal runs: cost proven cheapest for the whole state


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--paper-tasks", type=int, default=3, help="simulator tasks at paper scale (plus a detour)")
    parser.add_argument("--mid-entities", type=int, default=2_000)
    parser.add_argument("--mid-tasks", type=int, default=1, help="simulator tasks at --mid-entities (plus a detour)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per satisficing or anytime search")
    parser.add_argument("--optimal-timeout", type=float, default=60.0, help="seconds per optimal search")
    parser.add_argument(
        "--no-homes", dest="homes", action="store_false", help="skip the simulated homes (AI2-THOR kitchens only)"
    )
    parser.add_argument("--thor-scenes", type=int, default=3, help="AI2-THOR kitchens (FloorPlan1, 2, ...; 0: none)")
    parser.add_argument("--thor-data", type=Path, default=Path("../shared/thor"), help="the recorded scenes' folder")


def tasks(sim: Simulator, count: int) -> list[tuple[str, str, Formula]]:
    """(text, kind, goal): a detour first, if the home has one, then ``count`` simulator tasks."""
    found: list[tuple[str, str, Formula]] = []
    way = detours(sim.home)
    if way:
        room = way[0].room
        found.append((f"go to {sim.home.label(room)}", "detour", Atom("robot_at", (ROBOT, room))))
    for _ in range(count * 20):
        if len(found) == count + bool(way):
            break
        task = sim.tasks.propose(sim.world)
        if not sim.evaluator.evaluate(task.goal, sim.world):
            found.append((task.text, task.kind, task.goal))
    return found


def planners(args: argparse.Namespace, domain_name: str = DOMAIN) -> dict[str, TieredPlanner]:
    domain = DomainRegistry().get(domain_name)
    return {
        "satisficing": TieredPlanner(domain, planner=DEFAULT_PLANNER, timeout=args.timeout),
        "anytime": TieredPlanner(domain, planner=ANYTIME_PLANNER, timeout=args.timeout),
        "optimal": TieredPlanner(domain, timeout=args.optimal_timeout, optimal=True),
    }


def plan_once(world: World, task: tuple[str, str, Formula], mode: str, planner: TieredPlanner) -> Run:
    text, kind, goal = task
    started = time.perf_counter()
    result = planner.plan(world, goal, focused_context(world, goal, [ROBOT]), anchors=[ROBOT])
    seconds = time.perf_counter() - started
    outcome = planner.evaluator.validate(result.plan, world, goal)  # the true state: no memory in between
    valid = result.solved and outcome.executable and bool(outcome.goal_reached)
    pruned, full = _optima(result, world, planner) if mode == "optimal" else (None, None)
    return Run(
        task=text,
        kind=kind,
        mode=mode,
        status=result.status.value,
        tier=result.tier,
        seconds=round(seconds, 3),
        steps=len(result.plan),
        cost=None if result.cost is None else round(result.cost, 3),
        valid=valid,
        proven=result.optimal,
        pruned_optimum=pruned,
        full_optimum=full,
    )


def _optima(result: TieredPlan, world: World, planner: TieredPlanner) -> tuple[float | None, float | None]:
    """The cheapest costs proven for a pruned context and for the whole state (None: not proven)."""
    pruned = full = None
    for attempt in result.attempts:
        if attempt.result.status is PlanStatus.SOLVED and attempt.result.optimal:
            cost = round(planner.evaluator.plan_cost(attempt.result.plan, world), 3)
            if attempt.tier == "full":
                full = cost
            elif attempt.accepted:
                pruned = cost
    return pruned, full


def run_scale(name: str, spec: HomeSpec, count: int, args: argparse.Namespace, console: Console) -> dict[str, Any]:
    home = generate_home(spec)
    sim = Simulator(home, seed=args.seed, domain=DomainRegistry().get(DOMAIN))
    chosen = tasks(sim, count)
    runs = plan_all(name, [(sim.world, task) for task in chosen], planners(args), console)
    return {"entities": len(home.entities), "facts": len(sim.world.facts), "modes": summarize(runs)} | {
        "gap": gap(runs),
        "runs": [asdict(r) for r in runs],
    }


def plan_all(
    name: str, tasks: Sequence[tuple[World, tuple[str, str, Formula]]], ways: dict[str, TieredPlanner], console: Console
) -> list[Run]:
    runs: list[Run] = []
    with progress(console, f"costs: {name}", len(tasks) * len(MODES)) as advance:
        for world, task in tasks:
            for mode in MODES:
                runs.append(plan_once(world, task, mode, ways[mode]))
                advance()
    return runs


def run_thor(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    """Kitchens FloorPlan1..n in thor-travel: put two things that fit in the sink there."""
    domain = DomainRegistry().get(THOR_DOMAIN)
    worlds = [
        _thor_kitchen(args.thor_data / "scenes" / f"FloorPlan{i}_physics.json.gz", domain, args.seed)
        for i in range(1, args.thor_scenes + 1)
    ]
    runs = plan_all("AI2-THOR kitchens", worlds, planners(args, THOR_DOMAIN), console)
    return {
        "entities": round(statistics.mean(len(w.entities) for w, _ in worlds)) if worlds else 0,
        "facts": round(statistics.mean(len(w.facts) for w, _ in worlds)) if worlds else 0,
        "modes": summarize(runs),
        "gap": gap(runs),
        "runs": [asdict(r) for r in runs],
    }


def _thor_kitchen(path: Path, domain: Domain, seed: int) -> tuple[World, tuple[str, str, Formula]]:
    objects = read_scene(path)
    floor = next((o["position"] for o in objects.values() if o["objectType"] == "Floor"), {"x": 0.0, "z": 0.0})
    metadata = {"objects": list(objects.values()), "agent": {"position": floor}, "inventoryObjects": []}
    names = ThorNames(objects)
    observation = thor_observation(metadata, names, domain)
    world = observed_world(observation, domain)
    sink = next(i for i in sorted(objects) if objects[i]["objectType"] == "SinkBasin")
    fits = {f.args[0] for f in observation.facts() if f.predicate == "fits" and f.args[1] == names.name(sink)}
    inside = {names.name(i) for i in objects[sink].get("receptacleObjectIds") or ()}
    two = random.Random(f"{seed} {path.name}").sample(sorted(fits - inside), 2)
    goal = And(tuple(Atom("in_receptacle", (item, names.name(sink))) for item in two))
    return world, (f"{path.name.split('_')[0]}: put the {two[0]} and the {two[1]} in the sink", "thor", goal)


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def summarize(runs: Sequence[Run]) -> dict[str, dict[str, Any]]:
    """Per mode; costs and steps are totals over the tasks every mode solved, so they compare."""
    solved_by = {mode: {r.task for r in runs if r.mode == mode and r.status == "solved"} for mode in MODES}
    common = set.intersection(*solved_by.values())
    figures: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        mine = [r for r in runs if r.mode == mode]
        shared = [r for r in mine if r.task in common]
        figures[mode] = {
            "tasks": len(mine),
            "solved": len(solved_by[mode]),
            "valid": sum(r.valid for r in mine),
            "proven": sum(r.proven for r in mine),
            "common_tasks": len(common),
            "cost_total": round(sum(r.cost or 0.0 for r in shared), 1),
            "steps_total": sum(r.steps for r in shared),
            "seconds_median": _median([r.seconds for r in mine]),
            "seconds_max": round(max((r.seconds for r in mine), default=0.0), 3),
        }
    return figures


def gap(runs: Sequence[Run]) -> dict[str, Any]:
    """How often, and by how much, the optimum of the retrieved context costs more than the true one."""
    both = [r for r in runs if r.pruned_optimum is not None and r.full_optimum is not None]
    losses = [(r.pruned_optimum or 0.0) - (r.full_optimum or 0.0) for r in both]
    lost = [(loss, r.full_optimum or 0.0) for loss, r in zip(losses, both, strict=True) if loss > EPSILON]
    return {
        "optimal_runs": sum(r.mode == "optimal" for r in runs),
        "compared": len(both),  # tasks whose whole state was searched to the end
        "pruning_lost": len(lost),
        "loss_max": round(max((loss for loss, _ in lost), default=0.0), 3),
        "loss_max_share": round(max((loss / full for loss, full in lost if full), default=0.0), 4),
    }


def judge(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    runs = [r for scale in results.values() for r in scale["runs"]]
    solved = sum(r["status"] == "solved" for r in runs)
    invalid = sum(r["status"] == "solved" and not r["valid"] for r in runs)
    by_task: dict[tuple[str, str], dict[str, float]] = {}
    for r in runs:
        if r["status"] == "solved" and r["cost"] is not None:
            by_task.setdefault((r["task"], r["kind"]), {})[r["mode"]] = r["cost"]
    against = [c for c in by_task.values() if "optimal" in c and len(c) > 1]  # optimal and another mode solved
    dearer = sum(c["optimal"] > min(c.values()) + EPSILON for c in against)
    proven = sum(r["proven"] for r in runs)
    cheaper = sum(
        (c["optimal"] < c["satisficing"] - EPSILON) for c in by_task.values() if {"optimal", "satisficing"} <= set(c)
    )
    return {
        "valid": judged(
            "every plan returned runs and reaches the goal", f"{invalid} invalid", invalid == 0, samples=solved
        ),
        "optimal_cheapest": judged(
            "a proven or best-so-far optimal plan never costs more than another mode's",
            f"{dearer} dearer",
            dearer == 0,
            samples=len(against),
        ),
        "optimal_proven": judged("some optimal plans are proven for the whole state", proven, proven > 0),
        "optimal_saves": judged("optimal planning is cheaper than lama-first on some task", cheaper, cheaper > 0),
    }


def print_report(console: Console, results: dict[str, dict[str, Any]], targets: dict[str, dict[str, Any]]) -> None:
    table = Table(title="household-travel and thor-travel: plan cost (metres walked) and planning time")
    columns = ("home", "mode", "solved", "proven", "cost (all solved)", "steps (all solved)", "median s", "max s")
    for column in columns:
        table.add_column(column, justify="left" if column in ("home", "mode") else "right")
    for name, scale in results.items():
        for mode, m in scale["modes"].items():
            table.add_row(
                f"{name} ({scale['entities']:,})",
                mode,
                f"{m['solved']}/{m['tasks']}",
                str(m["proven"]),
                f"{m['cost_total']:.1f} ({m['common_tasks']})",
                str(m["steps_total"]),
                f"{m['seconds_median']:.2f}",
                f"{m['seconds_max']:.2f}",
            )
    console.print(table)
    rows = []
    for name, scale in results.items():
        g = scale["gap"]
        rows.append(
            (
                f"{name}: pruning lost / whole state searched to the end / optimal runs",
                f"{g['pruning_lost']} / {g['compared']} / {g['optimal_runs']}",
            )
        )
        rows.append((f"{name}: largest loss (metres, share)", f"{g['loss_max']} ({100 * g['loss_max_share']:.0f}%)"))
    rows += [(t["target"], f"{t['measured']}: {verdict_word(t)}") for t in targets.values()]
    console.print(measures_table("optimal from the retrieved context vs the whole state", rows))


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    console = Console()
    started = time.perf_counter()
    scales = {
        "paper": (HomeSpec(seed=args.seed), args.paper_tasks),
        f"{args.mid_entities:,} entities": (HomeSpec.scaled(args.mid_entities, seed=args.seed), args.mid_tasks),
    }
    results = {
        name: run_scale(name, spec, count, args, console) for name, (spec, count) in scales.items() if args.homes
    }
    if args.thor_scenes:
        results["AI2-THOR kitchens"] = run_thor(args, console)
    targets = judge(results)
    output = header("costs", args, machine_info()) | {
        "wall_s": round(time.perf_counter() - started, 1),
        "scales": results,
        "targets": targets,
    }
    write_results(args.out, output)
    print_report(console, results, targets)
    console.print(f"results written to {args.out} ({output['wall_s']} s)")
    return 0


BENCHMARK = Benchmark(name="costs", results=RESULTS / "costs.json", main=main)
