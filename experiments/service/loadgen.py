"""The service benchmark's load generator, a process of its own: ``--clients`` threads post sensor
observations to one memory, each changing facts, and the tally goes to ``--out`` as JSON.

Client ``c`` has a room of its own (``room_c<c>``, seeded by :func:`owned_entities`) with a desk, a
basin, a lamp and a mug. Each of its observations switches the lamp and moves the mug between the
desk and the basin, so every observation changes three facts and no two clients' observations
conflict. With ``--batch N`` each request carries N consecutive observations of one client
(``POST .../observations/batch``). Bodies are encoded before the clock starts, and plain
``http.client`` keeps the generator's own CPU low.

    python -m experiments.service.loadgen URL MEMORY [--clients 20] [--updates 500] [--batch 1]
        [--out tally.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# retries of a request answered 409 (the server gave up after its own retries) before the client gives up
RETRIES = 50


def owned_entities(clients: int) -> dict[str, Any]:
    """The entities the load's clients own, as one ``POST .../entities`` body."""
    entities: list[dict[str, Any]] = []
    facts: list[str] = []
    for c in range(clients):
        room, desk, basin, lamp, mug = _names(c)
        entities += [
            {"name": room, "type": "room"},
            {"name": desk, "type": "furniture"},
            {"name": basin, "type": "sink"},
            {"name": lamp, "type": "light"},
            {"name": mug, "type": "dish"},
        ]
        facts += [f"(in_room {desk} {room})", f"(in_room {basin} {room})", f"(light_in {lamp} {room})"]
        facts.append(f"(on {mug} {desk})")
    return {"entities": entities, "facts": facts, "input": "the load's rooms"}


def changing_observation(client: int, step: int) -> dict[str, Any]:
    """Client ``client``'s room at ``step``: the lamp on at even steps, the mug in the basin at even steps
    (the seeded room has the lamp off and the mug on the desk, so every step changes three facts)."""
    room, desk, basin, lamp, mug = _names(client)
    even = step % 2 == 0
    return {
        "room": room,
        "time_step": step,
        "entities": [
            {"name": desk, "type": "furniture"},
            {"name": basin, "type": "sink"},
            {"name": lamp, "type": "light", "properties": ["light_on"] if even else []},
            {"name": mug, "type": "dish", "relations": [["on", basin if even else desk]]},
        ],
    }


def _names(client: int) -> tuple[str, str, str, str, str]:
    return f"room_c{client}", f"desk_c{client}", f"basin_c{client}", f"lamp_c{client}", f"mug_c{client}"


@dataclass(kw_only=True)
class ClientTally:
    """What one client saw: acknowledged update ids (and their statuses), request latencies, failures."""

    acked: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)


def requests_of(client: int, updates: int, batch: int) -> list[tuple[str, bytes]]:
    """The client's requests, encoded: (path suffix, body)."""
    if batch <= 1:
        return [("/observations", json.dumps(changing_observation(client, s)).encode()) for s in range(updates)]
    bodies = []
    for start in range(0, updates, batch):
        items = [changing_observation(client, s) for s in range(start, min(updates, start + batch))]
        bodies.append(("/observations/batch", json.dumps({"observations": items}).encode()))
    return bodies


def run_client(url: str, memory: str, requests: list[tuple[str, bytes]], tally: ClientTally) -> None:
    """Post every request in turn on one keep-alive connection; a 409 is retried, anything else ends it."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=120)
    headers = {"Content-Type": "application/json"}
    base = f"/v1/memories/{memory}"
    try:
        for path, body in requests:
            for _ in range(RETRIES):
                start = time.perf_counter()
                conn.request("POST", base + path, body, headers)
                response = conn.getresponse()
                data = response.read()
                elapsed = time.perf_counter() - start
                if response.status == 409:
                    tally.conflicts += 1
                    continue
                if response.status != 200:
                    tally.errors.append(f"{response.status}: {data[:200]!r}")
                    return
                tally.seconds.append(elapsed)
                _acknowledge(json.loads(data), tally)
                break
            else:
                tally.errors.append(f"still conflicting after {RETRIES} tries")
                return
    except (OSError, http.client.HTTPException) as exc:
        tally.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()


def _acknowledge(answer: dict[str, Any], tally: ClientTally) -> None:
    for update in answer.get("updates", [answer]):
        if "id" in update:
            tally.acked.append(update["id"])
            tally.statuses.append(update["status"])
        else:  # a batch item that was not recorded
            tally.errors.append(f"item {update.get('error')}: {update.get('message', '')[:200]}")


def generate(url: str, memory: str, *, clients: int, updates: int, batch: int = 1) -> dict[str, Any]:
    """Run the load; the tally (per client) with the wall time and this process's CPU time."""
    requests = [requests_of(c, updates, batch) for c in range(clients)]
    tallies = [ClientTally() for _ in range(clients)]
    threads = [
        threading.Thread(target=run_client, args=(url, memory, requests[c], tallies[c]), daemon=True)
        for c in range(clients)
    ]
    cpu, start = time.process_time(), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {
        "wall_s": time.perf_counter() - start,
        "cpu_s": time.process_time() - cpu,
        "clients": [asdict(t) for t in tallies],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.service.loadgen", description=__doc__.split("\n")[0])
    parser.add_argument("url", help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("memory")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--updates", type=int, default=500, help="observations per client")
    parser.add_argument("--batch", type=int, default=1, help="observations per request (batch door when > 1)")
    parser.add_argument("--out", type=Path, default=Path("tally.json"))
    args = parser.parse_args(argv)
    tally = generate(args.url, args.memory, clients=args.clients, updates=args.updates, batch=args.batch)
    args.out.write_text(json.dumps(tally), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
