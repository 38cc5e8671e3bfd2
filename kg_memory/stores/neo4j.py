"""The production store: Neo4j over Bolt with the official driver.

Layout, so the graph reads naturally in Neo4j Browser:

* a memory is a ``(:Memory {name, domain, version, next_seq})`` node;
* entities are ``(:Entity:<type> {memory, name, type, label, attrs})`` nodes;
* binary facts are relationships typed by their predicate, ``(mug_1)-[:on]->(table_1)``;
* unary facts are boolean properties, ``lamp_1.light_on = true``;
* an entity's embedding (derived data, outside the history) is ``embedding`` (a list of
  floats, in the ``l3mp_entity_embedding`` vector index) and ``embedding_hash``;
* nullary and n-ary facts are ``(:Fact {memory, predicate, args, key})`` nodes with
  ``[:ARG {pos}]`` relationships to their arguments;
* the history is ``(:Update {memory, seq, ...})`` nodes, written in the same transaction.

Cypher is always parametrized. The only text interpolated is a type label or a predicate
name, and only after it has been checked against the memory's domain and the PDDL name
rule (letters, digits, '_' and '-'), and always inside backticks.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import neo4j
from neo4j import exceptions as neo4j_errors

from kg_memory.domain import Domain, DomainRegistry
from kg_memory.errors import (
    InvalidValue,
    MemoryExists,
    NotApplicable,
    StoreFailure,
    StoreUnavailable,
    UnknownMemory,
    VersionConflict,
)
from kg_memory.history import DEFAULT_CHECKPOINT_EVERY
from kg_memory.model import Entity, Fact, Memory, Update, UpdateStatus, normalise_name, pddl_name
from kg_memory.store import Embeddings, embedding_rows, fact_order, float32_vector
from kg_memory.stores import _neo4j_log as _history
from kg_memory.stores._common import check_commit, check_deletable, check_group, check_record
from kg_memory.stores._neo4j_history import HistoryMethods
from kg_memory.stores._neo4j_tx import (
    VISIBLE,
    change_facts,
    check_delta_names,
    create_entities,
    facts_of_predicate,
    find_vector_index,
    lock_memory,
    nearest,
    read_embeddings,
    reserve,
    vector_index_statement,
    write_embeddings,
)
from kg_memory.stores._net import NetChange, in_runs, key_of

T = TypeVar("T")
_log = logging.getLogger(__name__)
# Node properties that are not unary facts; a domain may not use these as predicate names.
RESERVED_PROPERTIES = frozenset({"memory", "name", "type", "label", "attrs", "embedding", "embedding_hash", "text"})

# what Neo4j answers a create whose rule another transaction has just created (IF NOT EXISTS races)
_SAME_RULE_EXISTS = "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
_SCHEMA = (
    "CREATE CONSTRAINT l3mp_memory_name IF NOT EXISTS FOR (m:Memory) REQUIRE m.name IS UNIQUE",
    "CREATE CONSTRAINT l3mp_entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE (e.memory, e.name) IS UNIQUE",
    "CREATE CONSTRAINT l3mp_update_key IF NOT EXISTS FOR (u:Update) REQUIRE (u.memory, u.seq) IS UNIQUE",
    "CREATE INDEX l3mp_entity_memory IF NOT EXISTS FOR (e:Entity) ON (e.memory)",
    "CREATE INDEX l3mp_fact_key IF NOT EXISTS FOR (f:Fact) ON (f.memory, f.key)",
    "CREATE INDEX l3mp_fact_memory IF NOT EXISTS FOR (f:Fact) ON (f.memory)",
)

_FACTS_OF_ENTITIES = """
MATCH (e:Entity {memory: $memory}) WHERE e.name IN $names
CALL (e) {
    MATCH (e)-[r]->(o:Entity) RETURN type(r) AS predicate, [e.name, o.name] AS args, r.value AS value
    UNION ALL
    MATCH (o:Entity)-[r]->(e) RETURN type(r) AS predicate, [o.name, e.name] AS args, r.value AS value
    UNION ALL
    UNWIND [p IN $unary WHERE e[p] = true] AS p RETURN p AS predicate, [e.name] AS args, null AS value
    UNION ALL
    MATCH (e)<-[:ARG]-(f:Fact) RETURN f.predicate AS predicate, f.args AS args, f.value AS value
}
WITH DISTINCT predicate, args, value ORDER BY predicate, args LIMIT $limit
RETURN collect([predicate, value] + args) AS rows
"""
_NULLARY = "MATCH (f:Fact {memory: $memory}) WHERE size(f.args) = 0 RETURN collect([f.predicate, f.value]) AS rows"
# Reads return one aggregated record: the driver spends ~20 us per record, which for the
# thousands of rows a verification reads costs more than the query itself.


class Neo4jStore(HistoryMethods):
    backend = "neo4j"

    def __init__(
        self,
        uri: str,
        auth: tuple[str, str] | None = None,
        domains: DomainRegistry | None = None,
        *,
        database: str | None = None,
        timeout: float = 10.0,
        retry_time: float = 5.0,
        checkpoint_every: int = DEFAULT_CHECKPOINT_EVERY,
    ) -> None:
        self.checkpoint_every = checkpoint_every
        self.uri = uri
        self.domains = domains or DomainRegistry()
        self._database = database
        # memory -> (its creation time, its domain): another memory made under the name is told apart
        self._domain_of: dict[str, tuple[datetime, Domain]] = {}
        self._vector_index: tuple[str, int] | None = None  # name and dimension, once known
        self._driver = neo4j.GraphDatabase.driver(
            uri,
            auth=auth,
            connection_timeout=timeout,
            connection_acquisition_timeout=timeout,
            max_transaction_retry_time=retry_time,
            # the queries read properties that only some entities and relations have (a function's
            # value): the server's "unknown property" warnings about them would reach every user's
            # terminal through the driver's logger
            notifications_disabled_categories=[neo4j.NotificationDisabledCategory.UNRECOGNIZED],
        )

    # -- plumbing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _errors(self, operation: str) -> Iterator[None]:
        try:
            yield
        except neo4j_errors.AuthError as exc:
            cause = f"authentication failed ({exc.message})"
            raise StoreUnavailable(self.backend, operation, cause, login_refused=True) from exc
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, OSError) as exc:
            raise StoreUnavailable(self.backend, operation, str(exc) or type(exc).__name__) from exc
        except neo4j_errors.DriverError as exc:  # incomplete commit, broken connection, ...
            raise StoreUnavailable(self.backend, operation, str(exc) or type(exc).__name__) from exc
        except neo4j_errors.ConstraintError as exc:  # a constraint caught what our checks did not
            raise NotApplicable("", f"{operation} would break a constraint ({exc.message})") from exc
        except (neo4j_errors.TransientError, neo4j_errors.DatabaseError) as exc:  # retries exhausted, server fault
            raise StoreUnavailable(self.backend, operation, exc.message or type(exc).__name__) from exc
        except neo4j_errors.Neo4jError as exc:  # the server refused the request
            raise StoreFailure(self.backend, operation, exc.message or type(exc).__name__) from exc

    def _read(self, operation: str, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        with self._errors(operation), self._driver.session(database=self._database) as session:
            return session.execute_read(work)

    def _write(self, operation: str, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        with self._errors(operation), self._driver.session(database=self._database) as session:
            return session.execute_write(work)

    def init_schema(self, embedding_dimension: int = 384) -> None:
        """Create constraints and indexes (idempotent); call once at deployment or start-up.

        The vector index over entity embeddings gets ``embedding_dimension``. A vector
        index on ``Entity.embedding`` that exists already, whatever its name, is kept as it
        is (Neo4j allows one): see :meth:`vector_index`. Neo4j indexes only vectors of the
        index's dimension; :meth:`nearest` scans exactly when the dimensions differ.
        """
        statements = (*_SCHEMA, *_history.SCHEMA, vector_index_statement(embedding_dimension))
        with self._errors("init schema"), self._driver.session(database=self._database) as session:
            for statement in statements:
                try:  # a managed transaction: retried when processes starting together deadlock on the schema
                    session.execute_write(_run_schema_statement, statement)
                except neo4j_errors.ClientError as exc:
                    # another process created the same index or constraint between our IF NOT EXISTS
                    # check and our create: what we wanted exists
                    if exc.code != _SAME_RULE_EXISTS:
                        raise
        self._vector_index = None
        found = self.vector_index()
        if found is not None and found[1] != embedding_dimension:
            _log.warning("vector index %s has dimension %d, not %d; kept as it is", *found, embedding_dimension)

    def vector_index(self) -> tuple[str, int] | None:
        """Name and dimension of the vector index on ``Entity.embedding``, if there is one."""
        if self._vector_index is None:
            self._vector_index = self._read("read", find_vector_index)
        return self._vector_index

    def ping(self) -> None:
        with self._errors("ping"):
            self._driver.verify_connectivity()

    def _domain(self, memory: str, created: datetime | None = None) -> Domain:
        """The domain of the memory holding the name; with ``created``, of the memory made then
        (:class:`UnknownMemory` if another holds the name now)."""
        cached = self._domain_of.get(memory)
        if cached is None or (created is not None and cached[0] != created):
            record = self.get_memory(memory)
            cached = (record.created, self.domains.get(record.domain))
            self._domain_of[record.name] = cached
        if created is not None and cached[0] != created:
            raise UnknownMemory(memory)
        return cached[1]

    def _unary(self, memory: str) -> list[str]:
        return _unary_of(self._domain(memory))

    # -- memories ---------------------------------------------------------------------------

    def create_memory(self, name: str, domain: str, *, importing: bool = False) -> Memory:
        name = pddl_name(name, "memory")
        schema = self.domains.get(domain)
        clash = sorted(RESERVED_PROPERTIES & set(schema.predicates))
        if clash:
            raise InvalidValue("domain for Neo4j", domain, f"predicates {clash} clash with node properties")
        created = datetime.now(UTC)

        def create(tx: neo4j.ManagedTransaction) -> None:
            found = tx.run("MATCH (m:Memory {name: $name}) RETURN m.importing AS importing", name=name).single()
            if found is not None:
                raise MemoryExists.importing(name) if found["importing"] else MemoryExists(name)
            if tx.run("MATCH (p:Purging {name: $name}) RETURN p", name=name).single():
                raise MemoryExists(name, "is still being deleted; delete it again to finish, then create it")
            # one label for both, so the name's uniqueness constraint holds across them
            tx.run(
                "CREATE (:Memory {name: $name, domain: $domain, version: 0, next_seq: 1, created: $created,"
                " importing: $importing})",
                name=name,
                domain=domain,
                created=created.isoformat(),
                importing=True if importing else None,  # null: no property
            ).consume()
            create_entities(tx, name, schema.constant_entities(), schema)

        self._write("create memory", create)
        return Memory(name, domain, 0, created)

    def get_memory(self, name: str) -> Memory:
        name = normalise_name(name)  # looked up as it was created

        def read_memory(tx: neo4j.ManagedTransaction) -> Any:
            return tx.run(f"MATCH (m:Memory {{name: $name}}) WHERE {VISIBLE} RETURN m", name=name).single()

        record = self._read("read", read_memory)
        if record is None:
            raise UnknownMemory(name)
        memory = _memory(record["m"])
        cached = self._domain_of.get(name)
        if cached is not None and cached[0] != memory.created:  # deleted and made again elsewhere
            self._domain_of.pop(name, None)
        return memory

    def list_memories(self) -> list[Memory]:
        def read_memories(tx: neo4j.ManagedTransaction) -> list[Any]:
            return list(tx.run(f"MATCH (m:Memory) WHERE {VISIBLE} RETURN m ORDER BY m.name"))

        return [_memory(r["m"]) for r in self._read("read", read_memories)]

    def delete_memory(self, name: str, *, importing: bool | None = None) -> None:
        """Retire the memory in one transaction, then purge its nodes in batches.

        Retiring relabels the Memory node ``Purging`` under its write lock, so writers in
        flight finish first and later ones get :class:`UnknownMemory`; nothing can slip in
        between the batches. Whether an import is filling it is read under that lock, so an
        import that ends meanwhile is seen. A purge cut short is resumed by calling this again,
        whatever ``importing`` says: what it retired is no one's any more.
        """
        name = normalise_name(name)

        def retire(tx: neo4j.ManagedTransaction) -> bool:
            retired = tx.run(
                "MATCH (m:Memory {name: $name}) SET m:Purging REMOVE m:Memory RETURN m.importing IS NOT NULL AS hidden",
                name=name,
            ).single()
            if retired is not None:
                check_deletable(name, hidden=retired["hidden"], importing=importing)  # raising rolls back
                return True
            return tx.run("MATCH (p:Purging {name: $name}) RETURN p", name=name).single() is not None

        if not self._write("delete memory", retire):
            raise UnknownMemory(name)
        self._domain_of.pop(name, None)
        with self._errors("delete memory"), self._driver.session(database=self._database) as session:
            for label in ("Fact", "Update", *_history.LABELS, "Entity"):
                session.run(
                    f"MATCH (n:{label} {{memory: $name}}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 5000 ROWS",
                    name=name,
                ).consume()
            session.run("MATCH (p:Purging {name: $name}) DETACH DELETE p", name=name).consume()

    # -- reads ------------------------------------------------------------------------------

    def entities(self, memory: str, names: Iterable[str] | None = None) -> dict[str, Entity]:
        self._domain(memory)
        query = "MATCH (e:Entity {memory: $memory})"
        if names is not None:
            query += " WHERE e.name IN $names"
        query += " RETURN collect([e.name, e.type, e.label, e.attrs]) AS rows"
        params = {"memory": memory, "names": list(names) if names is not None else None}

        def read_entity_rows(tx: neo4j.ManagedTransaction) -> list[list[str]]:
            return list(tx.run(query, params).single(strict=True)["rows"])

        rows = self._read("read", read_entity_rows)
        return {r[0]: Entity.unchecked(r[0], r[1], r[2], json.loads(r[3])) for r in rows if None not in r}

    def facts(self, memory: str, predicate: str | None = None, entity: str | None = None) -> frozenset[Fact]:
        if entity is not None:
            found = self.facts_about(memory, [entity])
            return frozenset(f for f in found if entity in f.args and (predicate is None or f.predicate == predicate))
        domain = self._domain(memory)
        predicates = [predicate] if predicate is not None else sorted(domain.predicates)
        schemas = [domain.predicates[p] for p in predicates if p in domain.predicates]

        def read_facts(tx: neo4j.ManagedTransaction) -> set[Fact]:
            return {f for s in schemas for f in facts_of_predicate(tx, memory, s.name, s.arity, s.numeric)}

        return frozenset(self._read("read", read_facts))

    def facts_about(self, memory: str, names: Iterable[str], limit: int | None = None) -> frozenset[Fact]:
        unary, wanted = self._unary(memory), list(names)
        facts = self._read("read", lambda tx: _facts_of_entities(tx, memory, wanted, unary, limit))
        if limit is not None and len(facts) > limit:  # nullary facts came on top of the limited rows
            return frozenset(sorted(facts, key=fact_order)[:limit])
        return frozenset(facts)

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
        domain = self._domain(memory, created)
        for update in updates:
            check_delta_names(update, domain)
        applied = sum(u.status is UpdateStatus.APPLIED for u in updates)

        def apply_group(tx: neo4j.ManagedTransaction) -> list[Update]:
            version, seq = reserve(tx, memory, versions=applied, seqs=len(updates), created=created)
            if version != expected_version:
                raise VersionConflict(memory, expected_version, version)
            stored, runs = in_runs(memory, updates, version=version, seq=seq, checkpoint_every=self.checkpoint_every)
            for run in runs:
                _write_change(tx, domain, run.change)
                if run.checkpoint is not None:  # in this transaction: all or nothing
                    self._write_checkpoint(tx, memory, domain, run.checkpoint)
            _history.log(tx, stored)
            return stored

        return self._write("commit", apply_group)

    def _write_checkpoint(self, tx: neo4j.ManagedTransaction, memory: str, domain: Domain, version: int) -> None:
        _history.put_checkpoint(tx, memory, _history.current_checkpoint(tx, memory, domain, version))

    def record(self, update: Update, *, created: datetime | None = None) -> Update:
        check_record(update)

        def record_update(tx: neo4j.ManagedTransaction) -> Update:
            version, seq = lock_memory(tx, update.memory, bump_version=False, created=created)
            stored = update.stamped(seq=seq, version=version)
            _history.log(tx, [stored])
            return stored

        return self._write("record", record_update)

    # -- embeddings (derived data: not logged, no new version) --------------------------------

    def embeddings(self, memory: str, names: Iterable[str] | None = None) -> Embeddings:
        self._domain(memory)
        wanted = list(names) if names is not None else None
        return self._read("read", lambda tx: read_embeddings(tx, memory, wanted))

    def put_embeddings(self, memory: str, rows: Mapping[str, tuple[str, Sequence[float]]]) -> None:
        checked = embedding_rows(memory, rows)
        self._write("put embeddings", lambda tx: write_embeddings(tx, memory, checked))

    def nearest(self, memory: str, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        query = float32_vector(memory, "the query", vector)
        if k < 0:
            raise InvalidValue("number of neighbours", k, "need k >= 0")
        self._domain(memory)
        index = self.vector_index()
        use = index[0] if index is not None and index[1] == len(query) else None
        return self._read("nearest", lambda tx: nearest(tx, memory, query, k, index=use))

    def close(self) -> None:
        self._driver.close()


def _unary_of(domain: Domain) -> list[str]:
    """The predicates stored as an entity's boolean properties."""
    return sorted(p.name for p in domain.predicates.values() if p.arity == 1 and not p.numeric)


