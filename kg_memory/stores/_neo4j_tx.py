"""Transaction functions of the Neo4j store: locking, entity creation, fact changes,
the history log and embeddings. Only validated predicate and type names are ever interpolated (``quote``)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

import neo4j

from kg_memory.domain import Domain
from kg_memory.errors import InvalidValue, NotApplicable, UnknownMemory
from kg_memory.model import Entity, Fact, Update, is_pddl_name
from kg_memory.store import Embeddings, dimension_clash
from kg_memory.stores._common import check_created

# a memory an import is filling is not yet there for anything but the import's own steps
VISIBLE = "m.importing IS NULL"


def quote(identifier: str) -> str:
    """Backtick-quote a validated label or relationship type."""
    if not is_pddl_name(identifier):
        raise InvalidValue("Cypher identifier", identifier, "only PDDL names are interpolated")
    return f"`{identifier}`"


def fact_key(fact: Fact) -> str:
    key = " ".join((fact.predicate, *fact.args))
    return key if fact.value is None else f"{key} = {fact.value!r}"


def _layout(fact: Fact) -> int:
    """2: a relationship (a numeric one carries ``value``); 1: a boolean property; 0: a Fact node."""
    if fact.arity == 2:
        return 2
    return 1 if fact.arity == 1 and fact.value is None else 0


def check_delta_names(update: Update, domain: Domain) -> None:
    for fact in update.delta.remove | update.delta.add:
        schema = domain.predicates.get(fact.predicate)
        if schema is None or schema.arity != fact.arity:
            raise NotApplicable(update.memory, f"{fact} does not match the domain's predicates")
    for entity in update.delta.new_entities:
        if entity.type not in domain.types:
            raise NotApplicable(update.memory, f"entity {entity.name} has unknown type {entity.type}")


def lock_memory(
    tx: neo4j.ManagedTransaction, memory: str, *, bump_version: bool, created: datetime | None = None
) -> tuple[int, int]:
    """Take the memory's write lock (the SET) for one update; its version and seq."""
    return reserve(tx, memory, versions=1 if bump_version else 0, seqs=1, created=created)


def reserve(
    tx: neo4j.ManagedTransaction, memory: str, *, versions: int, seqs: int, created: datetime | None = None
) -> tuple[int, int]:
    """Take the memory's write lock (the SET), moving it on by ``versions`` and ``seqs``, and
    read under it the version and the first seq it had before. With ``created``, the memory
    holding the name must be the one made then (:func:`check_created`)."""
    record = tx.run(
        "MATCH (m:Memory {name: $memory}) "
        "SET m.next_seq = m.next_seq + $seqs, m.version = m.version + $versions "
        "RETURN m.version - $versions AS version, m.next_seq - $seqs AS seq, m.created AS created, "
        f"m:Memory AND {VISIBLE} AS live",
        memory=memory,
        versions=versions,
        seqs=seqs,
    ).single()
    # None; nulls if the node was deleted while we waited for its lock; not live if retired, or
    # while an import fills it (only the import's own steps write to it then)
    if record is None or record["version"] is None or record["seq"] is None or not record["live"]:
        raise UnknownMemory(memory)
    check_created(memory, record["created"], created)
    return int(record["version"]), int(record["seq"])


def create_entities(tx: neo4j.ManagedTransaction, memory: str, entities: Iterable[Entity], domain: Domain) -> None:
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in entities:
        by_type[e.type].append({"name": e.name, "type": e.type, "label": e.label, "attrs": json.dumps(dict(e.attrs))})
    for type_, rows in by_type.items():
        if type_ not in domain.types:
            raise NotApplicable(memory, f"unknown entity type {type_}")
        existing = tx.run(
            "UNWIND $rows AS row MATCH (e:Entity {memory: $memory, name: row.name}) RETURN e.name AS name",
            rows=rows,
            memory=memory,
        ).value()
        if existing:
            raise NotApplicable(memory, f"entities already exist: {sorted(existing)}")
        tx.run(
            f"UNWIND $rows AS row CREATE (e:Entity:{quote(type_)} {{memory: $memory}}) SET e += row",
            rows=rows,
            memory=memory,
        ).consume()


