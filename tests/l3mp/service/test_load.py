"""The real server under concurrent load, and killed mid-load: no acknowledged update is lost.

Each test runs ``python -m l3mp --db FILE serve`` as a subprocess (see ``experiments.service``, which
measures the same at full size) on SQLite in tmp_path.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest

from experiments.service import Server, Tally, create_home, lost_updates, run_load

pytestmark = pytest.mark.slow  # each starts one or two server processes (a few seconds each)


def test_concurrent_sensor_updates_lose_nothing(tmp_path: Path) -> None:
    with Server(tmp_path / "service.db", tmp_path / "server.log") as server:
        create_home(server.url, "home")
        _, tallies = run_load(server.url, "home", clients=20, updates=15)
        errors = [e for t in tallies for e in t.errors]
        assert not errors, errors
        acked = [i for t in tallies for i in t.acked]
        assert len(acked) == 20 * 15
        check = lost_updates(server.url, "home", acked)
    assert not check["problems"], check["problems"]
    assert check["history"] == 2 + 20 * 15  # the domain's constants, the survey, then every observation once
    assert len(set(acked)) == len(acked)
    assert check["applied"] > 20  # the clients disagreed, so many observations changed the state
    assert "(on mug_1 table_1)" in check["facts"] or "(on mug_1 sink_1)" in check["facts"]


def test_sigkill_mid_load_keeps_every_acknowledged_update(tmp_path: Path) -> None:
    db, log = tmp_path / "service.db", tmp_path / "server.log"
    server = Server(db, log).start()
    try:
        create_home(server.url, "home")
        result: list[tuple[float, list[Tally]]] = []
        load = threading.Thread(
            target=lambda: result.append(run_load(server.url, "home", clients=4, updates=500)),
            daemon=True,
        )
        load.start()
        deadline = time.monotonic() + 180  # a bound for a very busy machine, not a figure
        while time.monotonic() < deadline and _version(server.url) < 25:  # well into the load
            time.sleep(0.05)
        assert _version(server.url) >= 25, "the load did not get going"
        server.kill()  # SIGKILL, with requests in flight
        load.join(timeout=30)
        assert not load.is_alive()
    finally:
        server.kill()
    _, tallies = result[0]
    acked = [i for t in tallies for i in t.acked]
    assert acked, "no update was acknowledged before the kill"
    assert all(t.cut for t in tallies), "the load finished before the kill: make it longer"
    cut_off = ("ConnectError", "RemoteProtocolError", "ReadError", "WriteError")
    assert all(e.startswith(cut_off) for t in tallies for e in t.errors)

    with sqlite3.connect(db) as conn:  # opening recovers the WAL, as the restarted server will
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()

    with Server(db, log) as again:
        check = lost_updates(again.url, "home", acked)
    assert not check["problems"], check["problems"]
    assert check["history"] >= 2 + len(acked)  # updates in flight may have committed unacknowledged


def test_two_server_processes_on_one_database_lose_nothing(tmp_path: Path) -> None:
    """Each process gathers its own writes into groups; the store's version check keeps the two
    processes' groups from overwriting each other, a group that lost the race being proposed again."""
    db = tmp_path / "service.db"
    with Server(db, tmp_path / "one.log") as one, Server(db, tmp_path / "two.log") as two:
        create_home(one.url, "home")
        results: list[tuple[float, list[Tally]]] = []
        loads = [
            threading.Thread(target=lambda url=url: results.append(run_load(url, "home", clients=10, updates=15)))
            for url in (one.url, two.url)
        ]
        for load in loads:
            load.start()
        for load in loads:
            load.join()
        tallies = [t for _, found in results for t in found]
        errors = [e for t in tallies for e in t.errors]
        assert not errors, errors
        acked = [i for t in tallies for i in t.acked]
        assert len(acked) == 2 * 10 * 15 and len(set(acked)) == len(acked)
        check = lost_updates(one.url, "home", acked)
        assert lost_updates(two.url, "home", acked)["problems"] == []  # the other process reads the same
    assert not check["problems"], check["problems"]
    assert check["history"] == 2 + len(acked)  # every acknowledged update once, nothing else


def _version(url: str) -> int:
    version: int = httpx.get(f"{url}/v1/memories/home/facts", timeout=30.0).json()["version"]
    return version
