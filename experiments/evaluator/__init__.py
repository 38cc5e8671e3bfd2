"""Action evaluator benchmark: random applicable actions checked and applied on a big household.

The home is the simulator's own (``sim.household.generate_home`` of ``HomeSpec.scaled``, topped up
with items to exactly ``--entities``): rooms joined by hallways, each furnished by its kind, people
and items, a valid state under the ``household`` rules. It is loaded into a :class:`planning.World`.
Then, one at a time, a random action kind is drawn and bound in the current state (a room next door,
an item on a receptacle in the robot's room, the held item, a closed washer here...), and
``ActionEvaluator.execute`` (check, then apply) runs it. Only ``execute`` is timed. Finally the whole
walk is re-run as one plan by ``ActionEvaluator.validate`` on the start state, which must end in the
same state.

    python -m experiments evaluator [--entities 10000] [--actions 10000] [--seed 7]
        [--out experiments/results/evaluator.json]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from rich.console import Console

from experiments.evaluator.walk import DOMAIN, describe_home, home_spec, print_report, replay, summarize, walk
from experiments.harness import (
    RESULTS,
    Benchmark,
    add_gc_argument,
    header,
    judged,
    machine_info,
    single_target,
    timed,
    write_results,
)
from kg_memory import DomainRegistry
from l3mp.gc_freeze import gc_frozen
from planning import ActionEvaluator, World
from sim.household import generate_home

TARGET_SECONDS = 2.0  # for 10,000 actions on 10,000 entities


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--actions", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    add_gc_argument(parser, help="leave the home's objects to the collector")
    args = parser.parse_args(argv)
    if args.entities < 200 or args.actions < 1:
        parser.error("use --entities >= 200 and --actions >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 1 if the evaluator refused a chosen action or the replay disagrees (a bug), else 0."""
    args = parse_args(argv)
    console = Console()
    domain = DomainRegistry().get(DOMAIN)
    elapsed, home = timed(lambda: generate_home(home_spec(args.entities, args.seed)))
    world = World(domain, home.entities, home.facts)
    evaluator = ActionEvaluator(domain)
    console.print(f"household: {len(home.entities):,} entities, {len(world):,} facts (generated in {elapsed:.1f} s)")
    with gc_frozen(not args.no_gc_freeze):
        result = walk(evaluator, world, home, args.actions, args.seed)
    run = summarize(result)
    scaled = round(run["seconds"] * 10_000 / args.actions, 4)
    results: dict[str, Any] = {
        **header("evaluator", args, machine_info()),
        "home": describe_home(home, world),
        "walk": run,
        "target": {
            **judged(f"< {TARGET_SECONDS} s", scaled, scaled < TARGET_SECONDS and not result.refused),
            "actions": 10_000,
            "entities": 10_000,
            "seconds": TARGET_SECONDS,
            "scaled_seconds": scaled,
        },
        "validate": replay(evaluator, domain, home, result, world),
    }
    write_results(args.out, results)
    print_report(console, results)
    for reason in result.refused[:5]:
        console.print(f"[red]refused:[/] {reason}", highlight=False)
    console.print(f"results written to {args.out}")
    return 0 if not result.refused and results["validate"]["same_final_state"] else 1


BENCHMARK = Benchmark(
    name="evaluator", results=RESULTS / "evaluator.json", main=main, targets=single_target("10,000 actions, s")
)

__all__ = ["BENCHMARK", "main"]
