"""What every command shares: the lazily loaded command groups, the global options, settings built
with one precedence rule (flag > ``L3MP_*`` environment > default), the console and the store."""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

if TYPE_CHECKING:
    from kg_memory import GraphStore
    from l3mp.settings import Settings


@dataclass(frozen=True, slots=True)
class Lazy:
    """A command imported only when it runs: ``"module:attribute"`` and the line ``--help`` shows."""

    target: str
    help: str


class LazyGroup(click.Group):
    """A group whose commands are imported by name when used, so ``--help`` and light commands never
    pay for torch, sentence-transformers or unified-planning, and the product names the lab's
    commands (``sim``, ``bench``, ...) without importing the lab."""

    def __init__(self, *args: Any, lazy: Mapping[str, Lazy] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            self.add_command(_load(self.lazy[cmd_name].target), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy and name not in self.commands:
                rows.append((name, self.lazy[name].help))
            elif (command := self.commands.get(name)) is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(formatter.width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _load(target: str) -> click.Command:
    module, _, attribute = target.partition(":")
    command = getattr(importlib.import_module(module), attribute)
    if not isinstance(command, click.Command):
        raise TypeError(f"{target} is not a click command")
    return command


@dataclass
class CliState:
    """The global options, and the console commands print to."""

    store: str | None = None
    db: Path | None = None
    console: Console = field(default_factory=Console)

    def settings(self, **defaults: Any) -> Settings:
        """Settings from the flags given, then ``L3MP_*``, then ``defaults``, then the built-in defaults."""
        from pydantic import ValidationError
        from pydantic_settings import SettingsError

        from l3mp.settings import Settings, problems

        flags: dict[str, Any] = {k: v for k, v in (("store", self.store), ("sqlite_path", self.db)) if v is not None}
        try:
            settings = Settings(**flags)
        except (ValidationError, SettingsError) as exc:  # the user's environment, not a bug
            raise click.ClickException("\n".join(problems(exc))) from None
        unset = {k: v for k, v in defaults.items() if k not in settings.model_fields_set}
        return settings.model_copy(update=unset) if unset else settings

    @contextlib.contextmanager
    def opened_store(self, settings: Settings | None = None) -> Iterator[GraphStore]:
        from l3mp.wiring import open_store

        store = open_store(settings or self.settings())
        try:
            yield store
        finally:
            store.close()


def debugging() -> bool:
    """``L3MP_DEBUG`` set: what the CLI keeps from the user is shown (a traceback, the drivers' logs)."""
    return bool(os.environ.get("L3MP_DEBUG"))


@contextlib.contextmanager
def driver_logs_quiet() -> Iterator[None]:
    """The Neo4j driver's logs off while a command runs, whichever way it opens the store: the driver
    logs each retry and each refused connection over several lines, and a command that gives up says
    why in its one error line. ``L3MP_DEBUG`` leaves them as logging is configured."""
    if debugging():
        yield
        return
    logger = logging.getLogger("neo4j")  # the parent of the driver's own (neo4j.pool, neo4j.io, ...)
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


pass_state = click.make_pass_decorator(CliState)
json_option = click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
