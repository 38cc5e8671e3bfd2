"""The ``l3mp`` command."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kg_memory import GraphStore, L3mpError, WorldMemory
from l3mp import bench_cli, daemon_cli, pddl_cli, plan_cli, serve_cli, sim_cli, update_cli
from l3mp.settings import Settings
from l3mp.stores import open_store


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="l3mp", description="A lifelong world-state memory for service robots.")
    parser.add_argument("--store", choices=("sqlite", "neo4j"), help="backend (default: L3MP_STORE or sqlite)")
    parser.add_argument("--db", type=Path, help="SQLite file (default: L3MP_SQLITE_PATH or l3mp.db)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("memories", help="list the memories in the store")
    for name, text in (
        ("state", "show a memory's current state"),
        ("history", "show a memory's history"),
        ("export", "print a memory as JSON"),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("memory")
        if name == "state":
            sub.add_argument("--json", action="store_true", help="print the facts as JSON")
    sub = commands.add_parser("import", help="import a memory exported as JSON")
    sub.add_argument("file", type=Path)
    sub.add_argument("--name", help="import under this name")
    sim_cli.add_commands(commands)
    bench_cli.add_commands(commands)
    pddl_cli.add_commands(commands)
    plan_cli.add_commands(commands)
    update_cli.add_commands(commands)
    serve_cli.add_commands(commands)
    daemon_cli.add_commands(commands)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, object] = {}
    if args.store:
        overrides["store"] = args.store
    if args.db:
        overrides["sqlite_path"] = args.db
    elif args.command == "demo" and not args.store:
        overrides["sqlite_path"] = Path(".l3mp/demo.db")
    return Settings(**overrides)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console()
    try:
        if args.command == "sim":  # the simulator needs no store
            sim_cli.run(args, console)
            return 0
        if args.command == "bench":  # the benchmark opens its own stores
            bench_cli.run(args, console)
            return 0
        if args.command == "serve":  # the service opens its store in its lifespan
            return serve_cli.run(args, _settings(args))
        if args.command == "pddl":  # installs the domain before it opens the store
            pddl_cli.run(args, _settings(args), console)
            return 0
        settings = _settings(args)
        store = open_store(settings)
        try:
            if args.command == "plan":
                return plan_cli.run(args, store, settings, console)
            if args.command in ("demo", "daemon"):
                return daemon_cli.run(args, store, settings, console)
            if args.command in update_cli.COMMANDS:
                return update_cli.run(args, store, settings, console)
            _run(args, store, console)
        finally:
            store.close()
    except L3mpError as exc:
        console.print(f"[red]error:[/] {exc}")
        return 1
    return 0


def _run(args: argparse.Namespace, store: GraphStore, console: Console) -> None:
    if args.command == "memories":
        table = Table("name", "domain", "version", "created")
        for m in store.list_memories():
            table.add_row(m.name, m.domain, str(m.version), m.created.isoformat(timespec="seconds"))
        console.print(table)
    elif args.command == "state":
        memory = WorldMemory.open(store, args.memory)
        if args.json:
            state = memory.state()
            facts = sorted(str(f) for f in state.facts)
            sys.stdout.write(json.dumps({"memory": memory.name, "version": state.version, "facts": facts}) + "\n")
            return
        for fact in sorted(memory.state().facts, key=str):
            console.print(fact.display(), memory.domain.language.fact(fact), sep="  ")
    elif args.command == "history":
        for update in store.history(args.memory):
            console.print_json(json.dumps(update.to_json()))
    elif args.command == "export":
        sys.stdout.write(json.dumps(WorldMemory.open(store, args.memory).export(), indent=2) + "\n")
    elif args.command == "import":
        memory = WorldMemory.import_(store, json.loads(args.file.read_text()), args.name)
        console.print(f"imported {memory.name!r} at version {memory.version}")