def _facts_of_entities(
    tx: neo4j.ManagedTransaction, memory: str, names: list[str], unary: list[str], limit: int | None = None
) -> set[Fact]:
    """Every fact naming one of ``names`` (at most ``limit`` of them), and every nullary fact."""
    # Cypher's LIMIT needs a number; no store holds 2**62 facts
    params = {"memory": memory, "names": names, "unary": unary, "limit": 2**62 if limit is None else limit}
    rows = tx.run(_FACTS_OF_ENTITIES, params).single(strict=True)["rows"]
    rows += tx.run(_NULLARY, memory=memory).single(strict=True)["rows"]
    return _facts_from_rows(rows)


def _facts_from_rows(rows: list[list[Any]]) -> set[Fact]:
    """``[predicate, value, *args]`` rows (``value`` null but for numeric facts); a row with
    other nulls is a node deleted while we read it."""
    return {Fact.unchecked(r[0], tuple(r[2:]), r[1]) for r in rows if r[0] is not None and None not in r[2:]}


def _run_schema_statement(tx: neo4j.ManagedTransaction, statement: str) -> None:
    tx.run(statement).consume()


def _memory(node: Any) -> Memory:
    return Memory(node["name"], node["domain"], node["version"], datetime.fromisoformat(node["created"]))


def _write_change(tx: neo4j.ManagedTransaction, domain: Domain, change: NetChange) -> None:
    """A run's net change: its entities, then the facts it removes, then those it adds (each
    query checks that its facts apply and names those that do not)."""
    if change.is_empty:
        return
    create_entities(tx, change.memory, change.created.values(), domain)
    early = change.named_before_created
    if early:
        raise NotApplicable(change.memory, f"facts name entities that do not exist: {sorted(early)}")
    if change.assumed:  # where the run writes nothing, what it took to be stored is read
        names = sorted({arg for _, args in change.assumed for arg in args})
        stored = _facts_of_entities(tx, change.memory, names, _unary_of(domain))
        refusal = change.refusal({key_of(fact): fact for fact in stored})
        if refusal is not None:
            raise refusal
    change_facts(tx, change.memory, change.removed, "remove")
    change_facts(tx, change.memory, change.added, "add")
