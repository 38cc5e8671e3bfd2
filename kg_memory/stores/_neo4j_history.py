"""The Neo4j store's history methods (a mixin of :class:`Neo4jStore`), over ``_neo4j_log``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import neo4j

from kg_memory.domain import Domain, DomainRegistry
from kg_memory.errors import NotApplicable, UnknownMemory, UnknownUpdate
from kg_memory.history import Checkpoint, HistoryQuery
from kg_memory.model import Delta, Entity, Fact, Memory, Update
from kg_memory.stores import _neo4j_log as _log
from kg_memory.stores._common import check_load, update_from_row
from kg_memory.stores._neo4j_tx import change_facts, create_entities, reserve

T = TypeVar("T")


class HistoryMethods:
    """History reads and the bulk writes of imports and compaction."""

    domains: DomainRegistry

    def _read(self, operation: str, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        raise NotImplementedError

    def _write(self, operation: str, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        raise NotImplementedError

    def _domain(self, memory: str) -> Domain:
        raise NotImplementedError

    def get_memory(self, name: str) -> Memory:
        raise NotImplementedError

    def history(self, memory: str, since_seq: int = 0, limit: int | None = None) -> list[Update]:
        self.get_memory(memory)
        query = "MATCH (u:Update {memory: $memory}) WHERE u.seq > $since RETURN u ORDER BY u.seq"
        if limit is not None:
            query += " LIMIT $limit"

        def read_updates(tx: neo4j.ManagedTransaction) -> list[Any]:
            return list(tx.run(query, memory=memory, since=since_seq, limit=limit))

        return [update_from_row(memory, dict(r["u"])) for r in self._read("read", read_updates)]

    def get_update(self, memory: str, update_id: str) -> Update:
        self.get_memory(memory)

        def read_update(tx: neo4j.ManagedTransaction) -> Any:
            return tx.run("MATCH (u:Update {memory: $memory, id: $id}) RETURN u", memory=memory, id=update_id).single()

        record = self._read("read", read_update)
        if record is None:
            raise UnknownUpdate(memory, update_id)
        return update_from_row(memory, dict(record["u"]))

    def query_history(self, memory: str, query: HistoryQuery) -> list[Update]:
        self.get_memory(memory)
        return self._read("read", lambda tx: _log.query(tx, memory, query))

    def nearest_checkpoint(self, memory: str, version: int) -> Checkpoint | None:
        self.get_memory(memory)
        return self._read("read", lambda tx: _log.nearest_checkpoint(tx, memory, version))

    def replay_from(self, memory: str, version: int) -> tuple[Checkpoint | None, list[Delta]]:
        return self._read("read", lambda tx: _log.replay_from(tx, memory, version))

    def horizon(self, memory: str) -> tuple[int, datetime, dict[str, Any]] | None:
        self.get_memory(memory)
        return self._read("read", lambda tx: _log.horizon(tx, memory))

    def load_history(self, memory: str, updates: Sequence[Update], checkpoints: Sequence[Checkpoint] = ()) -> None:
        if not updates:
            return
        check_load(memory, updates)

        def load_history(tx: neo4j.ManagedTransaction) -> None:
            record = tx.run(
                "MATCH (m:Memory {name: $memory}) SET m.version = m.version RETURN m.next_seq AS seq", memory=memory
            ).single()
            if record is None:
                raise UnknownMemory(memory)
            if updates[0].seq != record["seq"]:
                raise NotApplicable(memory, f"the history resumes at seq {updates[0].seq}, not {record['seq']}")
            repeated = _log.duplicate_ids(tx, memory, updates)
            if repeated:
                raise NotApplicable(memory, f"update ids must be unique; {repeated[0]!r} is repeated")
            _log.log(tx, updates)
            for checkpoint in checkpoints:
                _log.put_checkpoint(tx, memory, checkpoint)
            tx.run(
                "MATCH (m:Memory {name: $memory}) SET m.version = CASE WHEN m.version > $v THEN m.version ELSE $v END,"
                " m.next_seq = $seq",
                memory=memory,
                v=max(u.version for u in updates),
                seq=updates[-1].seq + 1,
            ).consume()

        self._write("import", load_history)

    def load_state(self, memory: str, entities: Iterable[Entity], facts: Iterable[Fact]) -> None:
        wanted = list(entities)

        def load_entities(tx: neo4j.ManagedTransaction) -> None:
            found = tx.run(  # a memory being imported is there from now on, with this state
                "MATCH (m:Memory {name: $memory}) REMOVE m.importing RETURN m.domain AS domain", memory=memory
            ).single()
            if found is None:
                raise UnknownMemory(memory)
            domain = self.domains.get(found["domain"])
            existing = set(
                tx.run(
                    "UNWIND $names AS n MATCH (e:Entity {memory: $memory, name: n}) RETURN e.name",
                    names=[e.name for e in wanted],
                    memory=memory,
                ).value()
            )
            create_entities(tx, memory, [e for e in wanted if e.name not in existing], domain)
            change_facts(tx, memory, facts, "add")

        self._write("import", load_entities)

    def compact(
        self,
        memory: str,
        checkpoint: Checkpoint,
        when: datetime,
        summaries: dict[str, Any],
        *,
        created: datetime | None = None,
    ) -> int:
        self.get_memory(memory)

        def compact(tx: neo4j.ManagedTransaction) -> int:
            reserve(tx, memory, versions=0, seqs=0, created=created)  # its lock, and which memory it is
            return _log.compact(tx, memory, checkpoint, when, summaries)

        return self._write("compact", compact)
