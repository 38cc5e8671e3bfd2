"""``l3mp plan``: plan from a memory for a request in English, a PDDL goal, or a problem file's goal.

    l3mp plan "Bring the blue mug to Alice" --memory home      # through the configured model
    l3mp plan --memory home --goal "(held mug_1 robot_1)"      # no model
    l3mp plan --memory blocks --goal-file p01.pddl --json      # an IPC problem's goal, validated
                                                               # against that file as well

Exit codes: 0 solved, 2 not solved (unsolvable, timeout, invalid goal or request), 1 errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from kg_memory import GraphStore, WorldMemory
from l3mp.plans import PlanConfig, PlanReport, TaskPlanner
from l3mp.settings import Settings, configured_model
from planning import numbered
from retrieval import RETRIEVERS


def add_commands(commands: Any) -> None:
    plan = commands.add_parser("plan", help="plan from a memory: a request in English, --goal or --goal-file")
    plan.add_argument("request", nargs="?", default="", help="what to do, in English (needs a model)")
    plan.add_argument("--memory", required=True)
    source = plan.add_mutually_exclusive_group()
    source.add_argument("--goal", help="a PDDL goal formula")
    source.add_argument("--goal-file", type=Path, help="a PDDL problem file: plan for its :goal and validate on it")
    plan.add_argument("--retriever", choices=RETRIEVERS, default="search")
    plan.add_argument("--planner", default="fast-downward")
    plan.add_argument("--timeout", type=float, default=60.0, help="seconds per planner call")
    plan.add_argument("--no-full-state", action="store_true", help="never plan on the whole state")
    plan.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace, store: GraphStore, settings: Settings, console: Console) -> int:
    memory = WorldMemory.open(store, args.memory)
    config = PlanConfig(
        retriever=args.retriever, planner=args.planner, timeout=args.timeout, full_state=not args.no_full_state
    )
    original = args.goal_file.read_text(encoding="utf-8") if args.goal_file else None
    goal = args.goal if original is None else _goal_of(memory, original, args.goal_file)
    model = None if goal is not None else configured_model(settings)
    report = TaskPlanner(memory, model, config).plan(args.request, goal=goal)
    record = report.to_json()
    if original is not None and report.solved:
        from planning.validate import validate_plan

        record["validation"] = validate_plan(memory.domain.pddl, original, report.plan).to_json()
    if args.json:
        sys.stdout.write(json.dumps(record, indent=2) + "\n")
    else:
        _print(console, report, record)
    return 0 if report.solved else 2


def _goal_of(memory: WorldMemory, text: str, path: Path) -> str:
    from planning.pddl_io import read_problem

    return read_problem(memory.domain, text, str(path)).goal_text


def _print(console: Console, report: PlanReport, record: dict[str, Any]) -> None:
    colour = "green" if report.solved else "red"
    console.print(f"[{colour}]{report.status}[/]  goal: {report.goal or '-'}  tier: {report.tier or '-'}")
    if report.explanation:
        console.print(numbered(report.explanation))
    for issue in report.issues:
        console.print(f"  - {issue}")
    if "validation" in record:
        console.print(f"validated against the problem file: {record['validation']}")
    timings = ", ".join(f"{k} {v:.2f} s" for k, v in report.timings.items())
    console.print(f"[dim]{timings}[/]")
