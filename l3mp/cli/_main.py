"""The root group, the registry of commands and the one place errors become messages and exit codes."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape

from l3mp.cli._base import CliState, Lazy, LazyGroup, debugging, driver_logs_quiet

if TYPE_CHECKING:
    from kg_memory.errors import StoreUnavailable

# Every command by name. The lab's (the simulator, the experiments) are named here and imported only
# when run: the product never imports them (import-linter holds this).
COMMANDS: dict[str, Lazy] = {
    "memories": Lazy("l3mp.cli.memory:memories", "list the memories in the store"),
    "state": Lazy("l3mp.cli.memory:state", "show a memory's current state"),
    "history": Lazy("l3mp.cli.history:history", "show a memory's history, or a page of a query (--entity, --since)"),
    "last-seen": Lazy("l3mp.cli.history:last_seen", "when perception last saw an entity"),
    "export": Lazy("l3mp.cli.history:export", "print a memory as JSON, or stream it as JSON Lines (--jsonl)"),
    "import": Lazy("l3mp.cli.history:import_", "import a memory exported as JSON Lines or JSON"),
    "compact": Lazy("l3mp.cli.history:compact", "opt-in retention: compact the history before a version"),
    "init": Lazy("l3mp.cli.memory:init", "create a memory (optionally surveyed from a simulated home)"),
    "update": Lazy("l3mp.cli.memory:update", "apply what someone said, through the language model"),
    "observe": Lazy("l3mp.cli.memory:observe", "apply a perception snapshot (JSON file, '-' for stdin)"),
    "revert": Lazy("l3mp.cli.memory:revert", "undo an applied update with a compensating one"),
    "plan": Lazy("l3mp.cli.plan:plan", "plan from a memory: a request in English, --goal or --goal-file"),
    "pddl": Lazy("l3mp.cli.pddl:pddl", "PDDL problems (e.g. IPC benchmarks) into memories"),
    "serve": Lazy("l3mp.cli.serve:serve", "run the REST service (OpenAPI at /docs)"),
    "mcp": Lazy("l3mp.cli.mcp:mcp", "serve agents over stdio (MCP); `l3mp serve` has /mcp"),
    "ros": Lazy("l3mp.cli.ros:ros", "serve a memory to ROS 2 over rmw_zenoh (PlanSys2's problem expert)"),
    "model": Lazy("l3mp.cli.model:model", "a local language model: `l3mp model serve` (the local extra)"),
    # the lab
    "sim": Lazy("sim.cli:sim", "the text household simulator"),
    "demo": Lazy("sim.cli:demo", "the robot runtime on a fresh paper-scale simulated home (under 5 minutes)"),
    "daemon": Lazy("sim.cli:daemon", "run the robot runtime against the text household simulator"),
    "thor": Lazy("sim.thor.cli:thor", "AI2-THOR: import scenes, replay recorded sessions through the real Controller"),
    "bench": Lazy("experiments.cli:bench", "experiments and benchmarks (the paper's and ours): tables and JSON"),
}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--store", type=click.Choice(["sqlite", "neo4j"]), help="backend (default: L3MP_STORE or sqlite)")
@click.option("--db", type=click.Path(path_type=Path), help="SQLite file (default: L3MP_SQLITE_PATH or l3mp.db)")
@click.pass_context
def root(ctx: click.Context, store: str | None, db: Path | None) -> None:
    """A lifelong world-state memory for service robots."""
    ctx.obj = CliState(store=store, db=db)
    ctx.with_resource(driver_logs_quiet())  # until the command ends, for every way of opening a store


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit code (0 done, 2 refused or misused, 1 errors). Errors go to
    stderr, so a command's output (an export, the MCP protocol) never carries them."""
    console = Console(stderr=True)
    try:
        result = root.main(args=list(sys.argv[1:] if argv is None else argv), standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        console.print("[red]aborted[/]")
        return 1
    except click.UsageError as exc:
        exc.show()
        return exc.exit_code
    except click.ClickException as exc:  # a command's findings about its input, one problem a line
        for line in exc.format_message().splitlines():
            _error(console, line)
        return exc.exit_code
    except Exception as exc:
        if _expected(exc):
            _error(console, _message(exc))
            return 1
        if debugging():
            raise
        # a bug of ours: one line for the user, the traceback on request
        console.print(
            f"[red]internal error:[/] {type(exc).__name__}: {escape(_one_line(str(exc)))} "
            "(L3MP_DEBUG=1 shows the traceback)",
            highlight=False,
            soft_wrap=True,
        )
        return 1
    return result if isinstance(result, int) else 0


def _error(console: Console, message: str) -> None:
    console.print(f"[red]error:[/] {escape(_one_line(message))}", highlight=False, soft_wrap=True)


def _one_line(text: str) -> str:
    """A message on one line: drivers write theirs over several."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _expected(exc: Exception) -> bool:
    """Errors a user can act on: the library's own, and a file that cannot be read or written."""
    from kg_memory.errors import L3mpError  # loaded here: --help never needs it

    return isinstance(exc, L3mpError | OSError)


def _message(exc: Exception) -> str:
    """The error's own words; for a Neo4j store it cannot use, first the settings to check."""
    from kg_memory.errors import StoreUnavailable

    if isinstance(exc, StoreUnavailable) and exc.backend == "neo4j":
        return f"{', '.join(_neo4j_settings(exc))}: {exc}"
    return str(exc)


def _neo4j_settings(exc: StoreUnavailable) -> list[str]:
    """Where the database is and, when it refused the login, who logs in."""
    if exc.login_refused:
        return ["L3MP_NEO4J_URI", "L3MP_NEO4J_USER", "L3MP_NEO4J_PASSWORD"]
    return ["L3MP_NEO4J_URI"]
