"""``l3mp model serve``: a local OpenAI-compatible model server (llama.cpp, the packaged SmolLM2)."""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType

import click

from l3mp.cli._base import CliState, pass_state


@click.group()
def model() -> None:
    """A local language model (the `local` extra)."""


@model.command()
@click.option("--gguf", type=click.Path(path_type=Path, dir_okay=False), help="default: the packaged SmolLM2-135M")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True)
@click.option("--ctx", type=click.IntRange(256), default=8192, show_default=True, help="context size in tokens")
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True)
@pass_state
def serve(state: CliState, /, gguf: Path | None, port: int, ctx: int, threads: int) -> int:
    """Serve a GGUF model on 127.0.0.1 with llama.cpp's OpenAI-compatible server, until Ctrl-C."""
    from l3mp.llm.local import LocalServer, packaged_gguf

    server = LocalServer(gguf=gguf or packaged_gguf(), port=port, ctx=ctx, threads=threads)
    console = state.console
    console.print(f"starting llama.cpp on 127.0.0.1:{port} with {server.gguf.name} ({threads} thread(s), ctx {ctx})")
    server.start(quiet=False)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    console.print("ready; in another shell:", highlight=False)
    console.print(f"  export L3MP_LLM_BASE_URL={server.base_url} L3MP_LLM_MODEL={server.alias}", highlight=False)
    try:
        assert server.process is not None
        server.process.wait()
    except KeyboardInterrupt:
        console.print("stopping")
    finally:
        server.stop()
    return 0
