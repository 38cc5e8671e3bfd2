"""The verified replay behind imports: the state in memory (bounded by the home, not the
history), each update verified against it as a live one would be, written in batches.

A batch is written by one background thread while the next is verified: the store's work (a
database server's, or SQLite's C code, both outside the GIL) overlaps the verifier's. Batches are
written in order, one at a time; a store's refusal surfaces at the next batch or at the end, and
the importer then deletes the memory, so an import is still all or nothing. The thread is one for
the process, made on first use: a store's per-thread connection (SQLite's) is then one, not one
per import."""

from __future__ import annotations

import hashlib
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from datetime import datetime
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from kg_memory._rule_index import RuleIndex
from kg_memory.errors import KgMemoryError, NotApplicable
from kg_memory.history import Checkpoint
from kg_memory.model import Delta, Entity, Fact, IssueCode, Update, UpdateSource, UpdateStatus, is_unicode, meta_json
from kg_memory.model import _parsed_fact as parsed_fact
from kg_memory.operations import ImportMismatch
from kg_memory.store import GraphStore
from kg_memory.verifier import Verifier

BATCH = 10_000  # updates a write takes: fewer, longer runs of neighbouring keys in the log's indexes
# Issues an unverified update (meta "verified": false, the paper's ablation) may still carry.
_STORABLE_ANYWAY = frozenset(
    {
        IssueCode.FUNCTIONAL,
        IssueCode.EXCLUSIVE,
        IssueCode.INVARIANT,
        IssueCode.TYPE_MISMATCH,
        IssueCode.STATIC_PREDICATE,
    }
)


@runtime_checkable
class PreparedHistory(Protocol):
    """A store whose :meth:`~kg_memory.store.GraphStore.load_history` comes in two steps: the
    batch made ready for its database (Python's work, holding the GIL), then written (the
    database's, which need not hold it). An import then readies a batch on its own thread while
    the one before it is written on the writer's."""

    def prepare_history(self, memory: str, updates: Sequence[Update], checkpoints: Sequence[Checkpoint]) -> Any: ...

    def load_prepared(self, memory: str, prepared: Any) -> None: ...


_WRITER: list[ThreadPoolExecutor] = []
_WRITER_LOCK = threading.Lock()


def _writer() -> ThreadPoolExecutor:
    with _WRITER_LOCK:
        if not _WRITER:
            _WRITER.append(ThreadPoolExecutor(1, thread_name_prefix="l3mp-import"))
        return _WRITER[0]


class _State:
    """Entities and facts, indexed by entity: the verifier's view of the replayed state."""

    def __init__(self, entities: Iterable[Entity]) -> None:
        self.entities = {e.name: e for e in entities}
        self.by_entity: dict[str, set[Fact]] = defaultdict(set)
        self.nullary: set[Fact] = set()
        self.all: set[Fact] = set()  # kept whole for the presence checks and the checkpoints

    def facts(self) -> frozenset[Fact]:
        return frozenset(self.all)

    def apply(self, delta: Delta) -> None:
        if delta.new_entities:
            self.entities.update({e.name: e for e in delta.new_entities})
        self.all.difference_update(delta.remove)
        self.all.update(delta.add)
        by_entity = self.by_entity
        for fact in delta.remove:
            for home in [by_entity[a] for a in set(fact.args)] or [self.nullary]:
                home.discard(fact)
        for fact in delta.add:
            for home in [by_entity[a] for a in set(fact.args)] or [self.nullary]:
                home.add(fact)

    # StateView
    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        found = set(self.nullary)
        for name in names:
            found |= self.by_entity.get(name, set())
        return frozenset(found)

    def entities_of(self, names: Iterable[str]) -> Mapping[str, Entity]:
        return {n: self.entities[n] for n in names if n in self.entities}


class _View:
    def __init__(self, state: _State) -> None:
        self._state = state

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        return self._state.entities_of(names)

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        return self._state.facts_about(names)


