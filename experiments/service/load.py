"""The service benchmark's load: concurrent sensor updates to one memory, and the check that none was lost."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from rich.console import Console

from experiments.harness import judged, measures_table, ms, verdict
from experiments.service.server import Server, create_home

# the targets: observations per second from 20 clients, the generator on the same cores;
# the p99 latency of a request; the server's CPU per observation (the earlier target was 300/s)
TARGET_UPDATES_PER_S = 1_000
TARGET_P99_MS = 50
TARGET_CPU_MS = 0.5


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


@dataclass(frozen=True, kw_only=True)
class Variant:
    """One way of loading the server: who generates the load, how many observations per request,
    and whether the server gathers writes into groups."""

    name: str
    generator: bool  # the load generator as a process of its own (else threads in this process)
    batch: int = 1
    group_commit: bool = True
    about: str


VARIANTS = {
    v.name: v
    for v in (
        Variant(
            name="generator",
            generator=True,
            about="load generator in another process, every observation changing facts",
        ),
        Variant(name="batch", generator=True, batch=25, about="the same through the batch door, 25 per request"),
        Variant(name="off", generator=True, group_commit=False, about="the same with group commit off"),
        Variant(
            name="in-process",
            generator=False,
            about="threads in the benchmark's process, observations that conflict (the earlier load)",
        ),
    )
}


def measure_load(clients: int, updates: int, workdir: Path, variant: Variant | None = None) -> dict[str, Any]:
    """Start a server, load it, check it; the figures."""
    # imported here: the generator runs as ``python -m experiments.service.loadgen``, which must not
    # find itself imported already by this package
    from experiments.service.loadgen import owned_entities

    variant = variant or VARIANTS["in-process"]
    stats = workdir / f"{variant.name}-groups.json"
    env = {"L3MP_GROUP_COMMIT": "on" if variant.group_commit else "off"}
    db, log = workdir / f"{variant.name}.db", workdir / f"{variant.name}-server.log"
    with Server(db, log, env=env, instrumented=["--stats", str(stats)]) as server:
        name = "load"
        create_home(server.url, name)
        if variant.generator:
            seeded = httpx.post(f"{server.url}/v1/memories/{name}/entities", json=owned_entities(clients), timeout=60)
            seeded.raise_for_status()
        assert server.process is not None
        cpu = _cpu_seconds(psutil.Process(server.process.pid))
        if variant.generator:
            wall, generator_cpu, tallies = _generate(server.url, name, clients, updates, variant.batch, workdir)
        else:
            ours = time.process_time()
            wall, tallies = run_load(server.url, name, clients, updates)
            generator_cpu = time.process_time() - ours
        server_cpu = _cpu_seconds(psutil.Process(server.process.pid)) - cpu
        acked = [i for t in tallies for i in t.acked]
        check = lost_updates(server.url, name, acked)
    seconds = [s for t in tallies for s in t.seconds]
    groups = json.loads(stats.read_text(encoding="utf-8")) if stats.exists() else {}
    return {
        "variant": variant.name,
        "about": variant.about,
        "observations_per_request": variant.batch,
        "group_commit": variant.group_commit,
        "clients": clients,
        "updates_per_client": updates,
        "acknowledged": len(acked),
        "wall_s": round(wall, 3),
        "updates_per_s": round(len(acked) / wall, 1) if wall else 0.0,
        "p50_ms": ms(seconds, 50),
        "p99_ms": ms(seconds, 99),
        "max_ms": round(1000 * max(seconds), 3) if seconds else float("nan"),
        "server_cpu_ms_per_observation": round(1000 * server_cpu / len(acked), 3) if acked else float("nan"),
        "generator_cpu_s": round(generator_cpu, 3),
        "noops": check["noop"],
        "groups": groups.get("groups", 0),
        "largest_group": groups.get("largest", 0),
        "client_conflicts": sum(t.conflicts for t in tallies),
        "errors": [e for t in tallies for e in t.errors][:20],
        "check": {k: v for k, v in check.items() if k != "facts"},
    }


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _generate(
    url: str, name: str, clients: int, updates: int, batch: int, workdir: Path
) -> tuple[float, float, list[Tally]]:
    """Run the load generator as a process of its own; its wall and CPU seconds and its tallies."""
    out = workdir / "tally.json"
    command = [sys.executable, "-m", "experiments.service.loadgen", url, name]
    command += ["--clients", str(clients), "--updates", str(updates), "--batch", str(batch), "--out", str(out)]
    subprocess.run(command, check=True)
    found = json.loads(out.read_text(encoding="utf-8"))
    tallies = [
        Tally(acked=c["acked"], seconds=c["seconds"], conflicts=c["conflicts"], errors=c["errors"])
        for c in found["clients"]
    ]
    return found["wall_s"], found["cpu_s"], tallies


def load_targets(load: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The issue's targets, judged on the load generator in another process (single observations, and
    the batch door for the CPU figure); no lost or duplicated update in any variant."""
    targets: dict[str, dict[str, Any]] = {}
    single, batch = load.get("generator"), load.get("batch")
    if single is not None:
        per_s, p99, cpu = single["updates_per_s"], single["p99_ms"], single["server_cpu_ms_per_observation"]
        targets["updates/s"] = judged(f">= {TARGET_UPDATES_PER_S}", per_s, per_s >= TARGET_UPDATES_PER_S)
        targets["p99 ms"] = judged(f"<= {TARGET_P99_MS}", p99, p99 <= TARGET_P99_MS)
        targets["server CPU ms/observation"] = judged(f"<= {TARGET_CPU_MS}", cpu, cpu <= TARGET_CPU_MS)
        targets["noops"] = judged("0", single["noops"], single["noops"] == 0, samples=single["acknowledged"])
    if batch is not None:
        cpu = batch["server_cpu_ms_per_observation"]
        targets["server CPU ms/observation, batch door"] = judged(f"<= {TARGET_CPU_MS}", cpu, cpu <= TARGET_CPU_MS)
    problems = [p for figures in load.values() for p in figures["check"]["problems"]]
    acked = sum(figures["acknowledged"] for figures in load.values())
    targets["lost updates"] = judged("0", len(problems), not problems, samples=acked)
    return targets


