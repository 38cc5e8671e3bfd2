"""Neo4j faults on the real server: unreachable, killed in the middle of an update, and
writes racing the deletion of their memory. Private servers are started and killed here."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import neo4j
import neo4j_server
import pytest
from conftest import neo4j_auth, neo4j_uri, unique_name
from faults_common import assert_history_consistent, free_port, survey

from kg_memory import (
    Delta,
    DomainRegistry,
    Entity,
    Fact,
    GraphStore,
    Issue,
    IssueCode,
    StoreUnavailable,
    UnknownMemory,
    Update,
    UpdateSource,
    UpdateStatus,
    WorldMemory,
)
from kg_memory.stores import Neo4jStore
from kg_memory.stores import neo4j as neo4j_store_module

# -- 1. Neo4j unreachable -------------------------------------------------------------------

# Each operation may retry for ``retry_time`` plus the driver's back-off (about 3 s in all).
UNREACHABLE_LIMIT_S = 10.0


@pytest.fixture
def dead_neo4j(domains: DomainRegistry) -> Iterator[Neo4jStore]:
    """A store pointed at a local port nobody listens on."""
    store = Neo4jStore(f"bolt://127.0.0.1:{free_port()}", None, domains, timeout=2, retry_time=1)
    yield store
    store.close()


def _apply_toggle(store: GraphStore, domains: DomainRegistry) -> object:
    memory = WorldMemory(store, "home", domains.get("example_home"))
    return memory.apply(Delta(add={Fact("light_on", ("lamp_1",))}), source=UpdateSource.API)


def _commit_directly(store: GraphStore, domains: DomainRegistry) -> object:
    update = Update(
        memory="home",
        source=UpdateSource.API,
        delta=Delta(add={Fact("light_on", ("lamp_1",))}),
        status=UpdateStatus.APPLIED,
    )
    return store.commit(update, expected_version=0)


def _record_directly(store: GraphStore, domains: DomainRegistry) -> object:
    issue = Issue(IssueCode.UNKNOWN_ENTITY, None, "no such lamp")
    return store.record(
        Update(memory="home", source=UpdateSource.API, delta=Delta(), status=UpdateStatus.REJECTED, issues=(issue,))
    )


UNREACHABLE_OPERATIONS: dict[str, Callable[[GraphStore, DomainRegistry], object]] = {
    "get_memory": lambda store, _: store.get_memory("home"),
    "list_memories": lambda store, _: store.list_memories(),
    "create_memory": lambda store, _: store.create_memory("home", "example_home"),
    "apply": _apply_toggle,
    "commit": _commit_directly,
    "history": lambda store, _: store.history("home"),
    "record": _record_directly,
}


@pytest.mark.parametrize("operation", sorted(UNREACHABLE_OPERATIONS))
def test_unreachable_neo4j_raises_store_unavailable_quickly(
    dead_neo4j: Neo4jStore, domains: DomainRegistry, operation: str
) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as caught:
        UNREACHABLE_OPERATIONS[operation](dead_neo4j, domains)
    elapsed = time.monotonic() - started
    assert caught.value.backend == "neo4j"
    assert elapsed < UNREACHABLE_LIMIT_S, f"{operation} took {elapsed:.1f} s to give up"


# -- 2. Neo4j killed in the middle of an update ----------------------------------------------

LAMPS_PER_BATCH = 3000


@dataclass
class PrivateNeo4j:
    home: Path
    port: int
    handle: neo4j_server.ServerHandle | None = None
    password: str = ""

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.handle = neo4j_server.start(port=self.port, password=self.password, home=self.home)

    def kill(self) -> None:
        """SIGKILL the JVM and wait until it is gone."""
        assert self.handle is not None
        self.handle.process.send_signal(signal.SIGKILL)
        self.handle.process.wait()
        deadline = time.monotonic() + 30
        while Path(f"/proc/{self.handle.pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)


@pytest.fixture
def private_neo4j(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PrivateNeo4j]:
    """A Neo4j of the test's own on a free port; killed whatever happens (its data is scratch).

    Parametrize indirectly with a password to start it with authentication.
    """
    server = PrivateNeo4j(home=tmp_path / "neo4j", port=free_port(), password=getattr(request, "param", ""))
    try:
        server.start()
        yield server
    finally:
        if server.handle is not None:
            server.kill()
        (server.home / "server.pid").unlink(missing_ok=True)


@pytest.mark.slow
@pytest.mark.neo4j
@pytest.mark.parametrize("private_neo4j", ["l3mp-test-secret"], indirect=True)
def test_neo4j_with_authentication(private_neo4j: PrivateNeo4j, domains: DomainRegistry) -> None:
    wrong = Neo4jStore(private_neo4j.uri, ("neo4j", "not-the-password"), domains, timeout=5, retry_time=1)
    with pytest.raises(StoreUnavailable, match="authentication"):
        wrong.list_memories()
    wrong.close()
    right = Neo4jStore(private_neo4j.uri, ("neo4j", private_neo4j.password), domains, timeout=5, retry_time=1)
    _init_schema_at_once(private_neo4j.uri, ("neo4j", private_neo4j.password), domains)
    right.init_schema()
    memory = survey(right, "guarded")
    assert memory.version == 1 and [m.name for m in right.list_memories()] == ["guarded"]
    right.close()


def _init_schema_at_once(uri: str, auth: tuple[str, str], domains: DomainRegistry, starts: int = 4) -> None:
    """Several processes starting together on a new database: each creates the schema, none fails."""
    stores = [Neo4jStore(uri, auth, domains, timeout=5, retry_time=1) for _ in range(starts)]
    ready = threading.Barrier(starts)
    errors: list[BaseException] = []

    def start(store: Neo4jStore) -> None:
        ready.wait(60)
        try:
            store.init_schema()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    for store in stores:
        store.close()
    assert errors == [], errors


@dataclass
class _CommitGate:
    """Holds the ``pause_at``-th commit's transaction open, its facts written but not committed,
    until the server has been killed: the kill lands mid-commit however fast the machine is."""

    pause_at: int
    adds: int = 0
    mid_commit: threading.Event = field(default_factory=threading.Event)
    killed: threading.Event = field(default_factory=threading.Event)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real = neo4j_store_module.change_facts

        def change_facts(tx: neo4j.ManagedTransaction, memory: str, facts: Iterable[Fact], change: str) -> None:
            real(tx, memory, facts, change)
            if change == "add":
                self.adds += 1
                if self.adds == self.pause_at:
                    self.mid_commit.set()
                    self.killed.wait(120)

        monkeypatch.setattr(neo4j_store_module, "change_facts", change_facts)


def _lamp_batch(batch: int) -> tuple[tuple[Entity, ...], frozenset[Fact]]:
    lamps = tuple(Entity(f"lamp_{batch}_{i}", "light", f"lamp {i} of batch {batch}") for i in range(LAMPS_PER_BATCH))
    facts = frozenset(
        fact for lamp in lamps for fact in (Fact("light_in", (lamp.name, "hall")), Fact("light_on", (lamp.name,)))
    )
    return lamps, facts


def _commit_next_batch(store: GraphStore, memory: str, batch: int, version: int) -> Update:
    lamps, facts = _lamp_batch(batch)
    update = Update(
        memory=memory,
        source=UpdateSource.SENSOR,
        delta=Delta(add=facts, new_entities=lamps),
        status=UpdateStatus.APPLIED,
    )
    return store.commit(update, expected_version=version)


@dataclass(kw_only=True)
class _Writer:
    memory: WorldMemory
    acked: list[Update] = field(default_factory=list)
    in_flight: int | None = None
    error: BaseException | None = None
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        batch = 0
        try:
            while not self.stop.is_set():
                lamps, facts = _lamp_batch(batch)
                self.in_flight = batch
                update = self.memory.add_entities(lamps, facts=facts, input=f"batch {batch}")
                assert update.status is UpdateStatus.APPLIED, update.issues
                self.acked.append(update)
                self.in_flight = None
                batch += 1
        except BaseException as exc:
            self.error = exc


@pytest.mark.slow
@pytest.mark.neo4j
def test_neo4j_killed_mid_update_keeps_last_committed_state(
    private_neo4j: PrivateNeo4j, domains: DomainRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Neo4jStore(private_neo4j.uri, None, domains, timeout=2, retry_time=1)
    store.init_schema()
    memory = survey(store, "kill_me")
    small = [
        memory.apply(Delta(add={Fact("light_on", ("lamp_1",))}), source=UpdateSource.API),
        memory.apply(
            Delta(remove={Fact.parse("(on mug_1 table_1)")}, add={Fact.parse("(on mug_1 shelf_1)")}),
            source=UpdateSource.API,
        ),
    ]
    assert all(u.status is UpdateStatus.APPLIED for u in small)
    before_batches = memory.facts()
    entities_before = set(memory.entities())

    gate = _CommitGate(pause_at=2)  # the second batch's commit, once the first is acknowledged
    gate.install(monkeypatch)
    writer = _Writer(memory=memory)
    thread = threading.Thread(target=writer.run, daemon=True)
    thread.start()
    assert gate.mid_commit.wait(120), f"the writer did not reach its second commit ({writer.error!r})"
    private_neo4j.kill()
    gate.killed.set()
    thread.join(60)
    writer.stop.set()
    assert not thread.is_alive(), "the writer hung after the server died"

    assert isinstance(writer.error, StoreUnavailable), f"expected StoreUnavailable, got {writer.error!r}"
    assert writer.in_flight == 1 and len(writer.acked) == 1
    with pytest.raises(StoreUnavailable):
        store.get_memory(memory.name)
    with pytest.raises(StoreUnavailable):  # the write path itself (the domain is cached by now)
        _commit_next_batch(store, memory.name, writer.in_flight + 1, writer.acked[-1].version)
    store.close()

    private_neo4j.start()
    reopened = Neo4jStore(private_neo4j.uri, None, domains, timeout=5, retry_time=5)
    try:
        after = WorldMemory.open(reopened, memory.name)
        # the killed update was lost whole: none of its entities or facts, and the version before it
        assert after.version == writer.acked[-1].version
        lamps, _ = _lamp_batch(writer.in_flight)
        assert not {lamp.name for lamp in lamps} & set(after.entities()), "part of the killed update survived"
        assert after.facts() == before_batches | _lamp_batch(0)[1]
        assert set(after.entities()) == entities_before | {lamp.name for lamp in _lamp_batch(0)[0]}

        applied = assert_history_consistent(after)
        acked_ids = [u.id for u in (*small, *writer.acked)]
        history_ids = [u.id for u in applied]
        assert history_ids[1 : 1 + len(acked_ids)] == acked_ids, "an acknowledged update is missing from history"
        assert len(history_ids) == after.version
    finally:
        reopened.close()


# -- 6. A write racing delete_memory (Neo4j) ---------------------------------------------------
# Each test holds a real row lock with a raw transaction so the interleaving is deterministic.

BLOCKED_WAIT_S = 30.0


@pytest.fixture
def raw_neo4j(neo4j_store: Neo4jStore) -> Iterator[neo4j.Driver]:
    driver = neo4j.GraphDatabase.driver(neo4j_uri(), auth=neo4j_auth())
    yield driver
    driver.close()


def _wait_blocked(driver: neo4j.Driver, count: int) -> None:
    """Wait until ``count`` transactions on the server wait for a lock."""
    deadline = time.monotonic() + BLOCKED_WAIT_S
    while time.monotonic() < deadline:
        with driver.session() as session:
            blocked = session.run(
                "SHOW TRANSACTIONS YIELD status WHERE status STARTS WITH 'Blocked' RETURN count(*) AS n"
            ).single(strict=True)["n"]
        if blocked >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} transactions got blocked")


def _leftovers(driver: neo4j.Driver, memory: str) -> list[str]:
    with driver.session() as session:
        return session.run(
            "MATCH (n {memory: $m}) RETURN labels(n)[0] + ' seq=' + coalesce(toString(n.seq), '-') AS n "
            "UNION ALL MATCH (n:Memory {name: $m}) RETURN 'Memory' AS n",
            m=memory,
        ).value()


def _purge(driver: neo4j.Driver, memory: str) -> None:
    with driver.session() as session:
        session.run("MATCH (n {memory: $m}) DETACH DELETE n", m=memory).consume()
        session.run("MATCH (n:Memory {name: $m}) DETACH DELETE n", m=memory).consume()


@pytest.mark.neo4j
def test_neo4j_write_racing_delete_memory_leaves_nothing(neo4j_store: Neo4jStore, raw_neo4j: neo4j.Driver) -> None:
    memory = survey(neo4j_store)
    deleter = threading.Thread(target=neo4j_store.delete_memory, args=(memory.name,))
    try:
        with raw_neo4j.session() as session, session.begin_transaction() as hold:
            # Hold alex's row lock: delete_memory's entity pass waits on it, after the update pass.
            hold.run("MATCH (e:Entity {memory: $m, name: 'alex'}) SET e.l3mp_probe = true", m=memory.name).consume()
            deleter.start()
            _wait_blocked(raw_neo4j, 1)
            try:  # a rejected update: it is recorded (an Update node) without touching any entity
                racing = memory.apply(Delta(remove={Fact("light_on", ("lamp_1",))}), source=UpdateSource.API)
                assert racing.status is UpdateStatus.REJECTED
            except UnknownMemory:
                pass  # as good: the memory was already gone for writers
            hold.rollback()
        deleter.join(60)
        assert not deleter.is_alive()
        assert _leftovers(raw_neo4j, memory.name) == [], "delete_memory left part of the memory behind"
    finally:
        deleter.join(60)
        _purge(raw_neo4j, memory.name)


@pytest.mark.neo4j
def test_neo4j_write_to_memory_deleted_meanwhile_raises_unknown_memory(
    neo4j_store: Neo4jStore, raw_neo4j: neo4j.Driver
) -> None:
    memory = survey(neo4j_store)
    deleter = threading.Thread(target=neo4j_store.delete_memory, args=(memory.name,))
    outcome: list[object] = []

    def write() -> None:
        issue = Issue(IssueCode.UNKNOWN_ENTITY, None, "no such lamp")
        try:
            outcome.append(
                neo4j_store.record(
                    Update(
                        memory=memory.name,
                        source=UpdateSource.API,
                        delta=Delta(),
                        status=UpdateStatus.REJECTED,
                        issues=(issue,),
                    )
                )
            )
        except Exception as exc:
            outcome.append(exc)

    writer = threading.Thread(target=write)
    try:
        with raw_neo4j.session() as session, session.begin_transaction() as hold:
            # Hold the Memory node's lock: delete_memory's last pass waits on it, then the writer does.
            hold.run("MATCH (m:Memory {name: $m}) SET m.l3mp_probe = true", m=memory.name).consume()
            deleter.start()
            _wait_blocked(raw_neo4j, 1)
            writer.start()
            _wait_blocked(raw_neo4j, 2)
            hold.rollback()
        deleter.join(60)
        writer.join(60)
        (result,) = outcome
        assert isinstance(result, Update | UnknownMemory), f"a write to a vanishing memory raised {result!r}"
        assert _leftovers(raw_neo4j, memory.name) == []
    finally:
        deleter.join(60)
        writer.join(60)
        _purge(raw_neo4j, memory.name)


@pytest.mark.neo4j
def test_another_process_making_the_memory_again_in_another_domain_is_written_in_that_domain(
    neo4j_store: Neo4jStore, domains: DomainRegistry
) -> None:
    """The store keeps each memory's domain: the domain of a memory deleted and made again elsewhere,
    under its name, in another domain, is never used for the new one (its unary facts are properties)."""
    name = unique_name("domains")
    held = WorldMemory.create(neo4j_store, name, "example_home")
    assert neo4j_store.facts(name) == frozenset()  # this process now holds the memory's domain
    switched = Fact.parse("(switched_on lamp_1)")  # household's (a property of its node); not example_home's
    other = Neo4jStore(neo4j_uri(), neo4j_auth(), domains)  # another process
    try:
        other.delete_memory(name)
        made = WorldMemory.create(other, name, "household")
        lamp = Delta(new_entities=(Entity("lamp_1", "light"),), add=frozenset({switched}))
        assert made.apply(lamp, source=UpdateSource.SENSOR).status is UpdateStatus.APPLIED
    finally:
        other.close()
    with pytest.raises(UnknownMemory, match=name):  # the handle on the deleted one writes nothing
        held.apply(Delta(new_entities=(Entity("lamp_2", "light"),)), source=UpdateSource.SENSOR)
    again = WorldMemory.open(neo4j_store, name)
    assert again.domain.name == "household"
    assert switched in again.facts()  # read in the new memory's domain
    off = again.apply(Delta(remove=frozenset({switched})), source=UpdateSource.SENSOR)
    assert off.status is UpdateStatus.APPLIED, off.issues
    assert again.facts() == frozenset()
    neo4j_store.delete_memory(name)
