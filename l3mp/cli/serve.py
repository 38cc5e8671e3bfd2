"""``l3mp serve``: the REST service (``l3mp.service``) under uvicorn, on the configured store."""

from __future__ import annotations

import click

from l3mp.cli._base import CliState, pass_state


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--access-log", is_flag=True, help="log every request (costs throughput)")
@click.option(
    "--root-path",
    default="",
    callback=lambda _ctx, _param, value: _root_path(value),
    help="the path a reverse proxy serves the service under, taking it off before it forwards (/robots/home)",
)
@pass_state
def serve(state: CliState, host: str, port: int, access_log: bool, root_path: str) -> int:
    """Run the REST service (OpenAPI at /docs, the dashboard at /)."""
    import sys

    import uvicorn

    from l3mp.service import create_app

    settings = state.settings()
    # the store is opened once here, so one it cannot open is a one-line error, not a traceback of
    # uvicorn's start-up (the service opens its own when it starts)
    with state.opened_store(settings):
        pass
    # The event loop (health, reads) shares the GIL with the model slots' threads, which build
    # contexts in pure Python; a 1 ms switch interval (default 5 ms) bounds its wait for the GIL.
    sys.setswitchinterval(0.001)
    # one line per request cost ~10% of throughput under load (experiments/service.py); off by default
    uvicorn.run(
        create_app(settings), host=host, port=port, log_level="info", access_log=access_log, root_path=root_path
    )
    return 0


def _root_path(value: str) -> str:
    """``value`` as ASGI's ``root_path``: empty, or ``/`` and segments with no ``/`` at the end."""
    if value in ("", "/"):
        return ""
    if not value.startswith("/") or value.endswith("/") or "//" in value or any(c in value for c in "?#"):
        raise click.BadParameter(f"{value!r}: a path such as /robots/home (a / first, none at the end)")
    return value
