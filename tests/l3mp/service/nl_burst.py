"""``python nl_burst.py URL MEMORY N TIMEOUT``: N concurrent NL updates, one JSON line per outcome.

A process of its own, so that the client side of the burst does not share a GIL with the test's
health probe (in one process, the probe measured the client's own contention)."""

from __future__ import annotations

import asyncio
import json
import sys
import time

import httpx


async def _one(client: httpx.AsyncClient, url: str, i: int) -> dict[str, object]:
    started = time.monotonic()
    response = await client.post(url, json={"text": f"the mug is on shelf {i} now"})
    seconds = time.monotonic() - started
    return {"status": response.status_code, "seconds": seconds, "retry_after": response.headers.get("Retry-After")}


async def _burst(url: str, count: int, timeout: float) -> list[dict[str, object]]:
    async with httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=count)) as client:
        return list(await asyncio.gather(*(_one(client, url, i) for i in range(count))))


if __name__ == "__main__":
    base, memory, count, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    for outcome in asyncio.run(_burst(f"{base}/v1/memories/{memory}/updates/nl", count, timeout)):
        print(json.dumps(outcome))