def facts_of_predicate(
    tx: neo4j.ManagedTransaction, memory: str, predicate: str, arity: int, numeric: bool = False
) -> Iterator[Fact]:
    if arity == 2:
        rows = tx.run(
            f"MATCH (a:Entity {{memory: $memory}})-[r:{quote(predicate)}]->(b:Entity) "
            "RETURN a.name AS a, b.name AS b, r.value AS v",
            memory=memory,
        )
        return (Fact.unchecked(predicate, (r["a"], r["b"]), r["v"]) for r in rows)
    if arity == 1 and not numeric:
        rows = tx.run(
            f"MATCH (e:Entity {{memory: $memory}}) WHERE e.{quote(predicate)} = true RETURN e.name AS a", memory=memory
        )
        return (Fact.unchecked(predicate, (r["a"],)) for r in rows)
    rows = tx.run(
        "MATCH (f:Fact {memory: $memory, predicate: $p}) RETURN f.args AS args, f.value AS v",
        memory=memory,
        p=predicate,
    )
    return (Fact.unchecked(predicate, tuple(r["args"]), r["v"]) for r in rows)


def _by_predicate(facts: Iterable[Fact]) -> dict[tuple[str, int, bool], list[Fact]]:
    groups: dict[tuple[str, int, bool], list[Fact]] = defaultdict(list)
    for fact in sorted(facts, key=str):
        groups[(fact.predicate, _layout(fact), fact.value is not None)].append(fact)
    return groups


def _expect(memory: str, count: int, facts: list[Fact], problem: str) -> None:
    if count != len(facts):
        shown = ", ".join(str(f) for f in facts[:5])
        raise NotApplicable(memory, f"{len(facts) - count} of [{shown}{', ...' if len(facts) > 5 else ''}] {problem}")


# Cypher per (change, layout): layout 2 is a relationship, 1 a boolean property, 0 a Fact
# node. PRED stands for the backtick-quoted predicate, substituted after validation.
_CHANGE_QUERIES = {
    ("remove", 2): "UNWIND $rows AS row MATCH (a:Entity {memory: $memory, name: row[0]})"
    "-[r:PRED]->(b:Entity {memory: $memory, name: row[1]}) DELETE r RETURN count(r) AS n",
    ("remove", 1): "UNWIND $rows AS row MATCH (e:Entity {memory: $memory, name: row[0]}) WHERE e.PRED = true "
    "REMOVE e.PRED RETURN count(e) AS n",
    ("remove", 0): "UNWIND $rows AS row MATCH (f:Fact {memory: $memory, key: row}) "
    "WITH collect(f) AS found FOREACH (f IN found | DETACH DELETE f) RETURN size(found) AS n",
    ("add", 2): "UNWIND $rows AS row MATCH (a:Entity {memory: $memory, name: row[0]}), "
    "(b:Entity {memory: $memory, name: row[1]}) WHERE NOT (a)-[:PRED]->(b) "
    "CREATE (a)-[:PRED]->(b) RETURN count(*) AS n",
    ("add", 1): "UNWIND $rows AS row MATCH (e:Entity {memory: $memory, name: row[0]}) "
    "WHERE e.PRED IS NULL SET e.PRED = true RETURN count(e) AS n",
    # a numeric binary fact (a distance): the relationship carries its value
    ("remove", 3): "UNWIND $rows AS row MATCH (a:Entity {memory: $memory, name: row[0]})"
    "-[r:PRED]->(b:Entity {memory: $memory, name: row[1]}) WHERE r.value = row[2] DELETE r RETURN count(r) AS n",
    ("add", 3): "UNWIND $rows AS row MATCH (a:Entity {memory: $memory, name: row[0]}), "
    "(b:Entity {memory: $memory, name: row[1]}) WHERE NOT (a)-[:PRED]->(b) "
    "CREATE (a)-[:PRED {value: row[2]}]->(b) RETURN count(*) AS n",
}
_CHANGE_PROBLEMS = {
    "remove": "do not hold, so they cannot be removed",
    "add": "already hold or name entities that do not exist",
}


