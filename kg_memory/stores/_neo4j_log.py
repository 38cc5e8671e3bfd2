"""The Neo4j store's history: update nodes and their indexes, ``(:Touch)`` nodes (which update
touched which entity), ``(:Checkpoint)`` nodes, bulk loading for imports and compaction.
Transaction functions only; the store owns sessions. Every query is parametrized."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import neo4j

from kg_memory.domain import Domain
from kg_memory.history import Checkpoint, HistoryQuery, timestamp_us, touched
from kg_memory.model import Delta, Entity, Update
from kg_memory.stores._common import UPDATE_COLUMNS, attrs_from_text, update_from_row, update_row
from kg_memory.stores._neo4j_tx import facts_of_predicate

# The index on (memory, id) became a uniqueness constraint (duplicate ids are refused).
SCHEMA = (
    "DROP INDEX l3mp_update_id IF EXISTS",
    "CREATE CONSTRAINT l3mp_update_id_unique IF NOT EXISTS FOR (u:Update) REQUIRE (u.memory, u.id) IS UNIQUE",
    "CREATE INDEX l3mp_update_time IF NOT EXISTS FOR (u:Update) ON (u.memory, u.ts)",
    "CREATE INDEX l3mp_update_version IF NOT EXISTS FOR (u:Update) ON (u.memory, u.version)",
    "CREATE INDEX l3mp_update_source IF NOT EXISTS FOR (u:Update) ON (u.memory, u.source, u.seq)",
    "CREATE INDEX l3mp_update_status IF NOT EXISTS FOR (u:Update) ON (u.memory, u.status, u.seq)",
    "CREATE INDEX l3mp_touch_seq IF NOT EXISTS FOR (t:Touch) ON (t.memory, t.entity, t.seq)",
    "CREATE INDEX l3mp_touch_time IF NOT EXISTS FOR (t:Touch) ON (t.memory, t.entity, t.ts)",
    "CREATE CONSTRAINT l3mp_checkpoint_key IF NOT EXISTS FOR (c:Checkpoint) REQUIRE (c.memory, c.version) IS UNIQUE",
)
LABELS = ("Touch", "Checkpoint")


def _row(update: Update) -> dict[str, Any]:
    row = update_row(update)
    return {**{c: row[c] for c in UPDATE_COLUMNS}, "ts": timestamp_us(update.time)}


def _touches(updates: Iterable[Update]) -> list[dict[str, Any]]:
    return [
        {"entity": name, "seq": u.seq, "ts": timestamp_us(u.time), "seen": seen}
        for u in updates
        for name, seen in touched(u).items()
    ]


def log(tx: neo4j.ManagedTransaction, updates: Sequence[Update]) -> None:
    """Update nodes and their touches (the history of one memory)."""
    if not updates:
        return
    memory = updates[0].memory
    tx.run(
        "UNWIND $rows AS row CREATE (u:Update {memory: $memory}) SET u += row",
        memory=memory,
        rows=[_row(u) for u in updates],
    ).consume()
    tx.run(
        "UNWIND $rows AS row CREATE (t:Touch {memory: $memory}) SET t += row", memory=memory, rows=_touches(updates)
    ).consume()


def current_checkpoint(tx: neo4j.ManagedTransaction, memory: str, domain: Domain, version: int) -> Checkpoint:
    rows = tx.run(
        "MATCH (e:Entity {memory: $memory}) RETURN collect([e.name, e.type, e.label, e.attrs]) AS rows", memory=memory
    ).single(strict=True)["rows"]
    entities = tuple(
        sorted((Entity.unchecked(n, t, lb, attrs_from_text(a)) for n, t, lb, a in rows), key=lambda e: e.name)
    )
    facts = frozenset(
        fact for p in domain.predicates.values() for fact in facts_of_predicate(tx, memory, p.name, p.arity, p.numeric)
    )
    return Checkpoint(version, entities, facts)


def put_checkpoint(tx: neo4j.ManagedTransaction, memory: str, checkpoint: Checkpoint) -> None:
    tx.run(
        "MERGE (c:Checkpoint {memory: $memory, version: $version}) SET c.state = $state",
        memory=memory,
        version=checkpoint.version,
        state=checkpoint.encode(),
    ).consume()


# The replay's and import's queries, by name so a test can EXPLAIN exactly what runs.
CHECKPOINT_QUERY = (
    "MATCH (c:Checkpoint {memory: $memory}) WHERE c.version <= $version "
    "RETURN c.state AS state ORDER BY c.version DESC LIMIT 1"
)
REPLAY_QUERY = (
    "MATCH (u:Update {memory: $memory}) USING INDEX u:Update(memory, version) "
    "WHERE u.version > $after AND u.version <= $upto AND u.status = 'applied' "
    "RETURN u.delta AS delta ORDER BY u.version"
)
DUPLICATES_QUERY = "UNWIND $ids AS id MATCH (u:Update {memory: $memory, id: id}) RETURN u.id AS id"


def nearest_checkpoint(tx: neo4j.ManagedTransaction, memory: str, version: int) -> Checkpoint | None:
    record = tx.run(CHECKPOINT_QUERY, memory=memory, version=version).single()
    return None if record is None else Checkpoint.decode(bytes(record["state"]))


def replay_from(tx: neo4j.ManagedTransaction, memory: str, version: int) -> tuple[Checkpoint | None, list[Delta]]:
    """The nearest checkpoint and the deltas of the applied updates after it, in one transaction."""
    checkpoint = nearest_checkpoint(tx, memory, version)
    rows = tx.run(
        REPLAY_QUERY,
        memory=memory,
        after=0 if checkpoint is None else checkpoint.version,
        upto=version,
    )
    return checkpoint, [Delta.from_stored(json.loads(r["delta"])) for r in rows]


def query_text(q: HistoryQuery) -> tuple[str, dict[str, Any]]:
    """The Cypher of one page of a history query, with only the clauses it needs (so the
    planner can seek the index on the range it is given)."""
    params: dict[str, Any] = {"limit": q.limit}
    node, key = ("t", "t.seq") if q.entity is not None else ("u", "u.seq")
    where = []
    for clause, name, value in (
        (f"{key} > $after", "after", q.after),  # always: it names seq, which the index hint needs
        (f"{key} < $before", "before", q.before),
        (f"{node}.ts >= $since", "since", q.since_us),
        (f"{node}.ts < $until", "until", q.until_us),
        ("t.seen = true", "seen", True if q.seen_only else None),
    ):
        if value is not None:
            where.append(clause)
            params[name] = value
    filters = []
    for clause, name, text in (
        ("u.source = $source", "source", q.source.value if q.source else None),
        ("u.status = $status", "status", q.status.value if q.status else None),
    ):
        if text is not None:
            filters.append(clause)
            params[name] = text
    order = f"ORDER BY {key} {'DESC' if q.newest_first else 'ASC'}"
    if q.entity is not None:
        params["entity"] = q.entity
        cond = f" WHERE {' AND '.join(where)}" if where else ""
        text = (
            f"MATCH (t:Touch {{memory: $memory, entity: $entity}}) USING INDEX t:Touch(memory, entity, seq){cond} "
            # the hint: on a young database the planner may prefer a label scan to the (memory, seq) index
            "MATCH (u:Update {memory: $memory, seq: t.seq}) USING INDEX u:Update(memory, seq) "
            f"{'WHERE ' + ' AND '.join(filters) if filters else ''} "
        )
    else:
        conds = where + filters
        text = f"MATCH (u:Update {{memory: $memory}}){' WHERE ' + ' AND '.join(conds) if conds else ''} "
    return text + f"RETURN u {order} LIMIT $limit", params


def query(tx: neo4j.ManagedTransaction, memory: str, q: HistoryQuery) -> list[Update]:
    text, params = query_text(q)
    return [update_from_row(memory, dict(r["u"])) for r in tx.run(text, params, memory=memory)]


def duplicate_ids(tx: neo4j.ManagedTransaction, memory: str, updates: Sequence[Update]) -> list[str]:
    seen: set[str] = set()
    repeated = [u.id for u in updates if u.id in seen or seen.add(u.id)]  # type: ignore[func-returns-value]
    stored = tx.run(
        DUPLICATES_QUERY,
        ids=[u.id for u in updates],
        memory=memory,
    ).value()
    return repeated + list(stored)


def compact(
    tx: neo4j.ManagedTransaction, memory: str, checkpoint: Checkpoint, when: datetime, summaries: dict[str, Any]
) -> int:
    put_checkpoint(tx, memory, checkpoint)
    cutoff = tx.run(
        "MATCH (u:Update {memory: $memory}) WHERE u.version <= $h RETURN coalesce(max(u.seq), 0) AS s",
        memory=memory,
        h=checkpoint.version,
    ).single(strict=True)["s"]
    removed = tx.run(
        "MATCH (u:Update {memory: $memory}) WHERE u.seq <= $cutoff DELETE u RETURN count(*) AS n",
        memory=memory,
        cutoff=cutoff,
    ).single(strict=True)["n"]
    tx.run("MATCH (t:Touch {memory: $memory}) WHERE t.seq <= $cutoff DELETE t", memory=memory, cutoff=cutoff).consume()
    tx.run(
        "MATCH (c:Checkpoint {memory: $memory}) WHERE c.version < $h DELETE c", memory=memory, h=checkpoint.version
    ).consume()
    tx.run(
        "MATCH (m:Memory {name: $memory}) SET m.horizon = $h, m.horizon_time = $time, m.horizon_summaries = $s",
        memory=memory,
        h=checkpoint.version,
        time=when.isoformat(),
        s=json.dumps(summaries),
    ).consume()
    return int(removed)


def horizon(tx: neo4j.ManagedTransaction, memory: str) -> tuple[int, datetime, dict[str, Any]] | None:
    record = tx.run("MATCH (m:Memory {name: $memory}) RETURN properties(m) AS p", memory=memory).single()
    found = {} if record is None else record["p"]
    if found.get("horizon") is None:
        return None
    return int(found["horizon"]), datetime.fromisoformat(found["horizon_time"]), json.loads(found["horizon_summaries"])
