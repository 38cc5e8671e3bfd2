"""Writing what a run of applied updates changes (:class:`NetChange`) in a SQLite memory's state.

Each table gets one statement for the whole run instead of one per fact. A run that fails a
check in the database is written again one fact at a time, so the refusal names the fact at fault.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from kg_memory.errors import NotApplicable
from kg_memory.model import Entity, Fact
from kg_memory.stores._net import NetChange

# a fact's rows are found by the facts' unique key, (memory_id, predicate, args)
_DELETE_ARG = (
    "DELETE FROM fact_args WHERE memory_id = ?1 AND entity = ?2"
    " AND fact_id = (SELECT id FROM facts WHERE memory_id = ?1 AND predicate = ?3 AND args = ?4)"
)
_DELETE_FACT = "DELETE FROM facts WHERE memory_id = ? AND predicate = ? AND args = ? AND number IS ?"
_INSERT_FACT = "INSERT INTO facts (memory_id, predicate, args, number) VALUES (?, ?, ?, ?)"
_INSERT_ARG = "INSERT INTO fact_args SELECT ?1, ?2, id FROM facts WHERE memory_id = ?1 AND predicate = ?3 AND args = ?4"

# CROSS JOIN keeps the keys the outer loop: each is then one lookup in the facts' unique index
_STORED_AT_KEYS = (
    "SELECT f.predicate, f.args, f.number FROM json_each(?1) j CROSS JOIN facts f"
    " WHERE f.memory_id = ?2 AND f.predicate = j.value ->> 0 AND f.args = j.value ->> 1"
)


class Unnamed(Exception):
    """A check failed in the database for one of several facts: write the run one by one to name it."""


def write(conn: sqlite3.Connection, memory_id: int, change: NetChange, *, one_by_one: bool = False) -> None:
    """Write ``change`` into the transaction ``conn`` holds; :class:`NotApplicable` when it does
    not apply, or :class:`Unnamed` when it does not and ``one_by_one`` is off."""
    if change.is_empty:
        return
    _check_named(conn, change.memory, memory_id, change.named)
    insert_entities(conn, change.memory, memory_id, change.created.values())
    _check_assumed(conn, memory_id, change)
    _remove(conn, change.memory, memory_id, change.removed, one_by_one=one_by_one)
    add_facts(conn, change.memory, memory_id, change.added, one_by_one=one_by_one)


def insert_entities(conn: sqlite3.Connection, memory: str, memory_id: int, entities: Iterable[Entity]) -> None:
    rows = [(memory_id, e.name, e.type, e.label, json.dumps(dict(e.attrs))) for e in entities]
    if not rows:  # most updates create none: no statement for them
        return
    try:
        conn.executemany("INSERT INTO entities VALUES (?, ?, ?, ?, ?)", rows)
    except sqlite3.IntegrityError as exc:
        raise NotApplicable(memory, f"an entity to create already exists ({exc})") from exc


def add_facts(
    conn: sqlite3.Connection, memory: str, memory_id: int, facts: list[Fact], *, one_by_one: bool = False
) -> None:
    """Insert ``facts`` (none of which may hold) and their argument rows."""
    if not facts:
        return
    rows = [(memory_id, f.predicate, " ".join(f.args), f.value) for f in facts]
    if one_by_one:
        for fact, row in zip(facts, rows, strict=True):
            try:
                conn.execute(_INSERT_FACT, row)
            except sqlite3.IntegrityError as exc:
                raise NotApplicable(memory, f"{fact} already holds") from exc
    else:
        try:
            conn.executemany(_INSERT_FACT, rows)
        except sqlite3.IntegrityError as exc:
            raise Unnamed from exc
    conn.executemany(_INSERT_ARG, _arg_rows(memory_id, facts))


def _remove(conn: sqlite3.Connection, memory: str, memory_id: int, facts: list[Fact], *, one_by_one: bool) -> None:
    if not facts:
        return
    conn.executemany(_DELETE_ARG, _arg_rows(memory_id, facts))
    rows = [(memory_id, f.predicate, " ".join(f.args), f.value) for f in facts]
    if not one_by_one:
        if conn.executemany(_DELETE_FACT, rows).rowcount != len(rows):
            raise Unnamed
        return
    for fact, row in zip(facts, rows, strict=True):
        if conn.execute(_DELETE_FACT, row).rowcount != 1:
            raise NotApplicable(memory, f"{fact} does not hold, so it cannot be removed")


def _check_assumed(conn: sqlite3.Connection, memory_id: int, change: NetChange) -> None:
    """What the run takes to be stored where it writes nothing (a fact it adds and removes again)."""
    keys = [[predicate, " ".join(args)] for predicate, args in change.assumed]
    if not keys:
        return
    rows = conn.execute(_STORED_AT_KEYS, (json.dumps(keys), memory_id))
    refusal = change.refusal({(p, tuple(a.split())): Fact.unchecked(p, tuple(a.split()), n) for p, a, n in rows})
    if refusal is not None:
        raise refusal


def existing(conn: sqlite3.Connection, memory_id: int, names: Iterable[str]) -> list[str]:
    """Those of ``names`` that are stored entities of the memory."""
    query = "SELECT name FROM entities WHERE memory_id = ? AND name IN (SELECT value FROM json_each(?))"
    return [name for (name,) in conn.execute(query, (memory_id, json.dumps(list(names))))]


def _check_named(conn: sqlite3.Connection, memory: str, memory_id: int, names: set[str]) -> None:
    if not names:
        return
    missing = names - set(existing(conn, memory_id, sorted(names)))
    if missing:
        raise NotApplicable(memory, f"facts name entities that do not exist: {sorted(missing)}")


def _arg_rows(memory_id: int, facts: Iterable[Fact]) -> list[tuple[int, str, str, str]]:
    """One row per fact and distinct argument: (memory_id, entity, predicate, args)."""
    return [(memory_id, arg, f.predicate, " ".join(f.args)) for f in facts for arg in set(f.args)]