def change_facts(tx: neo4j.ManagedTransaction, memory: str, facts: Iterable[Fact], change: str) -> None:
    """Remove or add facts, one query per predicate; all must apply or the transaction fails."""
    for (predicate, layout, numeric), group in _by_predicate(facts).items():
        if (change, layout) == ("add", 0):
            _add_fact_nodes(tx, memory, group)
            continue
        rows: list[Any] = [list(f.args) for f in group] if layout else [fact_key(f) for f in group]
        if layout == 2 and numeric:
            layout, rows = 3, [[*f.args, f.value] for f in group]
        query = _CHANGE_QUERIES[(change, layout)].replace("PRED", quote(predicate))
        count = tx.run(query, rows=rows, memory=memory).single(strict=True)["n"]
        _expect(memory, int(count or 0), group, _CHANGE_PROBLEMS[change])


def _add_fact_nodes(tx: neo4j.ManagedTransaction, memory: str, group: list[Fact]) -> None:
    """Nullary and n-ary facts: a Fact node linked to its arguments in order."""
    keys = [fact_key(f) for f in group]
    existing = tx.run(
        "UNWIND $keys AS k MATCH (f:Fact {memory: $memory, key: k}) RETURN f.key", keys=keys, memory=memory
    ).value()
    if existing:
        raise NotApplicable(memory, f"{sorted(existing)} already hold")
    names = sorted({a for f in group for a in f.args})
    found = tx.run(
        "UNWIND $names AS n MATCH (e:Entity {memory: $memory, name: n}) RETURN count(e) AS n",
        names=names,
        memory=memory,
    ).single(strict=True)["n"]
    if found != len(names):
        raise NotApplicable(memory, f"facts {[str(f) for f in group[:5]]} name entities that do not exist")
    tx.run(
        "UNWIND $rows AS row "
        "CREATE (f:Fact {memory: $memory, predicate: row.predicate, args: row.args, key: row.key, value: row.value}) "
        "WITH f, row UNWIND range(0, size(row.args) - 1) AS i "
        "MATCH (e:Entity {memory: $memory, name: row.args[i]}) CREATE (f)-[:ARG {pos: i}]->(e)",
        rows=[{"predicate": f.predicate, "args": list(f.args), "key": fact_key(f), "value": f.value} for f in group],
        memory=memory,
    ).consume()


# -- embeddings: properties of the entity node, outside the history --------------------------

VECTOR_INDEX = "l3mp_entity_embedding"


def vector_index_statement(dimension: int) -> str:
    if isinstance(dimension, bool) or not isinstance(dimension, int) or not 1 <= dimension <= 4096:
        raise InvalidValue("embedding dimension", dimension, "need an int in 1..4096 (Neo4j's vector index limit)")
    return (
        f"CREATE VECTOR INDEX {VECTOR_INDEX} IF NOT EXISTS FOR (e:Entity) ON e.embedding OPTIONS "
        f"{{indexConfig: {{`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}}}}"
    )


def find_vector_index(tx: neo4j.ManagedTransaction) -> tuple[str, int] | None:
    record = tx.run(
        "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options "
        "WHERE type = 'VECTOR' AND labelsOrTypes = ['Entity'] AND properties = ['embedding'] "
        "RETURN name, options.indexConfig['vector.dimensions'] AS dimension"
    ).single()
    return None if record is None else (str(record["name"]), int(record["dimension"]))


def read_embeddings(tx: neo4j.ManagedTransaction, memory: str, names: list[str] | None) -> Embeddings:
    query = "MATCH (e:Entity {memory: $memory}) WHERE e.embedding IS NOT NULL"
    if names is not None:
        query += " AND e.name IN $names"
    query += " RETURN collect([e.name, e.embedding_hash, e.embedding]) AS rows"
    rows = tx.run(query, memory=memory, names=names).single(strict=True)["rows"]
    return {r[0]: (r[1], tuple(r[2])) for r in rows if None not in r}


