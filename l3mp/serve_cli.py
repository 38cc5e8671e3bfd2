"""``l3mp serve``: the REST service (``l3mp.service``) under uvicorn, on the configured store."""

from __future__ import annotations

import argparse
from typing import Any

from l3mp.settings import Settings


def add_commands(commands: Any) -> None:
    serve = commands.add_parser("serve", help="run the REST service (OpenAPI at /docs)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--access-log", action="store_true", help="log every request (costs throughput)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    import uvicorn

    from l3mp.service import create_app

    # one line per request cost ~10% of throughput under load (benchmarks/service.py); off by default
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info", access_log=args.access_log)
    return 0
