"""The export's fast path: update lines re-encoded from the stored rows are byte for byte the
lines the decoded path makes, and re-import."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kg_memory import (
    Delta,
    DomainRegistry,
    Entity,
    Fact,
    UnknownMemory,
    UpdateSource,
    UpdateStatus,
    WorldMemory,
    jsonl_stream,
)
from kg_memory.stores import SQLiteStore, _sqlite_log
from kg_memory.stores._common import UPDATE_COLUMNS
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS

F = Fact.parse


class _Rows:
    """The SQLite store, plus the raw-row read of its log (through its own file)."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def history_rows(self, memory: str, since_seq: int, limit: int) -> list[tuple[Any, ...]]:
        with contextlib.closing(sqlite3.connect(self._store.path)) as conn:
            (memory_id,) = conn.execute("SELECT id FROM memories WHERE name = ?", (memory,)).fetchone()
            return _sqlite_log.history_rows(conn, memory_id, since_seq, limit)


class _Decoded:
    """The same store seen without its raw rows: the export decodes every update."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "history_rows":
            raise AttributeError(name)
        return getattr(self._store, name)


@pytest.fixture
def varied(tmp_path: Path) -> WorldMemory:
    """A history with every kind of row: the domain's, a survey with attributes and a non-ASCII
    label, applied, rejected (with issues), noop, unverified and reverted updates, meta."""
    store = SQLiteStore(tmp_path / "rows.db", DomainRegistry())
    home = WorldMemory.create(store, "rows", "example_home")
    entities = [
        Entity(e.name, e.type, "tasse à café" if e.name == "mug_1" else e.label, {"weight": 0.25, "fragile": True})
        for e in SURVEY_ENTITIES
    ]
    home.add_entities(entities, facts=SURVEY_FACTS, input="survey")
    moved = home.apply(
        Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")}),
        source=UpdateSource.NL,
        input='Alex put the mug on the shelf — "quickly"',
        meta={"retrieval": {"facts": 12, "ratio": 0.125}, "tokens": [3, 4], "said": "mug, shelf: done"},
    )
    assert moved.status is UpdateStatus.APPLIED, moved.issues
    refused = home.apply(Delta(add={F("(on mug_1 sink_1)")}), source=UpdateSource.NL, input="the mug is in the sink")
    assert refused.status is UpdateStatus.REJECTED and refused.issues
    assert home.apply(Delta(), source=UpdateSource.SENSOR).status is UpdateStatus.NOOP
    home.apply(Delta(add={F("(light_on lamp_1)")}), source=UpdateSource.API, meta={"verified": False})
    assert home.revert(moved.id).status is UpdateStatus.APPLIED
    return home


def test_export_lines_are_byte_identical_to_the_decoded_path(
    varied: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = varied.store
    assert isinstance(store, SQLiteStore)
    monkeypatch.setattr(jsonl_stream, "PAGE", 3)  # several pages, and one cut at a page's end
    fast = list(jsonl_stream.export_lines(_Rows(store), varied.name))
    decoded = list(jsonl_stream.export_lines(_Decoded(store), varied.name))
    assert isinstance(_Rows(store), jsonl_stream.StoredHistory)
    assert not isinstance(_Decoded(store), jsonl_stream.StoredHistory)
    assert sum('"update"' in line[:10] for line in fast) == len(varied.history()) == 7
    assert fast == decoded
    copy = WorldMemory.import_lines(store, fast, name="copy")
    assert copy.facts() == varied.facts()
    assert [u.to_json() | {"memory": ""} for u in copy.history()] == [
        u.to_json() | {"memory": ""} for u in varied.history()
    ]


@pytest.mark.parametrize("path", [_Rows, _Decoded])
def test_a_stream_cut_by_its_memory_deleted_hands_on_nothing_of_the_one_made_again(
    varied: WorldMemory, monkeypatch: pytest.MonkeyPatch, path: type[_Rows] | type[_Decoded]
) -> None:
    store = varied.store
    assert isinstance(store, SQLiteStore)
    monkeypatch.setattr(jsonl_stream, "PAGE", 3)
    stream = jsonl_stream.export_lines(path(store), varied.name, created=varied.created)
    read = [next(stream) for _ in range(3)]  # the header and the first entities
    store.delete_memory(varied.name)
    again = WorldMemory.create(store, varied.name, "example_home")
    again.add_entities([Entity("lamp_9", "light")], input="made again")
    with pytest.raises(UnknownMemory, match=varied.name):
        read += list(stream)
    assert read and not any("lamp_9" in line or "made again" in line or '"end"' in line for line in read)


def test_meta_stored_with_spaces_by_earlier_versions_is_exported_compactly(varied: WorldMemory) -> None:
    """Stores write meta compactly, as the export does, and it is copied as it is; files written
    before kept it with json.dumps's spaces, which the export re-encodes."""
    store = varied.store
    assert isinstance(store, SQLiteStore)
    with contextlib.closing(sqlite3.connect(store.path)) as conn:
        stored = conn.execute("SELECT meta FROM updates WHERE meta LIKE '%said%'").fetchone()[0]
        assert stored.startswith('{"retrieval":{"facts":12,') and "mug, shelf: done" in stored
        for seq, meta in conn.execute("SELECT seq, meta FROM updates").fetchall():
            conn.execute("UPDATE updates SET meta = ? WHERE seq = ?", (json.dumps(json.loads(meta)), seq))
        conn.commit()
    fast = list(jsonl_stream.export_lines(_Rows(store), varied.name))
    assert fast == list(jsonl_stream.export_lines(_Decoded(store), varied.name))
    assert '"meta":{"retrieval":{"facts":12,"ratio":0.125},"tokens":[3,4],"said":"mug, shelf: done"}' in "".join(fast)


