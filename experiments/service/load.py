"""The service benchmark's load: concurrent sensor updates to one memory, and the check that none was lost."""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from experiments.harness import judged, measures_table, ms, verdict
from experiments.service.server import Server, create_home

TARGET_UPDATES_PER_S = 300


# -- the load -------------------------------------------------------------------------------------


def observation(client: int, step: int) -> dict[str, Any]:
    """A complete view of the kitchen that differs by client and step: lamp on or off, mug placed."""
    lamp: dict[str, Any] = {"name": "lamp_1", "type": "light"}
    if (client + step) % 2 == 0:
        lamp["properties"] = ["light_on"]
    place = "sink_1" if (3 * client + step) % 3 == 0 else "table_1"
    return {
        "room": "kitchen",
        "time_step": step,
        "entities": [
            {"name": "table_1", "type": "furniture"},
            {"name": "sink_1", "type": "sink"},
            lamp,
            {"name": "mug_1", "type": "dish", "relations": [["on", place]]},
        ],
    }


@dataclass(kw_only=True)
class Tally:
    """What one client saw: acknowledged update ids and latencies, conflicts, failures."""

    acked: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)
    cut: bool = False  # the connection failed (the server went away)


def post_updates(
    url: str, name: str, client: int, updates: int, tally: Tally, stop: threading.Event, retries: int = 50
) -> None:
    """Post ``updates`` observations; a 409 is retried, a transport error ends the client."""
    with httpx.Client(base_url=url, timeout=60.0) as http:
        for step in range(updates):
            body = observation(client, step)
            for _ in range(retries):
                if stop.is_set():
                    return
                start = time.perf_counter()
                try:
                    response = http.post(f"/v1/memories/{name}/observations", json=body)
                except httpx.TransportError as exc:
                    tally.cut = True
                    tally.errors.append(f"{type(exc).__name__}: {exc}")
                    return
                elapsed = time.perf_counter() - start
                if response.is_success:
                    tally.acked.append(response.json()["id"])
                    tally.seconds.append(elapsed)
                    break
                if response.status_code == 409:
                    tally.conflicts += 1
                    continue
                tally.errors.append(f"{response.status_code}: {response.text[:200]}")
                break
            else:
                tally.errors.append(f"client {client} step {step}: still conflicting after {retries} tries")


def run_load(
    url: str, name: str, clients: int, updates: int, stop: threading.Event | None = None
) -> tuple[float, list[Tally]]:
    """Wall seconds and each client's tally."""
    stop = stop or threading.Event()
    tallies = [Tally() for _ in range(clients)]
    threads = [
        threading.Thread(target=post_updates, args=(url, name, c, updates, tallies[c], stop), daemon=True)
        for c in range(clients)
    ]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start, tallies


# -- the check ------------------------------------------------------------------------------------


def history(url: str, name: str) -> list[dict[str, Any]]:
    """Every update of the memory, in sequence order."""
    found: list[dict[str, Any]] = []
    since = 0
    with httpx.Client(base_url=url, timeout=60.0) as client:
        while True:
            page = client.get(f"/v1/memories/{name}/updates", params={"since_seq": since, "limit": 1000})
            page.raise_for_status()
            body = page.json()
            if not body["updates"]:
                return found
            found.extend(body["updates"])
            since = body["next_since_seq"]


def replay(updates: Iterable[dict[str, Any]]) -> set[str]:
    """The facts after applying every applied update's delta, in order, from the empty state."""
    facts: set[str] = set()
    for update in updates:
        if update["status"] == "applied":
            facts.difference_update(update["delta"]["remove"])
            facts.update(update["delta"]["add"])
    return facts