class Replay:
    def __init__(self, store: GraphStore, memory: str, verifier: Verifier, latest: datetime) -> None:
        self.store, self.memory, self.verifier, self.latest = store, memory, verifier, latest
        self.state = _State(verifier.domain.constant_entities())
        self.rules = RuleIndex(verifier.domain)
        self.view = _View(self.state)
        self.listed: dict[str, Entity] = {}
        self.version, self.seq, self.count, self.streamed = 0, 1, 0, 0
        self.last_time: datetime | None = None
        self.batch: list[Update] = []
        self.checkpoints: list[Checkpoint] = []
        self.pending: tuple[Future[None], str] | None = None
        self.entities: tuple[Entity, ...] | None = None  # sorted, as the last checkpoint had them

    def fail(self, where: str, problem: str) -> ImportMismatch:
        return ImportMismatch(self.memory, f"{where}: {problem}")

    def run(self, items: Iterator[Mapping[str, Any]]) -> None:
        try:
            self.replay(items)
        except ImportMismatch:
            self.written()  # a batch the store refused holds an earlier offender: name that one
            raise
        finally:  # never leave a batch being written behind (the caller may delete the memory)
            if self.pending is not None:
                wait([self.pending[0]])

    def replay(self, items: Iterator[Mapping[str, Any]]) -> None:
        end: Mapping[str, Any] | None = None
        for number, item in enumerate(items, 2):
            if end is not None:
                raise self.fail(f"line {number}", "nothing may follow the end line")
            if "entity" in item:
                self.entity(item["entity"], number)
            elif "update" in item:
                self.update(item["update"], number)
            elif "survey" in item:
                self.survey(item["survey"])
            elif "base" in item:
                self.base(item["base"], number)
            elif "end" in item:
                end = self.end(item["end"], number)
            else:
                raise self.fail(f"line {number}", f"unknown line with keys {sorted(item)[:5]}")
        self.flush()
        self.written()
        self.finish(end)

    def end(self, data: Any, number: int) -> Mapping[str, Any]:
        if not isinstance(data, Mapping):
            shown = type(data).__name__
            raise self.fail(
                f"end line {number}", f"it must hold an object (updates, version, facts_sha256), not a {shown}"
            )
        return data

    def entity(self, data: Any, number: int) -> None:
        if self.count:
            raise self.fail(f"line {number}", "entities come before the updates")
        try:
            entity = Entity.from_json(data)
        except (KeyError, TypeError, ValueError, KgMemoryError) as exc:
            raise self.fail(f"entity on line {number}", str(exc)) from exc
        self.listed[entity.name] = entity

    def base(self, data: Mapping[str, Any], number: int) -> None:
        """A compacted memory's state at its horizon, verified as a survey by perception."""
        try:
            facts = frozenset(Fact.parse(f) for f in data["facts"])
            version = int(data["version"])
        except (KeyError, TypeError, ValueError, KgMemoryError) as exc:
            raise self.fail(f"base on line {number}", str(exc)) from exc
        self.survey({"facts": [str(f) for f in facts]}, version=version)
        self.last_time = None  # the base stands for the compacted past, whatever its own time

    def survey(self, data: Mapping[str, Any], version: int = 1) -> None:
        """A state without history becomes one update that creates it, verified as a survey."""
        try:
            facts = frozenset(Fact.parse(f) for f in data["facts"])
        except (KeyError, TypeError, ValueError, KgMemoryError) as exc:
            raise self.fail("the exported facts", str(exc)) from exc
        created = tuple(e for e in self.listed.values() if e.name not in self.state.entities)
        delta = Delta(add=facts, new_entities=created)
        issues = self.verifier.verify(delta, self.view, UpdateSource.SENSOR)
        if issues:
            shown = "; ".join(i.message for i in issues[:5])
            more = f" (and {len(issues) - 5} more)" if len(issues) > 5 else ""
            raise self.fail("the exported state", f"it breaks its domain: {shown}{more}")
        update = Update(
            memory=self.memory,
            source=UpdateSource.API,
            delta=delta,
            status=UpdateStatus.APPLIED,
            input="import",
            version=version,
        )
        self.version = version - 1
        self.accept(update)

    def update(self, data: Any, number: int) -> None:
        self.streamed += 1
        try:
            # stamped with its place in the new log as it is built (one validation, not two)
            update = _common_update(data, self.memory, self.seq) or Update.from_json(
                {**data, "memory": self.memory, "seq": self.seq}
            )
        except (KeyError, TypeError, ValueError, AttributeError, KgMemoryError) as exc:
            raise self.fail(f"update on line {number}", f"it is malformed ({type(exc).__name__}: {exc})") from exc
        where = f"update {update.id} (line {number})"
        if update.source is UpdateSource.DOMAIN:
            self.created_by_domain(update, where)
            return
        if self.last_time is not None and update.time < self.last_time:
            raise self.fail(where, f"its time {update.time.isoformat()} is before the previous update's")
        if update.time > self.latest:
            raise self.fail(where, f"its time {update.time.isoformat()} is in the future")
        if update.status is UpdateStatus.APPLIED:
            self.check_applied(update, where)
        elif update.version != self.version:
            raise self.fail(where, f"it was checked against version {update.version}; the memory is at {self.version}")
        elif update.status is UpdateStatus.NOOP and not update.delta.is_empty:
            raise self.fail(where, "a noop update changes nothing, yet it has a delta")
        self.accept(update)

    def created_by_domain(self, update: Update, where: str) -> None:
        """The memory's first update, the domain's constants (the replayed state starts with them)."""
        constants = {e.name: e.type for e in self.verifier.domain.constant_entities()}
        created = {e.name: e.type for e in update.delta.new_entities}
        if self.count or update.status is not UpdateStatus.APPLIED or update.version != 0:
            raise self.fail(where, "the domain's update is the first one, applied at version 0")
        if update.delta.remove or update.delta.add or created != constants:
            raise self.fail(where, f"the domain's update creates the domain's constants, {sorted(constants)}, only")
        if update.time > self.latest:
            raise self.fail(where, f"its time {update.time.isoformat()} is in the future")
        self.batch.append(update if update.seq == self.seq else replace(update, seq=self.seq))
        self.seq += 1
        self.count += 1
        self.last_time = update.time

    def check_applied(self, update: Update, where: str) -> None:
        if update.version != self.version + 1:
            raise self.fail(where, f"it made version {update.version}, but the memory is at {self.version}")
        for entity in update.delta.new_entities:
            listed = self.listed.get(entity.name)
            if listed is None:
                raise self.fail(where, f"it creates {entity.name}, which the entity list does not have")
            if listed.type != entity.type:
                raise self.fail(
                    where, f"it creates {entity.name} as a {entity.type}, but the entity list says {listed.type}"
                )
        if self.rules.clean(update.delta, self.state.entities, self.state.all, update.source):
            return  # the verifier would find nothing: the counters say so in the delta's size
        issues = self.verifier.verify(update.delta, self.view, update.source)
        if update.meta.get("verified") is False and not update.delta.new_entities:
            issues = tuple(i for i in issues if i.code not in _STORABLE_ANYWAY)
        if issues:
            shown = "; ".join(i.message for i in issues[:3])
            raise self.fail(where, f"it breaks its domain or its source's rights ({update.source.value}): {shown}")

    def accept(self, update: Update) -> None:
        stamped = update if update.seq == self.seq else replace(update, seq=self.seq)
        self.seq += 1
        self.count += 1
        self.last_time = update.time
        if update.status is UpdateStatus.APPLIED:
            self.state.apply(update.delta)
            self.rules.apply(update.delta)
            self.version = update.version
            if self.version % self.store.checkpoint_every == 0:
                self.checkpoints.append(self.checkpoint())
        self.batch.append(stamped)
        if len(self.batch) >= BATCH:
            self.flush()

    def checkpoint(self) -> Checkpoint:
        if self.entities is None or len(self.entities) != len(self.state.entities):
            # one tuple while no entity is added: the store's encoder knows it is the same
            self.entities = tuple(sorted(self.state.entities.values(), key=lambda e: e.name))
        return Checkpoint(self.version, self.entities, self.state.facts())

    def flush(self) -> None:
        """Hand the batch to the writer (after the one before it is written)."""
        if not self.batch:
            return
        batch, checkpoints = self.batch, self.checkpoints
        self.batch, self.checkpoints = [], []
        where = f"updates {batch[0].id}..{batch[-1].id}"
        write = self.prepared(batch, checkpoints, where)
        self.written()
        self.pending = (_writer().submit(write), where)

    def prepared(self, batch: list[Update], checkpoints: list[Checkpoint], where: str) -> Callable[[], None]:
        """The batch's write, made ready on this thread while the one before it is written, if
        the store can: then the writer thread does almost nothing that needs the GIL."""
        store, memory = self.store, self.memory
        if not isinstance(store, PreparedHistory):
            return lambda: store.load_history(memory, batch, checkpoints)
        try:
            ready = store.prepare_history(memory, batch, checkpoints)
        except NotApplicable as exc:
            raise self.fail(where, str(exc)) from exc
        return lambda: store.load_prepared(memory, ready)

    def written(self) -> None:
        """Wait for the batch being written; the store's refusal of it is the import's."""
        if self.pending is None:
            return
        future, where = self.pending
        self.pending = None
        try:
            future.result()
        except NotApplicable as exc:
            raise self.fail(where, str(exc)) from exc

    def finish(self, end: Mapping[str, Any] | None) -> None:
        if end is None:
            raise self.fail("the stream", "it has no end line, so it was cut short")
        facts = self.state.facts()
        if end.get("updates") != self.streamed:
            raise self.fail("the end line", f"it counts {end.get('updates')} updates; the stream had {self.streamed}")
        version = end.get("version")  # an old one-document export may not say
        if version is not None and (type(version) is not int or version != self.version):
            raise self.fail("the end line", f"it says version {version!r}; the history gives version {self.version}")
        missing = sorted(set(self.listed) - set(self.state.entities))
        if missing:
            raise self.fail("the entity list", f"no update creates {missing[:5]}")
        extra = sorted(set(self.state.entities) - set(self.listed) - set(self.verifier.domain.constants))
        if extra:
            raise self.fail("the entity list", f"it lacks {extra[:5]}, which the history creates")
        if end.get("facts_sha256") != facts_digest(facts):
            raise self.fail("the end line", "replaying the history does not give the exported facts")
        try:
            self.store.load_state(self.memory, self.state.entities.values(), facts)
        except NotApplicable as exc:
            raise self.fail("the final state", str(exc)) from exc