def write_embeddings(tx: neo4j.ManagedTransaction, memory: str, rows: Embeddings) -> None:
    """Check and write under the memory's lock, so concurrent writers agree on the dimension."""
    locked = tx.run(
        f"MATCH (m:Memory {{name: $memory}}) SET m.version = m.version RETURN m:Memory AND {VISIBLE} AS live",
        memory=memory,
    ).single()
    if locked is None or not locked["live"]:
        raise UnknownMemory(memory)
    if not rows:
        return
    names = list(rows)
    found = tx.run(
        "MATCH (e:Entity {memory: $memory}) WHERE e.name IN $names RETURN collect(e.name) AS found",
        memory=memory,
        names=names,
    ).single(strict=True)["found"]
    missing = set(names) - set(found)
    if missing:
        raise NotApplicable(memory, f"embeddings name entities that do not exist: {sorted(missing)}")
    dimension_clash(memory, len(next(iter(rows.values()))[1]), embedding_dimensions(tx, memory, exclude=names))
    tx.run(
        "UNWIND $rows AS row MATCH (e:Entity {memory: $memory, name: row.name}) "
        "SET e.embedding = row.vector, e.embedding_hash = row.hash",
        rows=[{"name": n, "hash": h, "vector": list(v)} for n, (h, v) in rows.items()],
        memory=memory,
    ).consume()


def embedding_dimensions(tx: neo4j.ManagedTransaction, memory: str, exclude: Iterable[str] = ()) -> list[int]:
    return list(
        tx.run(
            "MATCH (e:Entity {memory: $memory}) WHERE e.embedding IS NOT NULL AND NOT e.name IN $exclude "
            "RETURN collect(DISTINCT size(e.embedding)) AS dims",
            memory=memory,
            exclude=list(exclude),
        ).single(strict=True)["dims"]
    )


# Neo4j's cosine scores are (1 + cosine) / 2; callers get the cosine. The index's own
# scores may come from quantized vectors, so its candidates are scored again exactly.
_INDEX_NEAREST = (
    "CALL db.index.vector.queryNodes($index, $fetch, $vector) YIELD node "
    "WHERE node.memory = $memory "
    "WITH node.name AS name, 2 * vector.similarity.cosine(node.embedding, $vector) - 1 AS score "
    "ORDER BY score DESC, name LIMIT $k RETURN collect([name, score]) AS rows"
)
_EXACT_NEAREST = (
    "MATCH (e:Entity {memory: $memory}) WHERE e.embedding IS NOT NULL "
    "WITH e.name AS name, 2 * vector.similarity.cosine(e.embedding, $vector) - 1 AS score "
    "ORDER BY score DESC, name LIMIT $k RETURN collect([name, score]) AS rows"
)


def nearest(
    tx: neo4j.ManagedTransaction, memory: str, vector: tuple[float, ...], k: int, *, index: str | None
) -> list[tuple[str, float]]:
    """From the vector ``index`` (over-fetching: it spans all memories); exactly if that falls short."""
    stored = tx.run(
        "MATCH (e:Entity {memory: $memory}) WHERE e.embedding IS NOT NULL "
        "RETURN collect(DISTINCT size(e.embedding)) AS dims, count(e) AS n",
        memory=memory,
    ).single(strict=True)
    wrong = sorted(set(stored["dims"]) - {len(vector)})
    if wrong:
        raise InvalidValue("query vector", len(vector), f"the memory's embeddings have dimension {wrong}")
    params = {"memory": memory, "vector": list(vector), "k": k, "index": index, "fetch": max(10 * k, 100)}
    if index is not None:
        rows = tx.run(_INDEX_NEAREST, params).single(strict=True)["rows"]
        if len(rows) >= min(k, stored["n"]):
            return [(r[0], float(r[1])) for r in rows]
    rows = tx.run(_EXACT_NEAREST, params).single(strict=True)["rows"]
    return [(r[0], float(r[1])) for r in rows]
