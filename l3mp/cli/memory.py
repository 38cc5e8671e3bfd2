"""Memories from the command line: list and show; create, change and delete one (history, export and
import are in ``l3mp.cli.history``).

    l3mp init home --domain household --sim-home 0     # a memory, optionally surveyed from a simulated home
    l3mp memories delete stuck --abandoned-import      # the hidden memory a killed import left: gone
    l3mp update home "Jessica turned off the laundry room light"   # through the configured model
    l3mp observe home observation.json                 # a perception snapshot (perception.Observation)
    l3mp revert home 3f2a...                           # undo an applied update with a new one

Exit codes: 0 applied (or nothing to change), 2 rejected (the reasons are printed), 1 errors.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from kg_memory import Fact, Update, UpdateStatus, WorldMemory
from kg_memory.model import normalise_name
from l3mp.cli._base import CliState, json_option, pass_state
from retrieval.retrievers import RETRIEVERS

if TYPE_CHECKING:
    from pydantic import ValidationError

    from l3mp.operations import Operations
    from perception import Observation

# The simulated home `init --sim-home` surveys is the lab's: named here, imported only when asked for.
SIM_HOME = "sim.survey:surveyed_home"
_TIMES = ["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"]


@click.group(invoke_without_command=True)
@pass_state
def memories(state: CliState) -> int:
    """List the memories in the store (or delete one: memories delete NAME)."""
    if click.get_current_context().invoked_subcommand is not None:
        return 0
    with state.opened_store() as store:
        table = Table("name", "domain", "version", "created")
        for m in store.list_memories():
            table.add_row(m.name, m.domain, str(m.version), m.created.isoformat(timespec="seconds"))
        state.console.print(table)
    return 0


@memories.command()
@click.argument("memory")
@click.option(
    "--abandoned-import",
    is_flag=True,
    help="delete only the hidden memory an import left when its process stopped",
)
@click.option("--yes", is_flag=True, help="delete without asking first")
@pass_state
def delete(state: CliState, memory: str, abandoned_import: bool, yes: bool) -> int:
    """Delete a memory with its state and its whole history, freeing its name.

    Writes still under way to it fail and write nothing. Nothing brings it back, so it asks first
    unless --yes. With --abandoned-import, only the hidden memory an import left when its process
    stopped is deleted."""
    name = normalise_name(memory)
    if not yes:
        click.confirm(f"delete memory {name!r}, its state and its whole history?", abort=True, err=True)
    with _operations(state) as operations:
        operations.delete_memory(name, abandoned_import=abandoned_import)
    state.console.print(f"deleted memory {name!r}", markup=False)
    return 0


@click.command()
@click.argument("memory")
@click.option("--version", type=click.IntRange(min=0), default=None, help="the state at this past version")
@click.option("--at", type=click.DateTime(_TIMES), default=None, help="the state at this time (UTC unless given)")
@json_option
@pass_state
def state(state: CliState, memory: str, version: int | None, at: datetime | None, as_json: bool) -> int:
    """Show a memory's state: now, at a past version, or as it was at a time."""
    with _operations(state) as operations:
        when = at if at is None or at.tzinfo else at.replace(tzinfo=UTC)
        shown = operations.state(memory, version=version, at=when)
        if as_json:
            sys.stdout.write(shown.model_dump_json() + "\n")
            return 0
        language = WorldMemory.open(operations.services.store, memory).domain.language
        for text in shown.facts:
            fact = Fact.parse(text)
            state.console.print(fact.display(), language.fact(fact), sep="  ", markup=False)
        for name in shown.unknown_location:
            state.console.print(f"{name}  location unknown", markup=False)
    return 0


@contextlib.contextmanager
def _operations(state: CliState) -> Iterator[Operations]:
    """The operations over the configured store, for one command."""
    from l3mp.operations import Operations, Services

    settings = state.settings()
    with state.opened_store(settings) as store:
        services = Services(settings=settings, store=store)
        try:
            yield Operations(services=services)
        finally:
            services.gate.close()