def test_history_rows_are_in_the_columns_order_and_stop_at_the_limit(varied: WorldMemory) -> None:
    store = varied.store
    assert isinstance(store, SQLiteStore)
    rows = _Rows(store).history_rows(varied.name, 2, 3)
    assert [r[0] for r in rows] == [3, 4, 5]
    stored = store.history(varied.name, 2, 3)
    assert [dict(zip(UPDATE_COLUMNS, r, strict=True))["id"] for r in rows] == [u.id for u in stored]


@pytest.mark.parametrize("awkward", ['a\x00b, then "c" \\ d', "tab\there, line\u2028break, 😀 and \U0010ffff"])
def test_an_imported_log_keeps_every_character_of_its_rows(varied: WorldMemory, awkward: str) -> None:
    """An import writes a batch's rows in one statement through SQLite's JSON, which ends a string
    at an escaped NUL: every text comes back as it went in, the rows equal the exported ones."""
    said = varied.apply(
        Delta(remove={F("(light_on lamp_1)")}), source=UpdateSource.NL, input=awkward, meta={"note": awkward}
    )
    assert said.status is UpdateStatus.APPLIED, said.issues
    store = varied.store
    assert isinstance(store, SQLiteStore)
    copy = WorldMemory.import_lines(store, list(varied.export_lines()), name="copy")
    assert copy.history()[-1].input == awkward and copy.history()[-1].meta == {"note": awkward}
    original, imported = (_Rows(store).history_rows(m, 0, 100) for m in (varied.name, copy.name))
    assert imported == original
    derived = (
        "SELECT entity, seq, ts, seen FROM touches WHERE memory_id = ? ORDER BY entity, seq",
        "SELECT entity, seq FROM sightings WHERE memory_id = ? ORDER BY entity",
        "SELECT seq, ts, mts FROM updates WHERE memory_id = ? ORDER BY seq",
    )
    with contextlib.closing(sqlite3.connect(store.path)) as conn:
        ids = [conn.execute("SELECT id FROM memories WHERE name = ?", (m,)).fetchone()[0] for m in ("rows", "copy")]
        for query in derived:
            assert conn.execute(query, (ids[1],)).fetchall() == conn.execute(query, (ids[0],)).fetchall(), query
