"""The burst's client, a process of its own so that it shares no GIL with the health probe: N
concurrent NL updates to one memory, one JSON line per outcome on standard output.

    python -m experiments.service.burst_client URL MEMORY N TIMEOUT
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

import httpx


async def _one(client: httpx.AsyncClient, url: str, i: int) -> dict[str, Any]:
    started = time.monotonic()
    try:
        response = await client.post(url, json={"text": f"the mug is on shelf {i} now"})
    except httpx.HTTPError as exc:
        return {"status": 0, "seconds": time.monotonic() - started, "retry_after": None, "code": type(exc).__name__}
    seconds = time.monotonic() - started
    try:
        code = response.json().get("error", {}).get("code")
    except (ValueError, AttributeError):
        code = None
    return {
        "status": response.status_code,
        "seconds": seconds,
        "retry_after": response.headers.get("Retry-After"),
        "code": code,
    }


async def _burst(url: str, count: int, timeout: float) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=count)) as client:
        return list(await asyncio.gather(*(_one(client, url, i) for i in range(count))))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m experiments.service.burst_client",
        description="N concurrent NL updates, one JSON line per outcome",
    )
    parser.add_argument("url", help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("memory")
    parser.add_argument("count", type=int)
    parser.add_argument("timeout", type=float, help="client timeout per request, seconds")
    args = parser.parse_args(argv)
    target = f"{args.url}/v1/memories/{args.memory}/updates/nl"
    for outcome in asyncio.run(_burst(target, args.count, args.timeout)):
        print(json.dumps(outcome))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