def _common_update(data: Any, memory: str, seq: int) -> Update | None:
    """``Update.from_json`` of the common line (applied or noop, no issues, no new entities),
    making the same checks once rather than again in each constructor; ``None`` for any other
    line, or any doubt, which ``Update.from_json`` then reads (and words the error of)."""
    try:
        delta, meta, time = data["delta"], data.get("meta") or {}, datetime.fromisoformat(data["time"])
        status = _STATUSES.get(data["status"])
        if status is None or data.get("issues") or delta.get("new_entities") or time.tzinfo is None:
            return None
        if type(meta) is not dict:
            return None
        id_, input_ = data["id"], data.get("input", "")
        # what Update checks: text no store would refuse, an id, meta the export can write
        if type(id_) is not str or type(input_) is not str or not id_:
            return None
        if not ((id_.isascii() or is_unicode(id_)) and (input_.isascii() or is_unicode(input_))):
            return None
        meta_json(meta)
        return Update.unchecked(
            memory=memory,
            source=UpdateSource(data["source"]),
            delta=_facts_delta(delta.get("remove", ()), delta.get("add", ())),
            status=status,
            input=input_,
            issues=(),
            version=int(data.get("version", 0)),
            seq=seq,
            id=id_,
            time=time,
            meta=MappingProxyType(dict(meta)),
        )
    except (KeyError, TypeError, ValueError, AttributeError, KgMemoryError):
        return None


_STATUSES = {s.value: s for s in (UpdateStatus.APPLIED, UpdateStatus.NOOP)}  # a rejected one has issues


def _facts_delta(remove: Iterable[Any], add: Iterable[Any]) -> Delta:
    """``Delta.from_json`` of facts alone: each fact is parsed and validated (once per text) as
    there; the constructor's second pass over the facts it was given is what this skips."""
    delta = object.__new__(Delta)
    object.__setattr__(delta, "remove", frozenset(map(parsed_fact, remove)))
    object.__setattr__(delta, "add", frozenset(map(parsed_fact, add)))
    object.__setattr__(delta, "new_entities", ())
    return delta


def facts_digest(facts: Iterable[Fact]) -> str:
    digest = hashlib.sha256()
    for text in sorted(str(f) for f in facts):
        digest.update(text.encode())
        digest.update(b"\n")
    return digest.hexdigest()
