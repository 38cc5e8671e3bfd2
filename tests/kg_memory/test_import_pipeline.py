"""How a verified import is written: batches made ready on the importing thread and written on
the writer's, the same rows as a store without that split, and the garbage collector paused
for the import only."""

from __future__ import annotations

import gc
import gzip
import io
import json
import sqlite3
import threading
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from kg_memory import Delta, DomainRegistry, Fact, ImportMismatch, UpdateSource, UpdateStatus, WorldMemory
from kg_memory import _replay as replay_module
from kg_memory._collector import collection_paused
from kg_memory._replay import PreparedHistory
from kg_memory.history import Checkpoint
from kg_memory.model import Update
from kg_memory.stores import SQLiteStore
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS

F = Fact.parse


def _history(store: SQLiteStore, moves: int = 60) -> WorldMemory:
    """A home whose mug goes back and forth between the table and the shelf ``moves`` times."""
    home = WorldMemory.create(store, "home", "example_home")
    assert home.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey").status is UpdateStatus.APPLIED
    here, there = F("(on mug_1 table_1)"), F("(on mug_1 shelf_1)")
    for _ in range(moves):
        update = home.apply(Delta(remove={here}, add={there}), source=UpdateSource.SENSOR)
        assert update.status is UpdateStatus.APPLIED, update.issues
        here, there = there, here
    return home


def _export(home: WorldMemory) -> str:
    return "".join(home.export_lines())


class _Unsplit:
    """The SQLite store as a store that only loads a batch whole (as Neo4j's does)."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name in ("prepare_history", "load_prepared"):
            raise AttributeError(name)
        return getattr(self._store, name)


def _rows(path: Path, memory: str) -> dict[str, list[tuple[Any, ...]]]:
    """The memory's log, touches, sightings and checkpoints (un-gzipped: gzip stamps the time) as stored."""
    with closing(sqlite3.connect(path)) as conn:
        (memory_id,) = conn.execute("SELECT id FROM memories WHERE name = ?", (memory,)).fetchone()
        rows = {
            table: conn.execute(f"SELECT * FROM {table} WHERE memory_id = ? ORDER BY 2, 3", (memory_id,)).fetchall()
            for table in ("updates", "touches", "sightings", "checkpoints")
        }
    rows["checkpoints"] = [(m, version, gzip.decompress(state)) for m, version, state in rows["checkpoints"]]
    return rows | {"memory_id": [(memory_id,)]}


def test_a_store_that_prepares_its_batches_writes_the_rows_one_that_does_not_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_module, "BATCH", 7)  # many batches, checkpoints in some of them
    store = SQLiteStore(tmp_path / "home.db", DomainRegistry(), checkpoint_every=10)
    text = _export(_history(store))
    assert isinstance(store, PreparedHistory) and not isinstance(_Unsplit(store), PreparedHistory)
    WorldMemory.import_lines(store, io.StringIO(text), name="prepared")
    WorldMemory.import_lines(_Unsplit(store), io.StringIO(text), name="whole")  # type: ignore[arg-type]
    prepared, whole = _rows(store.path, "prepared"), _rows(store.path, "whole")
    assert prepared.pop("memory_id") != whole.pop("memory_id")
    strip = {table: [row[1:] for row in rows] for table, rows in prepared.items()}
    assert strip == {table: [row[1:] for row in rows] for table, rows in whole.items()}
    assert len(strip["updates"]) == 62 and len(strip["checkpoints"]) == 6
    assert "".join(WorldMemory.open(store, "prepared").export_lines()).replace('"prepared"', '"home"') == text


def test_batches_are_made_ready_on_the_importing_thread_and_written_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_module, "BATCH", 10)
    store = SQLiteStore(tmp_path / "home.db", DomainRegistry())
    text = _export(_history(store))
    threads: dict[str, set[int]] = {"prepare": set(), "load": set()}
    prepare, load = store.prepare_history, store.load_prepared

    def spied_prepare(memory: str, updates: Sequence[Update], checkpoints: Sequence[Checkpoint] = ()) -> Any:
        threads["prepare"].add(threading.get_ident())
        return prepare(memory, updates, checkpoints)

    def spied_load(memory: str, batch: Any) -> None:
        threads["load"].add(threading.get_ident())
        load(memory, batch)

    monkeypatch.setattr(store, "prepare_history", spied_prepare)
    monkeypatch.setattr(store, "load_prepared", spied_load)
    WorldMemory.import_lines(store, io.StringIO(text), name="copy")
    assert threads["prepare"] == {threading.get_ident()}
    assert len(threads["load"]) == 1 and threads["load"] != threads["prepare"]


def test_the_collector_is_paused_while_an_import_runs_and_resumed_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(tmp_path / "home.db", DomainRegistry())
    text = _export(_history(store, moves=4))
    seen: list[bool] = []
    load = store.load_prepared

    def spied_load(memory: str, batch: Any) -> None:
        seen.append(gc.isenabled())
        load(memory, batch)

    monkeypatch.setattr(store, "load_prepared", spied_load)
    assert gc.isenabled()
    WorldMemory.import_lines(store, io.StringIO(text), name="copy")
    assert seen == [False] and gc.isenabled()
    lines = [json.loads(line) for line in text.splitlines()]
    lines[-1]["end"]["facts_sha256"] = "0" * 64  # a forged end: refused after the batch is written
    with pytest.raises(ImportMismatch, match="does not give the exported facts"):
        WorldMemory.import_lines(store, io.StringIO("".join(json.dumps(line) + "\n" for line in lines)), name="bad")
    assert seen == [False, False] and gc.isenabled()


def test_paused_collection_resumes_when_the_last_pause_of_any_thread_ends() -> None:
    assert gc.isenabled()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    observed: list[bool] = []

    def second() -> None:
        first_in.wait()
        with collection_paused():
            second_in.set()
            first_out.wait()
            observed.append(gc.isenabled())  # the other block has ended; this one has not
        observed.append(gc.isenabled())

    worker = threading.Thread(target=second)
    worker.start()
    with collection_paused():
        first_in.set()
        second_in.wait()
        observed.append(gc.isenabled())
    first_out.set()
    worker.join()
    assert observed == [False, False, True] and gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled(), "a collector its owner turned off stays off"
    finally:
        gc.enable()
