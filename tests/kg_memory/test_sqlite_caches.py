"""The SQLite store's page caches: large for the connections that write, SQLite's own for those that only read."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from conftest import SURVEY_ENTITIES, SURVEY_FACTS, unique_name

from kg_memory import Delta, Fact, UpdateSource, WorldMemory
from kg_memory.errors import InvalidValue
from kg_memory.stores import SQLiteStore
from kg_memory.stores.sqlite import WAL_CHECKPOINT_PAGES
from l3mp.settings import Settings
from l3mp.wiring import open_store

SQLITE_DEFAULT_CACHE = -2000  # KiB: what a connection has until it is told otherwise


def _pragma(store: SQLiteStore, name: str) -> int:
    value: int = store._conn().execute(f"PRAGMA {name}").fetchone()[0]
    return value


def _in_another_thread(store: SQLiteStore, work: str) -> int:
    """``PRAGMA cache_size`` of a fresh thread's connection after ``work`` (read or write) on it."""
    seen: list[int] = []

    def run() -> None:
        home = WorldMemory.open(store, "home")
        if work == "write":
            home.apply(Delta(add={Fact.parse("(light_on lamp_1)")}), source=UpdateSource.API)
        else:
            home.facts()
        seen.append(_pragma(store, "cache_size"))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return seen[0]


def test_only_a_connection_that_has_written_takes_the_large_cache(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "caches.db", writer_cache_mib=8)
    home = WorldMemory.create(store, "home", "example_home")
    home.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    assert _pragma(store, "cache_size") == -8 * 1024
    assert _in_another_thread(store, "read") == SQLITE_DEFAULT_CACHE
    assert _in_another_thread(store, "write") == -8 * 1024
    store.close()


def test_every_connection_checkpoints_the_log_at_the_stores_threshold(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "wal.db")
    assert _pragma(store, "wal_autocheckpoint") == WAL_CHECKPOINT_PAGES
    store.close()


def test_a_cache_below_one_mib_is_refused_with_its_value(tmp_path: Path) -> None:
    with pytest.raises(InvalidValue, match="writer_cache_mib 0"):
        SQLiteStore(tmp_path / "none.db", writer_cache_mib=0)


def test_the_setting_reaches_the_store(tmp_path: Path) -> None:
    store = open_store(Settings(sqlite_path=tmp_path / "set.db", sqlite_writer_cache_mib=5))
    assert isinstance(store, SQLiteStore) and store.writer_cache_mib == 5
    WorldMemory.create(store, unique_name("set"), "example_home")
    assert _pragma(store, "cache_size") == -5 * 1024
    store.close()
