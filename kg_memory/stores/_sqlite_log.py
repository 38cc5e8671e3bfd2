"""The SQLite store's history: the update log, its indexes (touches, time, source, status,
version), checkpoints, bulk loading for imports and compaction. Functions take an open
connection; the store owns transactions.

Touches (each entity an update names, with its time and whether perception saw it) are keyed by
entity, so each write lands on a leaf page of its own per entity and B-tree: the write path's
largest cost, so they have no other index. When perception last saw an entity is a row of its own
(``sightings``, one per entity), the bound from above of its touches that were seen. An entity's
updates since a time are found without an index by time of their own: each update also stores
``mts``, the latest time of any update up to it in the log. ``mts`` never decreases along the log
(times alone may: a write drafted in another process, or recorded after one drafted later), so the
first update whose ``mts`` reaches a time bounds from below, by ``seq``, every update at or after it.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from json.encoder import encode_basestring_ascii
from operator import itemgetter
from typing import Any

from kg_memory.history import Checkpoint, HistoryQuery, timestamp_us, touched
from kg_memory.model import Delta, Entity, Fact, Update
from kg_memory.stores._common import UPDATE_COLUMNS, attrs_from_text, update_from_row, update_row

_TABLES = """
CREATE TABLE IF NOT EXISTS touches (
    memory_id INTEGER NOT NULL, entity TEXT NOT NULL, seq INTEGER NOT NULL, ts INTEGER NOT NULL,
    seen INTEGER NOT NULL, PRIMARY KEY (memory_id, entity, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sightings (
    memory_id INTEGER NOT NULL, entity TEXT NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY (memory_id, entity)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (
    memory_id INTEGER NOT NULL, version INTEGER NOT NULL, state BLOB NOT NULL,
    PRIMARY KEY (memory_id, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS horizons (
    memory_id INTEGER PRIMARY KEY, version INTEGER NOT NULL, time TEXT NOT NULL, summaries TEXT NOT NULL);
"""
_INDEXES = """
CREATE INDEX IF NOT EXISTS updates_time ON updates (memory_id, ts);
CREATE INDEX IF NOT EXISTS updates_source ON updates (memory_id, source, seq);
CREATE INDEX IF NOT EXISTS updates_status ON updates (memory_id, status, seq);
CREATE INDEX IF NOT EXISTS updates_version ON updates (memory_id, version);
CREATE INDEX IF NOT EXISTS updates_bound ON updates (memory_id, mts);
DROP INDEX IF EXISTS touches_time;
DROP INDEX IF EXISTS touches_seen;
"""
TABLES = ("touches", "sightings", "checkpoints", "horizons")
_INSERT_UPDATE = (
    f"INSERT INTO updates (memory_id, ts, mts, {', '.join(UPDATE_COLUMNS)})"
    f" VALUES ({', '.join('?' for _ in range(len(UPDATE_COLUMNS) + 3))})"
)
_INSERT_TOUCH = "INSERT INTO touches VALUES (?, ?, ?, ?, ?)"
_SIGHTED = " ON CONFLICT DO UPDATE SET seq = max(seq, excluded.seq)"
_INSERT_SIGHTING = "INSERT INTO sightings VALUES (?, ?, ?)" + _SIGHTED
_COLUMNS = ", ".join(f"u.{c}" for c in UPDATE_COLUMNS)


def migrate(conn: sqlite3.Connection) -> None:
    """Give a file from before the history indexes its ``ts`` column and touches, one from before
    ``mts`` that column and one from before sightings those (each once)."""
    sighted = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sightings'").fetchone() is not None
    conn.executescript(_TABLES)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(updates)")}
    if "ts" not in columns:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("ALTER TABLE updates ADD COLUMN ts INTEGER NOT NULL DEFAULT 0")
            rows = conn.execute(
                f"SELECT memory_id, m.name, {', '.join(UPDATE_COLUMNS)} FROM updates"
                " JOIN memories m ON m.id = memory_id"
            ).fetchall()
            for memory_id, name, *values in rows:
                update = update_from_row(name, dict(zip(UPDATE_COLUMNS, values, strict=True)))
                conn.execute(
                    "UPDATE updates SET ts = ? WHERE memory_id = ? AND seq = ?",
                    (timestamp_us(update.time), memory_id, update.seq),
                )
                conn.executemany(_INSERT_TOUCH, _touch_rows(memory_id, [update]))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    if "mts" not in {row[1] for row in conn.execute("PRAGMA table_info(updates)")}:
        _add_latest_times(conn)
    if not sighted:
        conn.execute(
            "INSERT OR IGNORE INTO sightings SELECT memory_id, entity, max(seq) FROM touches"
            " WHERE seen = 1 GROUP BY memory_id, entity"
        )
    conn.executescript(_INDEXES)


def _add_latest_times(conn: sqlite3.Connection) -> None:
    """Give a file from before ``mts`` the column, each update's the latest time up to it (once)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("ALTER TABLE updates ADD COLUMN mts INTEGER NOT NULL DEFAULT 0")
        conn.execute(
            "UPDATE updates SET mts = w.latest FROM (SELECT memory_id AS mid, seq AS s,"
            " max(ts) OVER (PARTITION BY memory_id ORDER BY seq) AS latest FROM updates) AS w"
            " WHERE updates.memory_id = w.mid AND updates.seq = w.s"
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def log(conn: sqlite3.Connection, memory_id: int, updates: Sequence[Update]) -> None:
    """Append ``updates`` (stamped) and their touches: one statement for each, however many."""
    rows = []
    latest = latest_time(conn, memory_id)
    for update in updates:
        row = update_row(update)
        ts = timestamp_us(update.time)
        latest = max(latest, ts)
        rows.append((memory_id, ts, latest, *(row[c] for c in UPDATE_COLUMNS)))
    conn.executemany(_INSERT_UPDATE, rows)
    touches = _touch_rows(memory_id, updates)
    conn.executemany(_INSERT_TOUCH, touches)
    conn.executemany(_INSERT_SIGHTING, _sightings(touches))


def _sightings(touches: Iterable[tuple[int, str, int, int, int]]) -> list[tuple[int, str, int]]:
    """The last sighting of each entity the touches saw (touches in entity, then seq order)."""
    last: dict[str, tuple[int, str, int]] = {}
    for memory_id, name, seq, _, seen in touches:
        if seen:
            last[name] = (memory_id, name, seq)
    return list(last.values())


def latest_time(conn: sqlite3.Connection, memory_id: int) -> int:
    """The latest time (µs) of any update in the memory's log, 0 for none."""
    (latest,) = conn.execute("SELECT coalesce(max(mts), 0) FROM updates WHERE memory_id = ?", (memory_id,)).fetchone()
    return int(latest)


def _first_seq_since(conn: sqlite3.Connection, memory_id: int, since_us: int) -> int | None:
    """The ``seq`` before which no update is at or after ``since_us``; None when none is."""
    (first,) = conn.execute(
        "SELECT min(seq) FROM updates WHERE memory_id = ?1 AND mts ="
        " (SELECT min(mts) FROM updates WHERE memory_id = ?1 AND mts >= ?2)",
        (memory_id, since_us),
    ).fetchone()
    return None if first is None else int(first)


def _touch_rows(memory_id: int, updates: Iterable[Update]) -> list[tuple[int, str, int, int, int]]:
    rows: list[tuple[int, str, int, int, int]] = []
    for update in updates:
        ts = timestamp_us(update.time)
        rows.extend((memory_id, name, update.seq, ts, int(seen)) for name, seen in touched(update).items())
    rows.sort(key=itemgetter(1, 2))  # in key order: the touches then fill each index's pages in one sweep
    return rows


def current_checkpoint(conn: sqlite3.Connection, memory_id: int, version: int) -> Checkpoint:
    """The materialized state, read inside the caller's transaction."""
    entities = tuple(
        Entity.unchecked(n, t, label, attrs_from_text(a))
        for n, t, label, a in conn.execute(
            "SELECT name, type, label, attrs FROM entities WHERE memory_id = ? ORDER BY name", (memory_id,)
        )
    )
    facts = frozenset(
        Fact.unchecked(p, tuple(a.split()), n)
        for p, a, n in conn.execute("SELECT predicate, args, number FROM facts WHERE memory_id = ?", (memory_id,))
    )
    return Checkpoint(version, entities, facts)


def put_checkpoint(conn: sqlite3.Connection, memory_id: int, checkpoint: Checkpoint) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?)", (memory_id, checkpoint.version, checkpoint.encode())
    )


def nearest_checkpoint(conn: sqlite3.Connection, memory_id: int, version: int) -> Checkpoint | None:
    row = conn.execute(
        "SELECT state FROM checkpoints WHERE memory_id = ? AND version <= ? ORDER BY version DESC LIMIT 1",
        (memory_id, version),
    ).fetchone()
    return None if row is None else Checkpoint.decode(row[0])


def replay_from(conn: sqlite3.Connection, memory_id: int, version: int) -> tuple[Checkpoint | None, list[Delta]]:
    """The nearest checkpoint and the deltas after it (through ``updates_version``); the caller
    reads both in one transaction."""
    checkpoint = nearest_checkpoint(conn, memory_id, version)
    rows = conn.execute(
        "SELECT delta FROM updates WHERE memory_id = ? AND version > ? AND version <= ?"
        " AND status = 'applied' ORDER BY version",
        (memory_id, 0 if checkpoint is None else checkpoint.version, version),
    )
    return checkpoint, [Delta.from_stored(json.loads(d)) for (d,) in rows]


def query(conn: sqlite3.Connection, memory: str, memory_id: int, q: HistoryQuery) -> list[Update]:
    """One page of updates; through the touches index when an entity is named."""
    where: list[str] = []
    params: list[Any] = [memory_id]
    if q.entity is not None:
        sql = f"SELECT {_COLUMNS} FROM touches t JOIN updates u ON u.memory_id = t.memory_id AND u.seq = t.seq"
        where.append("t.memory_id = ? AND t.entity = ?")
        params.append(q.entity)
        if q.since_us is not None:  # a week of a long history: only its end is walked
            first = _first_seq_since(conn, memory_id, q.since_us)
            if first is None:
                return []
            where.append("t.seq >= ?")
            params.append(first)
        if q.seen_only:  # none of its touches after its last sighting is walked
            last = conn.execute(
                "SELECT seq FROM sightings WHERE memory_id = ? AND entity = ?", (memory_id, q.entity)
            ).fetchone()
            if last is None:
                return []
            where.append("t.seen = 1 AND t.seq <= ?")
            params.append(last[0])
        key, ts = "t.seq", "t.ts"
    else:
        sql = f"SELECT {_COLUMNS} FROM updates u"
        where.append("u.memory_id = ?")
        key, ts = "u.seq", "u.ts"
    for clause, value in (
        (f"{key} > ?", q.after or None),
        (f"{key} < ?", q.before),
        (f"{ts} >= ?", q.since_us),
        (f"{ts} < ?", q.until_us),
        ("u.source = ?", q.source.value if q.source else None),
        ("u.status = ?", q.status.value if q.status else None),
    ):
        if value is not None:
            where.append(clause)
            params.append(value)
    sql += f" WHERE {' AND '.join(where)} ORDER BY {key} {'DESC' if q.newest_first else 'ASC'} LIMIT ?"
    params.append(q.limit)
    rows = conn.execute(sql, params).fetchall()
    return [update_from_row(memory, dict(zip(UPDATE_COLUMNS, r, strict=True))) for r in rows]


def history(conn: sqlite3.Connection, memory: str, memory_id: int, since_seq: int, limit: int | None) -> list[Update]:
    sql = f"SELECT {_COLUMNS} FROM updates u WHERE u.memory_id = ? AND u.seq > ? ORDER BY u.seq"
    params: tuple[object, ...] = (memory_id, since_seq)
    if limit is not None:
        sql += " LIMIT ?"
        params += (limit,)
    rows = conn.execute(sql, params).fetchall()
    return [update_from_row(memory, dict(zip(UPDATE_COLUMNS, r, strict=True))) for r in rows]


def history_rows(conn: sqlite3.Connection, memory_id: int, since_seq: int, limit: int) -> list[tuple[Any, ...]]:
    """Stored rows after ``since_seq``, columns in ``UPDATE_COLUMNS`` order, undecoded: an export
    re-encodes their JSON text as it is, without building an ``Update`` for each."""
    return conn.execute(
        f"SELECT {_COLUMNS} FROM updates u WHERE u.memory_id = ? AND u.seq > ? ORDER BY u.seq LIMIT ?",
        (memory_id, since_seq, limit),
    ).fetchall()


def get_update(conn: sqlite3.Connection, memory: str, memory_id: int, update_id: str) -> Update | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM updates u WHERE u.memory_id = ? AND u.id = ?", (memory_id, update_id)
    ).fetchone()
    return None if row is None else update_from_row(memory, dict(zip(UPDATE_COLUMNS, row, strict=True)))


_LOG_COLUMNS = f"updates (memory_id, ts, mts, {', '.join(UPDATE_COLUMNS)})"
_LOG_WIDTH = 1 + len(UPDATE_COLUMNS)  # a prepared row: ts, the columns, then the names it touches
# by entity, then seq: each of the touches' indexes is then filled in its own order, a run of
# neighbouring keys at a time rather than one leaf here and one there; SQLite sorts them
_TOUCHES_FROM_ROWS = (
    "INSERT INTO touches SELECT ?, n.key, u.value ->> 1, u.value ->> 0, n.value"
    f" FROM json_each(?) u, json_each(u.value, '$[{_LOG_WIDTH}]') n ORDER BY n.key, u.value ->> 1"
)
_SIGHTINGS_FROM_ROWS = (
    "INSERT INTO sightings SELECT ?, n.key, max(u.value ->> 1)"
    f" FROM json_each(?) u, json_each(u.value, '$[{_LOG_WIDTH}]') n WHERE n.value GROUP BY n.key" + _SIGHTED
)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadBatch:
    """An import's batch of already-verified, stamped updates and their checkpoints, as the
    statements that append them take them. Making it is Python's work, which holds the GIL;
    writing it is SQLite's, which does not: an import makes the next batch's while the last one
    is written, on another thread (see :func:`prepare`).

    The rows go as one JSON array that SQLite reads in one statement for the log and one for the
    touches; as the rows themselves when the text holds an escaped NUL (SQLite's JSON ends a
    string there), to go in one by one."""

    first_seq: int
    last_seq: int
    last_version: int
    repeated: tuple[str, ...]  # ids the batch itself repeats
    ids: str  # every id, as a JSON array
    text: str | None
    rows: Sequence[tuple[Any, ...]]
    checkpoints: tuple[tuple[int, bytes], ...]


def prepare(updates: Sequence[Update], checkpoints: Iterable[Checkpoint]) -> LoadBatch:
    """``updates`` (at least one) and ``checkpoints`` as a :class:`LoadBatch`."""
    rows = [(timestamp_us(u.time), *loaded_row(u), touched(u)) for u in updates]  # seen: true is 1 to SQLite
    text = json.dumps(rows, ensure_ascii=False)  # a lone surrogate fails to encode, as a bound value would
    nul = "\\u0000" in text
    seen: set[str] = set()
    return LoadBatch(
        first_seq=updates[0].seq,
        last_seq=updates[-1].seq,
        last_version=updates[-1].version,
        repeated=tuple(u.id for u in updates if u.id in seen or seen.add(u.id)),  # type: ignore[func-returns-value]
        ids=json.dumps([u.id for u in updates]),
        text=None if nul else text,
        rows=rows if nul else (),
        checkpoints=tuple((c.version, encoded_checkpoint(c)) for c in checkpoints),
    )


def duplicate_ids(conn: sqlite3.Connection, memory_id: int, batch: LoadBatch) -> list[str]:
    """Ids of the batch that repeat within it or are already in the memory's log."""
    stored = conn.execute(
        "SELECT id FROM updates WHERE memory_id = ? AND id IN (SELECT value FROM json_each(?))", (memory_id, batch.ids)
    )
    return [*batch.repeated, *(r[0] for r in stored)]


def load(conn: sqlite3.Connection, memory_id: int, batch: LoadBatch) -> None:
    """Append a prepared batch: its updates, their touches and its checkpoints."""
    latest = latest_time(conn, memory_id)
    if batch.text is not None:
        picks = ", ".join(f"value ->> {i}" for i in range(1, _LOG_WIDTH))
        conn.execute(
            f"INSERT INTO {_LOG_COLUMNS} SELECT ?1, value ->> 0,"
            f" max(?2, max(value ->> 0) OVER (ORDER BY key)), {picks} FROM json_each(?3)",
            (memory_id, latest, batch.text),
        )
        conn.execute(_TOUCHES_FROM_ROWS, (memory_id, batch.text))
        conn.execute(_SIGHTINGS_FROM_ROWS, (memory_id, batch.text))
    else:
        marks = ", ".join("?" * (_LOG_WIDTH + 2))
        rows = []
        for row in batch.rows:
            latest = max(latest, row[0])
            rows.append((memory_id, row[0], latest, *row[1:-1]))
        conn.executemany(f"INSERT INTO {_LOG_COLUMNS} VALUES ({marks})", rows)
        touches = [(memory_id, name, r[1], r[0], seen) for r in batch.rows for name, seen in r[-1].items()]
        touches.sort(key=itemgetter(1))  # stable: by entity, then seq
        conn.executemany(_INSERT_TOUCH, touches)
        conn.executemany(_INSERT_SIGHTING, _sightings(touches))
    conn.executemany(
        "INSERT OR REPLACE INTO checkpoints VALUES (?, ?, ?)",
        [(memory_id, version, state) for version, state in batch.checkpoints],
    )


def loaded_row(update: Update) -> tuple[Any, ...]:
    """``update_row``'s values in ``UPDATE_COLUMNS`` order, the same text, made from the fact
    texts an import keeps (its deltas' facts are its checkpoints' facts)."""
    delta = update.delta
    if delta.new_entities:
        delta_text = json.dumps(delta.to_json())
    else:
        remove, add = _string_list(_texts(delta.remove)), _string_list(_texts(delta.add))
        delta_text = f'{{"remove": {remove}, "add": {add}, "new_entities": []}}'
    return (
        update.seq,
        update.id,
        update.source.value,
        update.input,
        delta_text,
        update.status.value,
        json.dumps([i.to_json() for i in update.issues]) if update.issues else "[]",
        update.version,
        update.time.isoformat(),
        update.meta_text() if update.meta else "{}",
    )


def _texts(facts: Iterable[Fact]) -> list[str]:
    """The facts' texts, sorted (as ``Delta.to_json`` and ``Checkpoint.encode`` list them)."""
    texts = []
    for fact in facts:
        text = _FACT_TEXTS.get(fact)
        if text is None:
            if len(_FACT_TEXTS) >= _FACT_TEXTS_MAX:
                _FACT_TEXTS.clear()
            text = _FACT_TEXTS[fact] = str(fact)
        texts.append(text)
    texts.sort()
    return texts


# An import writes a checkpoint every few hundred updates of one home: the same entities and
# mostly the same facts each time, so their texts are kept between checkpoints.
_FACT_TEXTS: dict[Fact, str] = {}
_FACT_TEXTS_MAX = 1 << 16
_ENTITIES_TEXT: list[tuple[tuple[Entity, ...], str]] = []
_compact = json.JSONEncoder(separators=(",", ":")).encode


def _string_list(texts: list[str]) -> str:
    """``json.dumps(texts)``, byte for byte, without making an encoder for each list."""
    return "[" + ", ".join(map(encode_basestring_ascii, texts)) + "]"


def encoded_checkpoint(checkpoint: Checkpoint) -> bytes:
    """``checkpoint.encode()``, byte for byte, from the texts kept of the one before it."""
    texts = _texts(checkpoint.facts)
    kept = _ENTITIES_TEXT[0] if _ENTITIES_TEXT else None
    if kept is not None and kept[0] is checkpoint.entities:
        entities = kept[1]
    else:
        entities = _compact([[e.name, e.type, e.label, dict(e.attrs)] for e in checkpoint.entities])
        _ENTITIES_TEXT[:] = [(checkpoint.entities, entities)]
    text = f'{{"format":2,"version":{checkpoint.version:d},"entities":{entities},"facts":{_compact(texts)}}}'
    return gzip.compress(text.encode(), compresslevel=1)


def compact(
    conn: sqlite3.Connection, memory_id: int, checkpoint: Checkpoint, when: datetime, summaries: dict[str, Any]
) -> int:
    """Drop the log up to the checkpoint's version, keeping the checkpoint and the summaries."""
    horizon = checkpoint.version
    put_checkpoint(conn, memory_id, checkpoint)
    (cutoff,) = conn.execute(
        "SELECT coalesce(max(seq), 0) FROM updates WHERE memory_id = ? AND version <= ?", (memory_id, horizon)
    ).fetchone()
    removed = conn.execute("DELETE FROM updates WHERE memory_id = ? AND seq <= ?", (memory_id, cutoff)).rowcount
    conn.execute("DELETE FROM touches WHERE memory_id = ? AND seq <= ?", (memory_id, cutoff))
    conn.execute("DELETE FROM sightings WHERE memory_id = ? AND seq <= ?", (memory_id, cutoff))
    conn.execute("DELETE FROM checkpoints WHERE memory_id = ? AND version < ?", (memory_id, horizon))
    conn.execute(
        "INSERT OR REPLACE INTO horizons VALUES (?, ?, ?, ?)",
        (memory_id, horizon, when.isoformat(), json.dumps(summaries)),
    )
    return int(removed)


def horizon(conn: sqlite3.Connection, memory_id: int) -> tuple[int, datetime, dict[str, Any]] | None:
    row = conn.execute("SELECT version, time, summaries FROM horizons WHERE memory_id = ?", (memory_id,)).fetchone()
    return None if row is None else (int(row[0]), datetime.fromisoformat(row[1]), json.loads(row[2]))