@click.command()
@click.argument("memory")
@click.option("--domain", default="household", show_default=True)
@click.option("--sim-home", type=int, metavar="SEED", help="survey a paper-scale simulated home")
@json_option
@pass_state
def init(state: CliState, memory: str, domain: str, sim_home: int | None, as_json: bool) -> int:
    """Create a memory (optionally surveyed from a simulated home)."""
    with state.opened_store() as store:
        if sim_home is None:
            world = WorldMemory.create(store, memory, domain)
            state.console.print(f"created memory {world.name!r} ({world.domain.name}), empty")
            return 0
        module, _, attribute = SIM_HOME.partition(":")
        entities, facts = getattr(importlib.import_module(module), attribute)(sim_home, store.domains.get(domain))
        world = WorldMemory.create(store, memory, domain)
        try:
            update = world.add_entities(entities, facts=facts, input="survey")
        except BaseException:
            store.delete_memory(world.name)
            raise
        if update.status is UpdateStatus.REJECTED:  # no memory is left behind: a retry finds the name free
            store.delete_memory(world.name)
        code = _report(state, update, as_json)
        if update.status is UpdateStatus.REJECTED and not as_json:
            state.console.print(f"memory {world.name!r} not created: its survey was rejected", markup=False)
        return code


@click.command()
@click.argument("memory")
@click.argument("text")
@click.option("--retriever", type=click.Choice(RETRIEVERS), help="default: L3MP_RETRIEVER or search")
@click.option("--no-verify", is_flag=True, help="the paper's unverified variant (default: L3MP_VERIFY_UPDATES)")
@json_option
@pass_state
def update(state: CliState, memory: str, text: str, retriever: str | None, no_verify: bool, as_json: bool) -> int:
    """Apply what someone said, through the language model."""
    from l3mp.pipelines import NLUpdateConfig, NLUpdater
    from l3mp.wiring import configured_model

    settings = state.settings()
    config = NLUpdateConfig.from_settings(settings, retriever=retriever, verify=not no_verify)
    with state.opened_store(settings) as store:
        world = WorldMemory.open(store, memory)
        return _report(state, NLUpdater(world, configured_model(settings), config).update(text).update, as_json)


@click.command()
@click.argument("memory")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@json_option
@pass_state
def observe(state: CliState, memory: str, file: str, as_json: bool) -> int:
    """Apply a perception snapshot (a JSON file, '-' for stdin)."""
    from l3mp.pipelines import SensorUpdater

    observation = _observation(file)
    with state.opened_store() as store:
        world = WorldMemory.open(store, memory)
        return _report(state, SensorUpdater(world).apply(observation).update, as_json)


def _observation(file: str) -> Observation:
    """The observation in ``file`` ('-': stdin); a file that is not one is the user's error, named."""
    from pydantic import ValidationError

    from perception import Observation

    where = "stdin" if file == "-" else file
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
        if not data.strip():
            raise click.ClickException(f"{where}: empty, not an observation")
        return Observation.from_json(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except ValidationError as exc:
        raise click.ClickException(f"{where}: not an observation: {_validation(exc)}") from None


def _validation(exc: ValidationError) -> str:
    """pydantic's findings on one line: where in the document, and what is wrong there."""
    found = []
    for error in exc.errors():
        message = str(error["ctx"]["error"]) if error["type"] == "value_error" else error["msg"]
        where = ".".join(map(str, error["loc"]))
        found.append(f"{where}: {message}" if where else message)
    return "; ".join(found)


@click.command()
@click.argument("memory")
@click.argument("update_id")
@json_option
@pass_state
def revert(state: CliState, memory: str, update_id: str, as_json: bool) -> int:
    """Undo an applied update with a compensating one."""
    with state.opened_store() as store:
        return _report(state, WorldMemory.open(store, memory).revert(update_id), as_json)


def _report(state: CliState, update: Update, as_json: bool) -> int:
    if as_json:
        sys.stdout.write(json.dumps(update.to_json(), indent=2) + "\n")
    else:
        console = state.console
        colour = {"applied": "green", "noop": "yellow"}.get(update.status.value, "red")
        console.print(f"[{colour}]{update.status.value}[/] update {update.id} -> version {update.version}")
        for fact in sorted(update.delta.remove, key=str):
            console.print(f"  - {escape(str(fact))}")
        for fact in sorted(update.delta.add, key=str):
            console.print(f"  + {escape(str(fact))}")
        for issue in update.issues:
            console.print(f"  ! {escape(issue.message)}")
    return 2 if update.status is UpdateStatus.REJECTED else 0
