"""The service benchmark's load generator, a process of its own: ``--clients`` keep-alive
connections post sensor observations to one memory, each changing facts, and the tally goes to
``--out`` as JSON.

Client ``c`` has a room of its own (``room_c<c>``, seeded by :func:`owned_entities`) with a desk, a
basin, a lamp and a mug. Each of its observations switches the lamp and moves the mug between the
desk and the basin, so every observation changes three facts and no two clients' observations
conflict. With ``--batch N`` each request carries N consecutive observations of one client
(``POST .../observations/batch``). Requests are encoded before the clock starts, and every client's
keep-alive connection is served from one thread that waits on all of them at once, so the
generator's own CPU, which shares the server's cores, stays low (a thread per client with
``http.client``, as before, took several times as much and slowed the server beside it).

    python -m experiments.service.loadgen URL MEMORY [--clients 20] [--updates 500] [--batch 1]
        [--out tally.json]
"""

from __future__ import annotations

import argparse
import json
import selectors
import socket
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# retries of a request answered 409 (the server gave up after its own retries) before the client gives up
RETRIES = 50
TIMEOUT_S = 120.0


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


class _Connection:
    """One client's keep-alive connection: its requests in turn, the answer being read, its tally."""

    def __init__(
        self, address: tuple[str, int], host: str, base: str, requests: list[tuple[str, bytes]], tally: ClientTally
    ) -> None:
        self.sock = socket.create_connection(address, timeout=TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.wire = [_request(host, base + path, body) for path, body in requests]
        self.tally = tally
        self.next = 0
        self.tries = 0
        self.buffer = b""
        self.sent_at = 0.0

    def send(self) -> None:
        self.sent_at = time.perf_counter()
        self.sock.sendall(self.wire[self.next])

    def receive(self) -> bool:
        """Read what is there; True while the connection has requests left to send."""
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data
        answer = _answer(self.buffer)
        if answer is None:  # more of it to come
            return True
        status, body, self.buffer = answer
        elapsed = time.perf_counter() - self.sent_at
        if status == 409:
            self.tally.conflicts += 1
            self.tries += 1
            if self.tries == RETRIES:
                self.tally.errors.append(f"still conflicting after {RETRIES} tries")
                return False
        elif status != 200:
            self.tally.errors.append(f"{status}: {body[:200]!r}")
            return False
        else:
            self.tally.seconds.append(elapsed)
            _acknowledge(json.loads(body), self.tally)
            self.next, self.tries = self.next + 1, 0
            if self.next == len(self.wire):
                return False
        self.send()
        return True


def _request(host: str, path: str, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


def _answer(buffer: bytes) -> tuple[int, bytes, bytes] | None:
    """(status, body, what follows it) once ``buffer`` holds a whole response, else None. The server
    frames every answer by its Content-Length; one framed otherwise is an error, not guessed at."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    length = None
    for line in buffer[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    if length is None:
        raise ConnectionError(f"an answer without a Content-Length: {buffer[:end]!r}")
    body_at = end + 4
    if len(buffer) < body_at + length:
        return None
    return int(buffer[9:12]), buffer[body_at : body_at + length], buffer[body_at + length :]


def run_clients(url: str, memory: str, requests: list[list[tuple[str, bytes]]], tallies: list[ClientTally]) -> None:
    """Every client's requests in turn on its own keep-alive connection, all from one thread."""
    parts = urlsplit(url)
    address = (parts.hostname or "127.0.0.1", parts.port or 80)
    host = f"{address[0]}:{address[1]}"
    base = f"/v1/memories/{memory}"
    with selectors.DefaultSelector() as selector:
        for client, tally in zip(requests, tallies, strict=True):
            if not client:
                continue
            try:
                connection = _Connection(address, host, base, client, tally)
                connection.send()
            except OSError as exc:
                tally.errors.append(f"{type(exc).__name__}: {exc}")
                continue
            selector.register(connection.sock, selectors.EVENT_READ, connection)
        while selector.get_map():
            ready = selector.select(TIMEOUT_S)
            if not ready:
                for key in list(selector.get_map().values()):
                    key.data.tally.errors.append(f"no answer within {TIMEOUT_S} s")
                    selector.unregister(key.fileobj)
                    key.data.sock.close()
                break
            for key, _ in ready:
                connection = key.data
                try:
                    going = connection.receive()
                except (OSError, ValueError) as exc:
                    connection.tally.errors.append(f"{type(exc).__name__}: {exc}")
                    going = False
                if not going:
                    selector.unregister(connection.sock)
                    connection.sock.close()


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
    cpu, start = time.process_time(), time.perf_counter()
    run_clients(url, memory, requests, tallies)
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
