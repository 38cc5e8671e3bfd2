"""MkDocs hook: the reference pages that are read off the code when the site is built, so they cannot go
stale. The REST reference comes from the service's own OpenAPI document (also published beside the page
as ``openapi.json``); the CLI reference from the ``l3mp`` command's ``--help``, command by command; the
list of settings from ``Settings``' fields; the import contracts from ``pyproject.toml``.

A page asks for one with a marker line: ``<!-- generated: rest -->``, ``<!-- generated: cli -->``,
``<!-- generated: settings -->`` or ``<!-- generated: contracts -->``.
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import click
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
OPENAPI_PATH = "reference/openapi.json"
METHODS = ("get", "head", "post", "put", "patch", "delete")


@cache
def openapi() -> dict[str, Any]:
    """The service's OpenAPI document, from an app over a throwaway store (nothing is served)."""
    from l3mp.service import create_app
    from l3mp.settings import Settings

    with tempfile.TemporaryDirectory(prefix="l3mp-docs-") as tmp:
        document: dict[str, Any] = create_app(Settings(sqlite_path=Path(tmp) / "docs.db")).openapi()
    return document


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rest_reference() -> str:
    """One table per group of routes: method, path and what the route's docstring says."""
    groups: dict[str, list[str]] = {}
    for path, operations in openapi()["paths"].items():
        group = "Dashboard" if path.startswith("/dashboard") else "Memories" if path.startswith("/v1") else "Probes"
        for method in METHODS:
            if (operation := operations.get(method)) is not None:
                what = operation.get("description") or operation.get("summary", "")
                groups.setdefault(group, []).append(f"| `{method.upper()}` | `{path}` | {_cell(what)} |")
    return "\n\n".join(
        f"### {group}\n\n| method | path | what it does |\n| --- | --- | --- |\n" + "\n".join(rows)
        for group, rows in groups.items()
    )


def cli_reference() -> str:
    """Every command's ``--help``, the groups' subcommands included, in the order ``l3mp --help`` lists them."""
    from l3mp.cli import root

    sections: list[str] = []

    def visit(command: click.Command, ctx: click.Context) -> None:
        name = ctx.command_path
        sections.append(f"### `{name}`\n\n```text\n{command.get_help(ctx)}\n```")
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                found = command.get_command(ctx, sub)
                if found is not None and not found.hidden:
                    visit(found, click.Context(found, info_name=sub, parent=ctx, terminal_width=100))

    visit(root, click.Context(root, info_name="l3mp", terminal_width=100))
    return "\n\n".join(sections)


def _type(annotation: Any) -> str:
    """``float``, ``str | None``, ``'sqlite' | 'neo4j'``: a field's type as a reader would write it."""
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type):
        return annotation.__name__
    if get_origin(annotation) is Literal:
        return " | ".join(repr(value) for value in get_args(annotation))
    return " | ".join(_type(arg) for arg in get_args(annotation)) or str(annotation)


def settings_reference() -> str:
    """Every ``L3MP_*`` variable with its type and default (secrets show none)."""
    from l3mp.settings import Settings

    rows = []
    for name, field in Settings.model_fields.items():
        kind = _type(field.annotation)
        default = "" if field.is_required() or "Secret" in kind else f"`{field.default}`"
        rows.append(f"| `L3MP_{name.upper()}` | {_cell(kind)} | {default} |")
    return "| variable | type | default |\n| --- | --- | --- |\n" + "\n".join(rows)


def contracts_reference() -> str:
    """The import-linter contracts ``make test`` holds, as pyproject.toml states them."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    items = []
    for contract in pyproject["tool"]["importlinter"]["contracts"]:
        inside = f" (inside `{'`, `'.join(contract['containers'])}`)" if "containers" in contract else ""
        if contract["type"] == "layers":
            rule = "layers, top to bottom" + inside + ": " + " → ".join(f"`{layer}`" for layer in contract["layers"])
        else:
            sources, forbidden = contract["source_modules"], contract["forbidden_modules"]
            how = "directly " if contract.get("allow_indirect_imports") else ""
            rule = f"`{'`, `'.join(sources)}` never {how}import `{'`, `'.join(forbidden)}`"
        items.append(f"- **{contract['name']}**: {rule}")
    return "\n".join(items)


GENERATORS = {
    "<!-- generated: rest -->": rest_reference,
    "<!-- generated: cli -->": cli_reference,
    "<!-- generated: settings -->": settings_reference,
    "<!-- generated: contracts -->": contracts_reference,
}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, OPENAPI_PATH, content=json.dumps(openapi(), indent=2)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    for marker, generate in GENERATORS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