def report_load(
    console: Console, args: argparse.Namespace, load: dict[str, dict[str, Any]], targets: dict[str, dict[str, Any]]
) -> bool:
    """Print each variant's table, the targets and any problem; whether it failed (an update lost, a client failed)."""
    failed = False
    for figures in load.values():
        failed |= _report_variant(console, args, figures)
    console.print(measures_table("service: the issue's targets", [(label, verdict(t)) for label, t in targets.items()]))
    return failed


def _report_variant(console: Console, args: argparse.Namespace, figures: dict[str, Any]) -> bool:
    check = figures["check"]
    complete = figures["acknowledged"] == args.clients * args.updates and not figures["errors"]
    per_request = figures["observations_per_request"]
    console.print(
        measures_table(
            f"service, {figures['variant']}: {figures['about']}; {args.clients} clients x {args.updates}",
            [
                ("acknowledged updates", f"{figures['acknowledged']:,}"),
                ("wall s", f"{figures['wall_s']:.2f}"),
                ("updates/s", f"{figures['updates_per_s']:,.1f}"),
                (f"p50 / p99 / max ms (requests of {per_request})", _latencies(figures)),
                ("server CPU ms per observation", f"{figures['server_cpu_ms_per_observation']:.3f}"),
                *_machine_rows(figures),
                ("load generator CPU s", f"{figures['generator_cpu_s']:.2f}"),
                ("groups / largest", f"{figures['groups']:,} / {figures['largest_group']}"),
                ("409s retried by clients", f"{figures['client_conflicts']:,}"),
                ("history: applied / noop / rejected", f"{check['applied']} / {check['noop']} / {check['rejected']}"),
            ],
        )
    )
    for problem in check["problems"]:
        console.print(f"[red]lost update: {problem}")
    for error in figures["errors"]:
        console.print(f"[red]client error: {error}")
    return not complete or bool(check["problems"])


def _machine_rows(figures: dict[str, Any]) -> list[tuple[str, str]]:
    """This machine's speed right before the variant (experiments.service.calibration), and the
    server's CPU against it: the figure comparable from hour to hour."""
    speed = figures.get("machine_now")
    if speed is None:
        return []
    return [
        ("the group's side alone now, ms per observation", f"{speed['group_side_ms_per_observation']:.3f}"),
        ("server CPU / the group's side alone", f"{figures['server_cpu_vs_group_side']:.2f}"),
    ]


def _latencies(figures: dict[str, Any]) -> str:
    return f"{figures['p50_ms']:.1f} / {figures['p99_ms']:.1f} / {figures['max_ms']:.1f}"
