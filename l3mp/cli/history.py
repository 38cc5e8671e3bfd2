"""The history from the command line: indexed queries, last seen, streaming export/import, compaction.

l3mp history home --entity mug_1 --since 7d --json     # one entity's week, a page as JSON
l3mp history home                                      # every update, one JSON document each
l3mp last-seen home mug_1
l3mp export home --jsonl --gzip -o home.jsonl.gz       # any size, streamed
l3mp import home.jsonl.gz --name copy                  # JSON Lines (gzipped or not) or the old JSON
l3mp compact home --before-version 100000              # opt-in retention
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

import click

from kg_memory import HistoryQuery, UpdateSource, UpdateStatus, WorldMemory
from kg_memory.errors import InvalidValue
from kg_memory.history import MAX_PAGE
from kg_memory.jsonl_stream import open_lines, parse_lines
from l3mp.cli._base import CliState, json_option, pass_state

_AGO = re.compile(r"^(\d+)([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
# a cursor is a sequence number, bounded as the REST routes bound it (and within SQLite's integers)
MAX_CURSOR = 2**53


def _when(text: str | None, option: str) -> datetime | None:
    """``7d``, ``12h``, ``30m`` ago, or an ISO 8601 time (UTC if it names no zone)."""
    if text is None:
        return None
    ago = _AGO.match(text.strip())
    try:
        if ago:
            return datetime.now(UTC) - timedelta(**{_UNITS[ago.group(2)]: int(ago.group(1))})
        when = datetime.fromisoformat(text)
    except OverflowError:  # before the year 1: no history reaches there
        raise click.BadParameter(f"{text!r} reaches before the year 1", param_hint=f"'{option}'") from None
    except ValueError:
        hint = "use e.g. 7d, 12h, 30m or an ISO time like 2025-05-01T08:00"
        raise click.BadParameter(f"{text!r}: {hint}", param_hint=f"'{option}'") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


@click.command()
@click.argument("memory")
@click.option("--entity", help="only updates that touched this entity")
@click.option("--since", help="at or after: 7d, 12h, 30m ago, or an ISO time")
@click.option("--until", help="before: same forms as --since")
@click.option("--source", type=click.Choice([s.value for s in UpdateSource]))
@click.option("--status", type=click.Choice([s.value for s in UpdateStatus]))
@click.option("--cursor", type=click.IntRange(0, MAX_CURSOR), default=0, help="next_cursor of the previous page")
@click.option("--limit", type=click.IntRange(1, MAX_PAGE), default=100, show_default=True)
@json_option
@pass_state
def history(
    state: CliState,
    memory: str,
    entity: str | None,
    since: str | None,
    until: str | None,
    source: str | None,
    status: str | None,
    cursor: int,
    limit: int,
    as_json: bool,
) -> int:
    """Show a memory's history: all of it, or one page of a query (through the store's indexes)."""
    filtered = any(v is not None for v in (entity, since, until, source, status)) or cursor or as_json
    with state.opened_store() as store:
        world = WorldMemory.open(store, memory)
        if not filtered:  # the whole log, as before
            for update in store.history(world.name):
                state.console.print_json(json.dumps(update.to_json()))
            return 0
        query = HistoryQuery(
            entity=entity,
            since=_when(since, "--since"),
            until=_when(until, "--until"),
            source=UpdateSource(source) if source else None,
            status=UpdateStatus(status) if status else None,
            after=cursor,
            limit=limit,
        )
        page = world.query_history(query)
        next_cursor = page[-1].seq if len(page) == limit else None
        if as_json:
            sys.stdout.write(json.dumps({"updates": [u.to_json() for u in page], "next_cursor": next_cursor}) + "\n")
            return 0
        for u in page:
            changes = ", ".join(
                [f"-{f}" for f in sorted(map(str, u.delta.remove))] + [f"+{f}" for f in sorted(map(str, u.delta.add))]
            )
            state.console.print(
                f"{u.time.isoformat(timespec='seconds')} v{u.version} {u.source.value} {u.status.value} {changes}",
                markup=False,
            )
        if next_cursor is not None:
            state.console.print(f"more: --cursor {next_cursor}", markup=False)
    return 0


@click.command("last-seen")
@click.argument("memory")
@click.argument("entity")
@json_option
@pass_state
def last_seen(state: CliState, memory: str, entity: str, as_json: bool) -> int:
    """When perception last saw an entity."""
    with state.opened_store() as store:
        found = WorldMemory.open(store, memory).last_seen(entity)
    if as_json:
        sys.stdout.write(json.dumps({"entity": entity, "update": found.to_json() if found else None}) + "\n")
    elif found is None:
        state.console.print(f"{entity} was never seen by perception", markup=False)
    else:
        state.console.print(
            f"{entity} last seen {found.time.isoformat(timespec='seconds')} (update {found.id})", markup=False
        )
    return 0


@click.command()
@click.argument("memory")
@click.option("--jsonl", is_flag=True, help="JSON Lines, streamed (any size); default: one JSON document")
@click.option("--gzip", "gzipped", is_flag=True, help="gzip the JSON Lines")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="write here, not stdout")
@pass_state
def export(state: CliState, memory: str, jsonl: bool, gzipped: bool, output: Path | None) -> int:
    """Print a memory (entities and history) as JSON, or stream it as JSON Lines."""
    if gzipped and (not jsonl or output is None):
        raise click.UsageError("--gzip needs --jsonl and --output")
    with state.opened_store() as store:
        world = WorldMemory.open(store, memory)
        if not jsonl:
            text = json.dumps(world.export(), indent=2) + "\n"
            (output.write_text(text, encoding="utf-8") if output else sys.stdout.write(text))
            return 0
        if output is None:
            sys.stdout.writelines(world.export_lines())
            return 0
        with gzip.open(output, "wt", encoding="utf-8") if gzipped else output.open("w", encoding="utf-8") as out:
            out.writelines(world.export_lines())
    return 0


@click.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--name", help="import under this name")
@pass_state
def import_(state: CliState, file: Path, name: str | None) -> int:
    """Import a memory: JSON Lines (gzipped or not, streamed) or the one-document JSON export."""
    jsonl = _is_jsonl(file)
    with open_lines(file) as lines, state.opened_store() as store:
        try:
            if jsonl:
                world = WorldMemory.import_lines(store, lines, name)
            else:
                world = WorldMemory.import_(store, _document(file, lines), name)
        except InvalidValue as exc:  # the file's content: say which file
            raise click.ClickException(f"{file}: {exc}") from None
        state.console.print(f"imported {world.name!r} at version {world.version}", markup=False)
    return 0


def _is_jsonl(file: Path) -> bool:
    """Whether the first line is a JSON Lines export's header. One that cannot be read, or is no JSON
    object, says no: the one-document export's first line is "{", and its reading says what is wrong
    (read anew: a gzip reader that failed reads nothing more)."""
    try:
        with open_lines(file) as lines:
            header = next(parse_lines(itertools.islice(lines, 1)), None)
    except InvalidValue:
        return False
    form = header.get("format") if header else None
    return isinstance(form, str) and form.endswith("jsonl/1")


def _document(file: Path, lines: IO[str]) -> Any:
    """The one-document export, read by the library's line parser as one line: a file that is not
    UTF-8, not whole gzip, or JSON nested too deeply is its InvalidValue."""
    try:
        found = next(parse_lines(_whole(lines)), None)
    except InvalidValue as exc:
        if isinstance(exc.__cause__, json.JSONDecodeError):
            raise click.ClickException(f"{file} is neither JSON Lines nor JSON: {exc.__cause__}") from None
        raise
    if found is None:
        raise click.ClickException(f"{file} is empty")
    return found


def _whole(lines: IO[str]) -> Iterator[str]:
    yield lines.read()


@click.command()
@click.argument("memory")
@click.option("--before-version", type=click.IntRange(min=1), required=True, help="drop the history up to here")
@json_option
@pass_state
def compact(state: CliState, memory: str, before_version: int, as_json: bool) -> int:
    """Opt-in retention: fold the history up to a version into a checkpoint and per-entity summaries."""
    with state.opened_store() as store:
        note = WorldMemory.open(store, memory).compact(before_version)
    if as_json:
        sys.stdout.write(json.dumps(note.to_json()) + "\n")
    else:
        done = note.meta["compaction"]
        state.console.print(
            f"compacted {done['updates_removed']} updates up to version {done['horizon']}", markup=False
        )
    return 0
