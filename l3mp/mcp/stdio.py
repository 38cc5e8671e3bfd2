"""The MCP server over stdio (``l3mp mcp``): its own services over the configured store; the local
user is trusted (no key). Standard output carries the protocol only: logs go to standard error."""

from __future__ import annotations

import logging
import sys

import anyio

from l3mp.mcp.server import build_mcp
from l3mp.operations import Services
from l3mp.settings import Settings
from l3mp.wiring import open_store


def serve_stdio(settings: Settings) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    services = Services(settings=settings, store=open_store(settings))
    try:
        anyio.run(build_mcp(lambda: services).run_stdio_async)
    finally:
        services.close()
