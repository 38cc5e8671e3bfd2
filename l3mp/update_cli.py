"""``l3mp init | update | observe | revert``: create a memory and change it from the command line.

    l3mp init home --domain household --sim-home 0     # a memory, optionally surveyed from a simulated home
    l3mp update home "Jessica turned off the laundry room light"   # through the configured model
    l3mp observe home observation.json                 # a perception snapshot (perception.Observation)
    l3mp revert home 3f2a...                           # undo an applied update with a new one

Exit codes: 0 applied (or nothing to change), 2 rejected (the reasons are printed), 1 errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from kg_memory import GraphStore, Update, UpdateStatus, WorldMemory
from l3mp.settings import Settings, configured_model

COMMANDS = ("init", "update", "observe", "revert")


def add_commands(commands: Any) -> None:
    init = commands.add_parser("init", help="create a memory (optionally surveyed from a simulated home)")
    init.add_argument("memory")
    init.add_argument("--domain", default="household")
    init.add_argument("--sim-home", type=int, metavar="SEED", help="survey a paper-scale simulated home")
    update = commands.add_parser("update", help="apply what someone said, through the language model")
    update.add_argument("memory")
    update.add_argument("text")
    update.add_argument("--retriever", choices=("full", "entities", "search"), default="search")
    update.add_argument("--no-verify", action="store_true", help="the paper's unverified variant (experiments)")
    observe = commands.add_parser("observe", help="apply a perception snapshot (JSON file, '-' for stdin)")
    observe.add_argument("memory")
    observe.add_argument("file")
    revert = commands.add_parser("revert", help="undo an applied update with a compensating one")
    revert.add_argument("memory")
    revert.add_argument("update_id")
    for sub in (init, update, observe, revert):
        sub.add_argument("--json", action="store_true", help="print the update as JSON")


def run(args: argparse.Namespace, store: GraphStore, settings: Settings, console: Console) -> int:
    if args.command == "init":
        return _init(args, store, console)
    memory = WorldMemory.open(store, args.memory)
    if args.command == "update":
        update = _update(args, memory, settings)
    elif args.command == "observe":
        from l3mp.updates import SensorUpdater
        from perception import Observation

        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
        update = SensorUpdater(memory).apply(Observation.from_json(text)).update
    else:
        update = memory.revert(args.update_id)
    return _report(update, args.json, console)


def _init(args: argparse.Namespace, store: GraphStore, console: Console) -> int:
    memory = WorldMemory.create(store, args.memory, args.domain)
    if args.sim_home is not None:
        from sim import HomeSpec, generate_home

        home = generate_home(HomeSpec(seed=args.sim_home))
        return _report(memory.add_entities(home.entities, facts=home.facts, input="survey"), args.json, console)
    console.print(f"created memory {memory.name!r} ({memory.domain.name}), empty")
    return 0


def _update(args: argparse.Namespace, memory: WorldMemory, settings: Settings) -> Update:
    from l3mp.updates import NLUpdateConfig, NLUpdater

    config = NLUpdateConfig(retriever=args.retriever, verify=not args.no_verify)
    return NLUpdater(memory, configured_model(settings), config).update(args.text).update


def _report(update: Update, as_json: bool, console: Console) -> int:
    if as_json:
        sys.stdout.write(json.dumps(update.to_json(), indent=2) + "\n")
    else:
        colour = {"applied": "green", "noop": "yellow"}.get(update.status.value, "red")
        console.print(f"[{colour}]{update.status.value}[/] update {update.id} -> version {update.version}")
        for fact in sorted(update.delta.remove, key=str):
            console.print(f"  - {fact}")
        for fact in sorted(update.delta.add, key=str):
            console.print(f"  + {fact}")
        for issue in update.issues:
            console.print(f"  ! {issue.message}")
    return 2 if update.status is UpdateStatus.REJECTED else 0