def lost_updates(url: str, name: str, acked: Iterable[str]) -> dict[str, Any]:
    """The no-lost-update check; ``problems`` is empty when it holds."""
    updates = history(url, name)
    final = httpx.get(f"{url}/v1/memories/{name}/facts", timeout=60.0).json()
    seqs = [u["seq"] for u in updates]
    status = {u["id"]: u["status"] for u in updates}
    acked = list(acked)
    # the domain's record of its constants is applied at version 0: every other applied update makes one
    applied = sum(1 for u in updates if u["status"] == "applied" and u["source"] != "domain")
    problems: list[str] = []
    if seqs != sorted(set(seqs)):
        problems.append("history sequence numbers are not strictly increasing")
    missing = [i for i in acked if i not in status]
    if missing:
        problems.append(f"{len(missing)} acknowledged updates are not in the history, e.g. {missing[:3]}")
    wrong = [(i, status[i]) for i in acked if i in status and status[i] not in ("applied", "noop")]
    if wrong:
        problems.append(f"{len(wrong)} acknowledged updates are recorded as neither applied nor noop: {wrong[:3]}")
    if len(set(acked)) != len(acked):
        problems.append("an update id was acknowledged twice")
    replayed = replay(updates)
    if replayed != set(final["facts"]):
        problems.append(
            f"the final state is not the replay: only in state {sorted(set(final['facts']) - replayed)}, "
            f"only in replay {sorted(replayed - set(final['facts']))}"
        )
    if final["version"] != applied:
        problems.append(f"version {final['version']} but {applied} applied updates in the history")
    return {
        "problems": problems,
        "history": len(updates),
        "applied": applied,
        "noop": sum(1 for u in updates if u["status"] == "noop"),
        "rejected": sum(1 for u in updates if u["status"] == "rejected"),
        "version": final["version"],
        "facts": sorted(final["facts"]),
    }


# -- the benchmark --------------------------------------------------------------------------------


def measure_load(clients: int, updates: int, workdir: Path) -> dict[str, Any]:
    """Start a server, load it, check it; the figures."""
    with Server(workdir / "service.db", workdir / "server.log") as server:
        name = "load"
        create_home(server.url, name)
        wall, tallies = run_load(server.url, name, clients, updates)
        acked = [i for t in tallies for i in t.acked]
        seconds = [s for t in tallies for s in t.seconds]
        check = lost_updates(server.url, name, acked)
    return {
        "clients": clients,
        "updates_per_client": updates,
        "acknowledged": len(acked),
        "wall_s": round(wall, 3),
        "updates_per_s": round(len(acked) / wall, 1) if wall else 0.0,
        "p50_ms": ms(seconds, 50),
        "p99_ms": ms(seconds, 99),
        "max_ms": round(1000 * max(seconds), 3) if seconds else float("nan"),
        "client_conflicts": sum(t.conflicts for t in tallies),
        "errors": [e for t in tallies for e in t.errors][:20],
        "check": {k: v for k, v in check.items() if k != "facts"},
    }


def load_targets(figures: dict[str, Any]) -> dict[str, dict[str, Any]]:
    per_s = figures["updates_per_s"]
    problems = figures["check"]["problems"]
    return {
        "updates/s": judged(f">= {TARGET_UPDATES_PER_S}", per_s, per_s >= TARGET_UPDATES_PER_S),
        "lost updates": judged("0", len(problems), not problems, samples=figures["acknowledged"]),
    }


def report_load(
    console: Console, args: argparse.Namespace, figures: dict[str, Any], targets: dict[str, dict[str, Any]]
) -> bool:
    """Print the load's table and problems; whether it failed (an update lost, a client failed)."""
    check = figures["check"]
    complete = figures["acknowledged"] == args.clients * args.updates and not figures["errors"]
    console.print(
        measures_table(
            f"service: {args.clients} clients x {args.updates} sensor updates, one memory, SQLite",
            [
                ("acknowledged updates", f"{figures['acknowledged']:,}"),
                ("wall s", f"{figures['wall_s']:.2f}"),
                ("updates/s", f"{figures['updates_per_s']:,.1f}"),
                ("p50 latency ms", f"{figures['p50_ms']:.1f}"),
                ("p99 latency ms", f"{figures['p99_ms']:.1f}"),
                ("max latency ms", f"{figures['max_ms']:.1f}"),
                ("409s retried by clients", f"{figures['client_conflicts']:,}"),
                ("history: applied / noop / rejected", f"{check['applied']} / {check['noop']} / {check['rejected']}"),
                ("updates/s target", verdict(targets["updates/s"])),
                ("no lost update", verdict(targets["lost updates"])),
            ],
        )
    )
    for problem in check["problems"]:
        console.print(f"[red]lost update: {problem}")
    for error in figures["errors"]:
        console.print(f"[red]client error: {error}")
    return not complete or bool(check["problems"])
