"""The embedded default store: one SQLite file in WAL mode.

Each thread gets its own connection. Writes run in ``BEGIN IMMEDIATE`` transactions, so
the version check and the write are one atomic step and a killed process leaves the file
at its last committed update.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from kg_memory.domain import DomainRegistry
from kg_memory.errors import (
    InvalidValue,
    MemoryExists,
    NotApplicable,
    StoreUnavailable,
    UnknownMemory,
    UnknownUpdate,
    VersionConflict,
)
from kg_memory.history import DEFAULT_CHECKPOINT_EVERY, Checkpoint, HistoryQuery
from kg_memory.model import Delta, Entity, Fact, Memory, Update, normalise_name, pddl_name
from kg_memory.store import Embeddings, StagedCommit, dimension_clash, embedding_rows, float32_vector
from kg_memory.stores import _sqlite_log as _log
from kg_memory.stores import _sqlite_state as _state
from kg_memory.stores._common import (
    attrs_from_text,
    check_commit,
    check_created,
    check_deletable,
    check_group,
    check_load,
    check_record,
)
from kg_memory.stores._net import NetChange, in_runs
from kg_memory.stores._sqlite_vectors import cosine as _cosine
from kg_memory.stores._sqlite_vectors import pack as _pack
from kg_memory.stores._sqlite_vectors import unpack as _unpack

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, domain TEXT NOT NULL,
    version INTEGER NOT NULL, next_seq INTEGER NOT NULL, created TEXT NOT NULL,
    importing INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS entities (
    memory_id INTEGER NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL, label TEXT NOT NULL,
    attrs TEXT NOT NULL, PRIMARY KEY (memory_id, name)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY, memory_id INTEGER NOT NULL, predicate TEXT NOT NULL, args TEXT NOT NULL,
    number REAL, UNIQUE (memory_id, predicate, args));
CREATE TABLE IF NOT EXISTS fact_args (
    memory_id INTEGER NOT NULL, entity TEXT NOT NULL, fact_id INTEGER NOT NULL,
    PRIMARY KEY (memory_id, entity, fact_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS updates (
    memory_id INTEGER NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, source TEXT NOT NULL,
    input TEXT NOT NULL, delta TEXT NOT NULL, status TEXT NOT NULL, issues TEXT NOT NULL,
    version INTEGER NOT NULL, time TEXT NOT NULL, meta TEXT NOT NULL, ts INTEGER NOT NULL DEFAULT 0,
    mts INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (memory_id, seq),
    UNIQUE (memory_id, id));
CREATE TABLE IF NOT EXISTS embeddings (
    memory_id INTEGER NOT NULL, name TEXT NOT NULL, text_hash TEXT NOT NULL, dim INTEGER NOT NULL,
    vector BLOB NOT NULL, PRIMARY KEY (memory_id, name)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS facts_nullary ON facts (memory_id) WHERE args = '';
"""
T = TypeVar("T")
# A connection's page cache once it has written: a large update's B-tree pages (facts, their
# arguments, touches) then stay in memory from one update to the next. Readers keep SQLite's
# small default, so a service's many reading threads do not each hold a copy of the file.
DEFAULT_WRITER_CACHE_MIB = 64
# WAL pages before a commit also checkpoints them into the file. SQLite's default (1,000) is less
# than one large update writes, so every such commit paid a checkpoint; at this many, successive
# updates share the pages they checkpoint.
WAL_CHECKPOINT_PAGES = 10_000
_FACT_ROWS = "SELECT f.predicate, f.args, f.number FROM facts f"
# A numeric fact (an action cost) keeps its value in ``number``; a predicate's row has NULL
# there. (memory, predicate, args) stays unique: a function has one value per arguments.


def _fact(predicate: str, args: str, number: float | None) -> Fact:
    return Fact.unchecked(predicate, tuple(args.split()), number)


