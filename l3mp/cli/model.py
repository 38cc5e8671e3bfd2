"""``l3mp model serve|list``: a local OpenAI-compatible model server (llama.cpp) with a packaged GGUF."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType

import click

from l3mp.cli._base import CliState, pass_state


@click.group()
def model() -> None:
    """A local language model (the `local` extra)."""


@model.command(name="list")
@pass_state
def list_(state: CliState, /) -> int:
    """The packaged models: name, whether installed, size, licence (and how to install the missing)."""
    from rich.table import Table

    from l3mp.llm.local import DEFAULT_MODEL, MODELS

    table = Table("model", "installed", "size", "kind", "ctx", "scoring", "licence", caption="* the default")
    table.columns[0].no_wrap = True  # a name to copy into --model
    missing = []
    for record in MODELS.values():
        name = f"{record.name} *" if record.name == DEFAULT_MODEL else record.name
        kind = "instruct" if record.instruct else "base"
        scoring = "on" if record.scores_by_default(record.ctx) else "off"
        installed = record.installed()
        size = f"{record.size / 1e6:.0f} MB"
        table.add_row(name, "yes" if installed else "no", size, kind, str(record.ctx), scoring, record.licence)
        if not installed:
            missing.append(f"  {record.name}: {record.install_command}")
    state.console.print(table)
    if missing:
        state.console.print("to install:\n" + "\n".join(missing), highlight=False)
    return 0


@model.command()
@click.option("--model", "name", metavar="NAME", help="a packaged model (`l3mp model list`); default: the registry's")
@click.option("--gguf", type=click.Path(path_type=Path, dir_okay=False), help="any GGUF file instead of a packaged one")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True)
@click.option("--ctx", type=click.IntRange(256), help="context size in tokens (default: the model's)")
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True)
@click.option(
    "--scoring/--no-scoring",
    default=None,
    help="token log-probabilities of prompts (logits_all: RAM per context token); default on where it stays small",
)
@click.option(
    "--cache-mb",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="a RAM cache of whole states, for requests that alternate between prefixes (0: prefix reuse only)",
)
@pass_state
def serve(
    state: CliState,
    /,
    name: str | None,
    gguf: Path | None,
    port: int,
    ctx: int | None,
    threads: int,
    scoring: bool | None,
    cache_mb: int,
) -> int:
    """Serve a GGUF model on 127.0.0.1 with llama.cpp's OpenAI-compatible server, until Ctrl-C."""
    from l3mp.llm.local import DEFAULT_CTX, DEFAULT_MODEL, LocalServer, UnknownModel, packaged_model

    if name is not None and gguf is not None:
        raise click.UsageError("give --model or --gguf, not both")
    try:
        record = packaged_model(name or DEFAULT_MODEL)
    except UnknownModel as exc:
        raise click.BadParameter(str(exc), param_hint="--model") from None
    if gguf is not None:  # a GGUF of unknown vocabulary: scoring only when asked for
        ctx = ctx or DEFAULT_CTX
        server = LocalServer(gguf=gguf, port=port, ctx=ctx, threads=threads, scoring=bool(scoring))
    else:
        ctx = ctx or record.ctx
        on = record.scores_by_default(ctx) if scoring is None else scoring
        server = LocalServer.of(record, port=port, ctx=ctx, threads=threads, scoring=on)
    server.cache_bytes = cache_mb << 20
    console = state.console
    console.print(
        f"starting llama.cpp on 127.0.0.1:{port} with {server.gguf.name} ({threads} thread(s), ctx {server.ctx}, "
        f"scoring {'on' if server.scoring else 'off'})"
    )
    server.start(quiet=False)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    console.print("ready; in another shell:", highlight=False)
    console.print(f"  export L3MP_LLM_BASE_URL={server.base_url} L3MP_LLM_MODEL={server.alias}", highlight=False)
    if server.scoring:
        console.print(f"scoring: POST {server.base_url}/score {{prompt, continuation}}", highlight=False)
    try:
        assert server.process is not None
        server.process.wait()
    except KeyboardInterrupt:
        console.print("stopping")
    finally:
        server.stop()
    return 0