def _add_number_column(conn: sqlite3.Connection) -> None:
    """Files made before action costs have no ``number`` column: add it (NULL = a predicate)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(facts)")}
    if "number" not in columns:
        conn.execute("ALTER TABLE facts ADD COLUMN number REAL")


def _add_importing_column(conn: sqlite3.Connection) -> None:
    """Files made before imports hid their memory have no ``importing`` column: add it."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(memories)")}
    if "importing" not in columns:
        conn.execute("ALTER TABLE memories ADD COLUMN importing INTEGER NOT NULL DEFAULT 0")


def _json_list(values: Iterable[str]) -> str:
    return json.dumps(list(values))


class SQLiteStore:
    backend = "sqlite"

    def __init__(
        self,
        path: Path | str,
        domains: DomainRegistry | None = None,
        *,
        synchronous: str = "FULL",
        checkpoint_every: int = DEFAULT_CHECKPOINT_EVERY,
        writer_cache_mib: int = DEFAULT_WRITER_CACHE_MIB,
    ) -> None:
        if writer_cache_mib < 1:
            raise InvalidValue("writer_cache_mib", writer_cache_mib, "it must be at least 1 (MiB)")
        self.path = Path(path)
        self.domains = domains or DomainRegistry()
        self.checkpoint_every = checkpoint_every
        self.writer_cache_mib = writer_cache_mib
        self._synchronous = synchronous
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._staging = threading.Lock()  # held from a group's staging to its commit's end
        self._stager: sqlite3.Connection | None = None
        if self.path.is_dir():  # sqlite's own words ("unable to open database file") name neither
            raise StoreUnavailable(self.backend, f"open of {self.path}", "it is a directory, not a database file")
        with self._errors(f"open of {self.path}"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn().executescript(_SCHEMA)
            _add_number_column(self._conn())
            _add_importing_column(self._conn())
            _log.migrate(self._conn())

    # -- connections and transactions ------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
            self._local.conn, self._local.writer = conn, False
            with self._lock:
                self._all.append(conn)
        return conn

    @contextlib.contextmanager
    def _errors(self, operation: str, memory: str = "") -> Iterator[None]:
        try:
            yield
        except sqlite3.IntegrityError as exc:  # a constraint caught what the checks above did not
            raise NotApplicable(memory, f"{operation} would break the store's integrity ({exc})") from exc
        except (sqlite3.OperationalError, sqlite3.DatabaseError, OSError) as exc:
            raise StoreUnavailable(self.backend, operation, str(exc)) from exc

    @contextlib.contextmanager
    def _write(self, operation: str, memory: str = "") -> Iterator[sqlite3.Connection]:
        with self._errors(operation, memory):
            conn = self._conn()
            if not getattr(self._local, "writer", False):
                conn.execute(f"PRAGMA cache_size=-{self.writer_cache_mib * 1024}")  # in KiB when negative
                self._local.writer = True
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _memory_row(
        self, conn: sqlite3.Connection, name: str, *, importing: bool = False
    ) -> tuple[int, str, int, int, str]:
        """The memory's row; one being imported only for the import's own steps (``importing``)."""
        name = normalise_name(name)  # looked up as it was created
        hidden = "" if importing else " AND importing = 0"
        row = conn.execute(
            f"SELECT id, domain, version, next_seq, created FROM memories WHERE name = ?{hidden}", (name,)
        ).fetchone()
        if row is None:
            raise UnknownMemory(name)
        return row  # type: ignore[no-any-return]

    def _memory_id(self, name: str) -> int:
        with self._errors("read"):
            return self._memory_row(self._conn(), name)[0]

    # -- memories ---------------------------------------------------------------------------

    def create_memory(self, name: str, domain: str, *, importing: bool = False) -> Memory:
        name = pddl_name(name, "memory")
        constants = self.domains.get(domain).constant_entities()
        created = datetime.now(UTC)
        with self._write("create memory") as conn:
            found = conn.execute("SELECT importing FROM memories WHERE name = ?", (name,)).fetchone()
            if found is not None:
                raise MemoryExists.importing(name) if found[0] else MemoryExists(name)
            cursor = conn.execute(
                "INSERT INTO memories (name, domain, version, next_seq, created, importing) VALUES (?, ?, 0, 1, ?, ?)",
                (name, domain, created.isoformat(), int(importing)),
            )
            _state.insert_entities(conn, name, int(cursor.lastrowid or 0), constants)
        return Memory(name, domain, 0, created)

    def get_memory(self, name: str) -> Memory:
        name = normalise_name(name)
        with self._errors("read"):
            _, domain, version, _, created = self._memory_row(self._conn(), name)
        return Memory(name, domain, version, datetime.fromisoformat(created))

    def list_memories(self) -> list[Memory]:
        with self._errors("read"):
            rows = self._conn().execute(
                "SELECT name, domain, version, created FROM memories WHERE importing = 0 ORDER BY name"
            )
            return [Memory(n, d, v, datetime.fromisoformat(c)) for n, d, v, c in rows]

    def delete_memory(self, name: str, *, importing: bool | None = None) -> None:
        name = normalise_name(name)
        with self._write("delete memory") as conn:  # checked under the write lock it is deleted in
            found = conn.execute("SELECT id, importing FROM memories WHERE name = ?", (name,)).fetchone()
            if found is None:
                raise UnknownMemory(name)
            check_deletable(name, hidden=bool(found[1]), importing=importing)
            memory_id = found[0]
            for table in ("fact_args", "facts", "entities", "updates", "embeddings", *_log.TABLES):
                conn.execute(f"DELETE FROM {table} WHERE memory_id = ?", (memory_id,))
            conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))

    # -- reads ------------------------------------------------------------------------------

    def _rows_by_name(self, memory: str, select: str, names: Iterable[str] | None) -> list[Any]:
        """``select`` rows of one memory (its table has ``memory_id`` and ``name``), optionally by name."""
        query = f"{select} WHERE memory_id = ?"
        params: list[object] = [self._memory_id(memory)]
        if names is not None:
            query += " AND name IN (SELECT value FROM json_each(?))"
            params.append(_json_list(names))
        with self._errors("read"):
            return self._conn().execute(query, params).fetchall()

    def entities(self, memory: str, names: Iterable[str] | None = None) -> dict[str, Entity]:
        rows = self._rows_by_name(memory, "SELECT name, type, label, attrs FROM entities", names)
        return {n: Entity.unchecked(n, t, label, attrs_from_text(a)) for n, t, label, a in rows}

    def facts(self, memory: str, predicate: str | None = None, entity: str | None = None) -> frozenset[Fact]:
        memory_id = self._memory_id(memory)
        query = f"{_FACT_ROWS} WHERE f.memory_id = ?"
        params: list[object] = [memory_id]
        if entity is not None:
            query = f"{_FACT_ROWS} JOIN fact_args a ON a.fact_id = f.id WHERE a.memory_id = ? AND a.entity = ?"
            params.append(entity)
        if predicate is not None:
            query += " AND f.predicate = ?"
            params.append(predicate)
        with self._errors("read"):
            return frozenset(_fact(p, a, n) for p, a, n in self._conn().execute(query, params))

    def facts_about(self, memory: str, names: Iterable[str], limit: int | None = None) -> frozenset[Fact]:
        memory_id = self._memory_id(memory)
        query = (
            f"{_FACT_ROWS} JOIN fact_args a ON a.fact_id = f.id WHERE a.memory_id = ?"
            " AND a.entity IN (SELECT value FROM json_each(?))"
            # the partial index keeps this branch from walking every fact of the memory
            f" UNION ALL {_FACT_ROWS} INDEXED BY facts_nullary WHERE f.memory_id = ? AND f.args = ''"
        )
        params: tuple[object, ...] = (memory_id, _json_list(names), memory_id)
        if limit is not None:
            query = f"SELECT DISTINCT predicate, args, number FROM ({query}) ORDER BY predicate, args LIMIT ?"
            params += (limit,)
        with self._errors("read"):
            return frozenset(_fact(p, a, n) for p, a, n in self._conn().execute(query, params))

    # -- writes -----------------------------------------------------------------------------

    def commit(self, update: Update, expected_version: int, *, created: datetime | None = None) -> Update:
        check_commit(update)
        return self.commit_group(update.memory, [update], expected_version, created=created)[0]

    def commit_group(
        self, memory: str, updates: Sequence[Update], expected_version: int, *, created: datetime | None = None
    ) -> list[Update]:
        check_group(memory, updates)
        if not updates:
            return []
        statements = partial(self._group_statements, memory, updates, expected_version, created)
        try:
            with self._write("commit", memory) as conn:
                return statements(conn, one_by_one=False)
        except _state.Unnamed:  # rolled back: again, fact by fact, to name the one that does not apply
            with self._write("commit", memory) as conn:
                return statements(conn, one_by_one=True)

    def _group_statements(
        self,
        memory: str,
        updates: Sequence[Update],
        expected_version: int,
        created: datetime | None,
        conn: sqlite3.Connection,
        *,
        one_by_one: bool,
    ) -> list[Update]:
        """Everything of a group's commit but its COMMIT, in the transaction ``conn`` holds."""
        memory_id, _, version, seq, made = self._memory_row(conn, memory)
        check_created(memory, made, created)
        if version != expected_version:
            raise VersionConflict(memory, expected_version, version)
        stored, runs = in_runs(memory, updates, version=version, seq=seq, checkpoint_every=self.checkpoint_every)
        for run in runs:
            _state.write(conn, memory_id, run.change, one_by_one=one_by_one)
            if run.checkpoint is not None:  # in this transaction: all or nothing
                self._write_checkpoint(conn, memory_id, run.checkpoint)
        _log.log(conn, memory_id, stored)
        conn.execute(
            "UPDATE memories SET version = ?, next_seq = ? WHERE id = ?",
            (stored[-1].version, seq + len(stored), memory_id),
        )
        return stored

    def stage_group(
        self, memory: str, updates: Sequence[Update], expected_version: int, *, created: datetime | None = None
    ) -> StagedCommit | None:
        check_group(memory, updates)
        if not updates or not self._staging.acquire(blocking=False):
            return None
        try:
            conn = self._staging_conn()
            conn.execute("BEGIN IMMEDIATE")  # no wait: this connection's timeout is 0
        except (sqlite3.Error, OSError):  # the lock is another writer's (or the file is not there)
            self._staging.release()
            return None
        try:
            stored = self._group_statements(memory, updates, expected_version, created, conn, one_by_one=False)
        except Exception:  # committed the usual way instead, which names what fails
            _rolled_back(conn)
            self._staging.release()
            return None
        except BaseException:
            _rolled_back(conn)
            self._staging.release()
            raise
        return _Staged(self, conn, memory, stored)

    def _staging_conn(self) -> sqlite3.Connection:
        """The connection staged groups are written on: its own, so that its transaction, whose
        COMMIT another thread runs, is never the one a read of the staging thread uses; and one that
        never waits for the write lock."""
        if self._stager is None:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=0.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
            conn.execute(f"PRAGMA cache_size=-{self.writer_cache_mib * 1024}")  # in KiB when negative
            with self._lock:
                self._all.append(conn)
            self._stager = conn
        return self._stager

    def _write_checkpoint(self, conn: sqlite3.Connection, memory_id: int, version: int) -> None:
        _log.put_checkpoint(conn, memory_id, _log.current_checkpoint(conn, memory_id, version))

    def record(self, update: Update, *, created: datetime | None = None) -> Update:
        check_record(update)
        with self._write("record", update.memory) as conn:
            memory_id, _, version, seq, made = self._memory_row(conn, update.memory)
            check_created(update.memory, made, created)
            stored = update.stamped(seq=seq, version=version)
            _log.log(conn, memory_id, [stored])
            conn.execute("UPDATE memories SET next_seq = ? WHERE id = ?", (seq + 1, memory_id))
        return stored

    # -- embeddings (derived data: not logged, no new version) --------------------------------

    def embeddings(self, memory: str, names: Iterable[str] | None = None) -> Embeddings:
        rows = self._rows_by_name(memory, "SELECT name, text_hash, vector FROM embeddings", names)
        return {n: (h, _unpack(v)) for n, h, v in rows}

    def put_embeddings(self, memory: str, rows: Mapping[str, tuple[str, Sequence[float]]]) -> None:
        checked = embedding_rows(memory, rows)
        with self._write("put embeddings", memory) as conn:
            memory_id = self._memory_row(conn, memory)[0]
            if not checked:
                return
            missing = set(checked) - set(_state.existing(conn, memory_id, checked))
            if missing:
                raise NotApplicable(memory, f"embeddings name entities that do not exist: {sorted(missing)}")
            dim = len(next(iter(checked.values()))[1])
            kept = conn.execute(
                "SELECT DISTINCT dim FROM embeddings"
                " WHERE memory_id = ? AND name NOT IN (SELECT value FROM json_each(?))",
                (memory_id, _json_list(checked)),
            )
            dimension_clash(memory, dim, (d for (d,) in kept))
            conn.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)",
                [(memory_id, n, h, len(v), _pack(v)) for n, (h, v) in checked.items()],
            )

    def nearest(self, memory: str, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """An exact scan: fine for the thousands of entities a memory holds."""
        query = float32_vector(memory, "the query", vector)
        if k < 0:
            raise InvalidValue("number of neighbours", k, "need k >= 0")
        stored = self.embeddings(memory)
        wrong = sorted(n for n, (_, v) in stored.items() if len(v) != len(query))
        if wrong:
            raise InvalidValue(
                "query vector", len(query), f"dimension differs from the stored embeddings of {wrong[:5]}"
            )
        scores = ((n, _cosine(query, v)) for n, (_, v) in stored.items())
        return heapq.nsmallest(k, scores, key=lambda row: (-row[1], row[0]))

    # -- history (see _sqlite_log) ---------------------------------------------------------

    def _read(self, work: Callable[[sqlite3.Connection, int], T], memory: str) -> T:
        memory_id = self._memory_id(memory)
        with self._errors("read"):
            return work(self._conn(), memory_id)

    def history(self, memory: str, since_seq: int = 0, limit: int | None = None) -> list[Update]:
        return self._read(lambda c, m: _log.history(c, memory, m, since_seq, limit), memory)

    def history_rows(self, memory: str, since_seq: int, limit: int) -> list[tuple[Any, ...]]:
        """The log's rows after ``since_seq`` undecoded, for an export that streams them as they are."""
        return self._read(lambda c, m: _log.history_rows(c, m, since_seq, limit), memory)

    def get_update(self, memory: str, update_id: str) -> Update:
        found = self._read(lambda c, m: _log.get_update(c, memory, m, update_id), memory)
        if found is None:
            raise UnknownUpdate(memory, update_id)
        return found

    def query_history(self, memory: str, query: HistoryQuery) -> list[Update]:
        return self._read(lambda c, m: _log.query(c, memory, m, query), memory)

    def nearest_checkpoint(self, memory: str, version: int) -> Checkpoint | None:
        return self._read(lambda c, m: _log.nearest_checkpoint(c, m, version), memory)

    def replay_from(self, memory: str, version: int) -> tuple[Checkpoint | None, list[Delta]]:
        memory_id = self._memory_id(memory)
        with self._errors("read"):
            conn = self._conn()
            conn.execute("BEGIN")  # one snapshot: a checkpoint written meanwhile cannot split the two reads
            try:
                return _log.replay_from(conn, memory_id, version)
            finally:
                conn.execute("COMMIT")

    def horizon(self, memory: str) -> tuple[int, datetime, dict[str, Any]] | None:
        return self._read(_log.horizon, memory)

    def load_history(self, memory: str, updates: Sequence[Update], checkpoints: Sequence[Checkpoint] = ()) -> None:
        self.load_prepared(memory, self.prepare_history(memory, updates, checkpoints))

    def prepare_history(
        self, memory: str, updates: Sequence[Update], checkpoints: Sequence[Checkpoint] = ()
    ) -> _log.LoadBatch | None:
        """:meth:`load_history`'s Python work, before (and on another thread than) its writing."""
        check_load(memory, updates)
        return _log.prepare(updates, checkpoints) if updates else None

    def load_prepared(self, memory: str, batch: _log.LoadBatch | None) -> None:
        """:meth:`load_history`'s writing of a batch :meth:`prepare_history` made."""
        if batch is None:
            return
        with self._write("import", memory) as conn:
            memory_id, _, version, seq, _ = self._memory_row(conn, memory, importing=True)
            if batch.first_seq != seq:
                raise NotApplicable(memory, f"the history resumes at seq {batch.first_seq}, not {seq}")
            repeated = _log.duplicate_ids(conn, memory_id, batch)
            if repeated:
                raise NotApplicable(memory, f"update ids must be unique; {repeated[0]!r} is repeated")
            _log.load(conn, memory_id, batch)
            conn.execute(
                "UPDATE memories SET version = ?, next_seq = ? WHERE id = ?",
                (max(version, batch.last_version), batch.last_seq + 1, memory_id),
            )

    def load_state(self, memory: str, entities: Iterable[Entity], facts: Iterable[Fact]) -> None:
        with self._write("import", memory) as conn:
            memory_id = self._memory_row(conn, memory, importing=True)[0]
            conn.execute("UPDATE memories SET importing = 0 WHERE id = ?", (memory_id,))
            existing = set(_state.existing(conn, memory_id, [e.name for e in entities]))
            _state.insert_entities(conn, memory, memory_id, [e for e in entities if e.name not in existing])
            change = NetChange(memory)
            change.take(Delta(add=frozenset(facts)))
            _state.write(conn, memory_id, change, one_by_one=True)

    def compact(
        self,
        memory: str,
        checkpoint: Checkpoint,
        when: datetime,
        summaries: dict[str, Any],
        *,
        created: datetime | None = None,
    ) -> int:
        with self._write("compact", memory) as conn:
            memory_id, *_, made = self._memory_row(conn, memory)
            check_created(memory, made, created)
            return _log.compact(conn, memory_id, checkpoint, when, summaries)

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
        self._stager = None


class _Staged:
    """A group staged on the store's staging connection (:meth:`SQLiteStore.stage_group`)."""

    def __init__(self, store: SQLiteStore, conn: sqlite3.Connection, memory: str, stored: list[Update]) -> None:
        self._store, self._conn, self._memory, self._stored = store, conn, memory, stored
        self._open = True

    def finish(self) -> list[Update]:
        self._close()
        try:
            with self._store._errors("commit", self._memory):
                self._conn.execute("COMMIT")
        except BaseException:
            _rolled_back(self._conn)
            raise
        finally:
            self._store._staging.release()
        return self._stored

    def abandon(self) -> None:
        self._close()
        try:
            _rolled_back(self._conn)
        finally:
            self._store._staging.release()

    def _close(self) -> None:
        if not self._open:
            raise RuntimeError("a staged commit is finished or abandoned once")
        self._open = False


def _rolled_back(conn: sqlite3.Connection) -> None:
    """ROLLBACK where a transaction is still open (a failed COMMIT may have ended it already)."""
    with contextlib.suppress(sqlite3.Error):  # a closed connection raises at the question itself
        if conn.in_transaction:
            conn.execute("ROLLBACK")
