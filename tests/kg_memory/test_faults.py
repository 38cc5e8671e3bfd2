"""Fault injection on the real backends: an unreachable or killed Neo4j, a SIGKILLed SQLite
writer, concurrent writers on one memory, and names that try to smuggle in Cypher or SQL.

Nothing here mocks a database: Neo4j tests use the shared server or a private instance
started (and killed) by the test, SQLite tests use real files and real processes.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import neo4j
import neo4j_server
import pytest
from conftest import SURVEY_ENTITIES, SURVEY_FACTS, neo4j_auth, neo4j_uri, unique_name

from kg_memory import (
    Delta,
    DomainRegistry,
    Entity,
    Fact,
    GraphStore,
    InvalidName,
    Issue,
    IssueCode,
    StoreUnavailable,
    UnknownMemory,
    Update,
    UpdateSource,
    UpdateStatus,
    VersionConflict,
    WorldMemory,
)
from kg_memory.stores import Neo4jStore, SQLiteStore

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _survey(store: GraphStore, name: str | None = None) -> WorldMemory:
    memory = WorldMemory.create(store, name or unique_name("home"), "example_home")
    update = memory.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    assert update.status is UpdateStatus.APPLIED, update.issues
    return memory


def _replay(facts: frozenset[Fact], updates: list[Update]) -> frozenset[Fact]:
    """Apply applied updates in order, checking each one applied exactly to its predecessor."""
    state = set(facts)
    for update in updates:
        assert update.status is UpdateStatus.APPLIED
        assert update.delta.remove <= state, f"update v{update.version} removes facts that did not hold"
        assert not update.delta.add & state, f"update v{update.version} adds facts that already held"
        state.difference_update(update.delta.remove)
        state.update(update.delta.add)
    return frozenset(state)


def _assert_history_consistent(memory: WorldMemory) -> list[Update]:
    """History seqs are 1..n, applied versions are 1..version, and replay gives the state."""
    history = memory.history()
    version = memory.version
    assert [u.seq for u in history] == list(range(1, len(history) + 1))
    applied = [u for u in history if u.status is UpdateStatus.APPLIED]
    assert [u.version for u in applied] == list(range(1, version + 1))
    assert memory.state_at(version).facts == memory.facts()
    assert set(memory.state_at(version).entities) == set(memory.entities())
    return applied


# -- 1. Neo4j unreachable -------------------------------------------------------------------

# Each operation may retry for ``retry_time`` plus the driver's back-off (about 3 s in all).
UNREACHABLE_LIMIT_S = 10.0


@pytest.fixture
def dead_neo4j(domains: DomainRegistry) -> Iterator[Neo4jStore]:
    """A store pointed at a local port nobody listens on."""
    store = Neo4jStore(f"bolt://127.0.0.1:{_free_port()}", None, domains, timeout=2, retry_time=1)
    yield store
    store.close()


def _apply_toggle(store: GraphStore, domains: DomainRegistry) -> object:
    memory = WorldMemory(store, "home", domains.get("example_home"))
    return memory.apply(Delta(add={Fact("light_on", ("lamp_1",))}), source=UpdateSource.API)


def _commit_directly(store: GraphStore, domains: DomainRegistry) -> object:
    update = Update("home", UpdateSource.API, Delta(add={Fact("light_on", ("lamp_1",))}), UpdateStatus.APPLIED)
    return store.commit(update, expected_version=0)


def _record_directly(store: GraphStore, domains: DomainRegistry) -> object:
    issue = Issue(IssueCode.UNKNOWN_ENTITY, None, "no such lamp")
    return store.record(Update("home", UpdateSource.API, Delta(), UpdateStatus.REJECTED, issues=(issue,)))


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
KILL_AFTER_COMMIT_START_S = 0.1


@dataclass
class PrivateNeo4j:
    home: Path
    port: int
    handle: neo4j_server.ServerHandle | None = None

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.handle = neo4j_server.start(port=self.port, home=self.home)

    def kill(self) -> None:
        """SIGKILL the JVM and wait until it is gone."""
        assert self.handle is not None
        self.handle.process.send_signal(signal.SIGKILL)
        self.handle.process.wait()
        deadline = time.monotonic() + 30
        while Path(f"/proc/{self.handle.pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)


@pytest.fixture
def private_neo4j(tmp_path: Path) -> Iterator[PrivateNeo4j]:
    """A Neo4j of the test's own on a free port; killed whatever happens (its data is scratch)."""
    server = PrivateNeo4j(home=tmp_path / "neo4j", port=_free_port())
    try:
        server.start()
        yield server
    finally:
        if server.handle is not None:
            server.kill()
        (server.home / "server.pid").unlink(missing_ok=True)


class _SignallingNeo4jStore(Neo4jStore):
    """The real store, announcing when a commit transaction starts so the kill can aim at it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.commits_started = 0

    def commit(self, update: Update, expected_version: int) -> Update:
        self.commits_started += 1
        return super().commit(update, expected_version)


def _lamp_batch(batch: int) -> tuple[tuple[Entity, ...], frozenset[Fact]]:
    lamps = tuple(Entity(f"lamp_{batch}_{i}", "light", f"lamp {i} of batch {batch}") for i in range(LAMPS_PER_BATCH))
    facts = frozenset(
        fact for lamp in lamps for fact in (Fact("light_in", (lamp.name, "hall")), Fact("light_on", (lamp.name,)))
    )
    return lamps, facts


def _commit_next_batch(store: GraphStore, memory: str, batch: int, version: int) -> Update:
    lamps, facts = _lamp_batch(batch)
    update = Update(memory, UpdateSource.SENSOR, Delta(add=facts, new_entities=lamps), UpdateStatus.APPLIED)
    return store.commit(update, expected_version=version)


@dataclass
class _Writer:
    memory: WorldMemory
    store: _SignallingNeo4jStore
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
    private_neo4j: PrivateNeo4j, domains: DomainRegistry
) -> None:
    store = _SignallingNeo4jStore(private_neo4j.uri, None, domains, timeout=2, retry_time=1)
    store.init_schema()
    memory = _survey(store, "kill_me")
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

    writer = _Writer(memory, store)
    thread = threading.Thread(target=writer.run, daemon=True)
    # Aim at the second batch's commit transaction, once the first is acknowledged.
    target = store.commits_started + 2
    thread.start()
    deadline = time.monotonic() + 120
    while store.commits_started < target and writer.error is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert writer.error is None, writer.error
    assert store.commits_started == target, "the writer did not get going"
    time.sleep(KILL_AFTER_COMMIT_START_S)
    private_neo4j.kill()
    thread.join(60)
    writer.stop.set()
    assert not thread.is_alive(), "the writer hung after the server died"

    assert isinstance(writer.error, StoreUnavailable), f"expected StoreUnavailable, got {writer.error!r}"
    assert writer.in_flight is not None
    with pytest.raises(StoreUnavailable):
        store.get_memory(memory.name)
    with pytest.raises(StoreUnavailable):  # the write path itself (the domain is cached by now)
        _commit_next_batch(store, memory.name, writer.in_flight + 1, writer.acked[-1].version)
    store.close()

    private_neo4j.start()
    reopened = Neo4jStore(private_neo4j.uri, None, domains, timeout=5, retry_time=5)
    try:
        after = WorldMemory.open(reopened, memory.name)
        last_acked = writer.acked[-1].version
        version = after.version
        assert version in (last_acked, last_acked + 1), f"version {version}, last acknowledged {last_acked}"

        lamps, in_flight_facts = _lamp_batch(writer.in_flight)
        in_flight_names = {lamp.name for lamp in lamps}
        stored_names = set(after.entities())
        facts = after.facts()
        committed = before_batches.union(*(_lamp_batch(b)[1] for b in range(writer.in_flight)))
        committed_names = entities_before.union(
            *({lamp.name for lamp in _lamp_batch(b)[0]} for b in range(writer.in_flight))
        )
        if version == last_acked:  # the in-flight update was lost whole
            assert not in_flight_names & stored_names, "part of the killed update's entities survived"
            assert facts == committed
            assert stored_names == committed_names
        else:  # it committed before the kill, just not acknowledged: it must be whole
            assert in_flight_names <= stored_names
            assert facts == committed | in_flight_facts
            assert stored_names == committed_names | in_flight_names

        applied = _assert_history_consistent(after)
        acked_ids = [u.id for u in (*small, *writer.acked)]
        history_ids = [u.id for u in applied]
        assert history_ids[1 : 1 + len(acked_ids)] == acked_ids, "an acknowledged update is missing from history"
        assert len(history_ids) == version
    finally:
        reopened.close()


# -- 3. SQLite writer SIGKILLed --------------------------------------------------------------

SQLITE_LAMPS = 300
SQLITE_ACKS_BEFORE_KILL = 25

_SQLITE_WRITER = textwrap.dedent(
    """
    import sys
    import warnings

    warnings.simplefilter("ignore")
    from kg_memory import Delta, Fact, UpdateSource, WorldMemory
    from kg_memory.stores import SQLiteStore

    path, name, lamps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    memory = WorldMemory.open(SQLiteStore(path), name)
    facts = frozenset(Fact("light_on", (f"bulb_{i}",)) for i in range(lamps))
    on = False
    while True:
        delta = Delta(remove=facts) if on else Delta(add=facts)
        update = memory.apply(delta, source=UpdateSource.API, input="toggle all")
        if update.status.value != "applied":
            print("REJECTED", update.issues, flush=True)
            sys.exit(2)
        on = not on
        print(update.version, flush=True)
    """
)


def test_sqlite_writer_killed_leaves_last_committed_update(tmp_path: Path, domains: DomainRegistry) -> None:
    path = tmp_path / "killed.db"
    store = SQLiteStore(path, domains)
    memory = _survey(store, "kill_me")
    lamps = tuple(Entity(f"bulb_{i}", "light") for i in range(SQLITE_LAMPS))
    update = memory.add_entities(lamps, facts=frozenset(Fact("light_in", (lamp.name, "hall")) for lamp in lamps))
    assert update.status is UpdateStatus.APPLIED, update.issues
    surveyed_version = memory.version
    store.close()

    stderr_path = tmp_path / "writer.stderr"
    with stderr_path.open("wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", _SQLITE_WRITER, str(path), "kill_me", str(SQLITE_LAMPS)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=ROOT,
            text=True,
        )
    acked: list[int] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            acked.append(int(line))  # a non-number (REJECTED ...) fails the test here
            if len(acked) >= SQLITE_ACKS_BEFORE_KILL:
                break
        child.send_signal(signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(30)
        child.stdout.close()  # type: ignore[union-attr]
    assert len(acked) == SQLITE_ACKS_BEFORE_KILL, f"writer stopped early: {stderr_path.read_text()}"
    assert child.returncode == -signal.SIGKILL
    assert acked == list(range(surveyed_version + 1, surveyed_version + 1 + len(acked)))

    with contextlib.closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    reopened = SQLiteStore(path, domains)
    try:
        after = WorldMemory.open(reopened, "kill_me")
        version = after.version
        assert acked[-1] <= version <= acked[-1] + 1
        lit = after.facts(predicate="light_on")
        assert len(lit) in (0, SQLITE_LAMPS), f"a toggle was half applied: {len(lit)} of {SQLITE_LAMPS} lamps on"
        toggles = version - surveyed_version
        assert (len(lit) == SQLITE_LAMPS) == (toggles % 2 == 1)
        _assert_history_consistent(after)
    finally:
        reopened.close()


# -- 4. Concurrent writers on one memory ----------------------------------------------------

UPDATES_PER_THREAD = 30
PLACES = ("table_1", "shelf_1", "sink_1")


@dataclass
class _Outcomes:
    applied: list[Update] = field(default_factory=list)
    rejected: list[Update] = field(default_factory=list)
    conflicts: list[VersionConflict] = field(default_factory=list)
    expected: dict[str, int] = field(default_factory=dict)  # update id -> expected_version used
    errors: list[BaseException] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _move(memory: WorldMemory, item: str) -> Delta:
    """Move ``item`` from where it is now (as read) to the next place."""
    (here,) = memory.facts(predicate="on", entity=item)
    there = PLACES[(PLACES.index(here.args[1]) + 1) % len(PLACES)]
    return Delta(remove={here}, add={Fact("on", (item, there))})


def _toggle(memory: WorldMemory, lamp: str) -> Delta:
    fact = Fact("light_on", (lamp,))
    return Delta(remove={fact}) if fact in memory.facts(predicate="light_on", entity=lamp) else Delta(add={fact})


def _run_writers(
    home: WorldMemory, lamps: tuple[str, str], items: tuple[tuple[str, ...], tuple[str, ...]], *, pinned: bool
) -> _Outcomes:
    """Two threads, each toggling its own lamp and moving items, some shared, concurrently."""
    outcomes = _Outcomes()
    barrier = threading.Barrier(2)
    memory = WorldMemory.open(home.store, home.name)

    def work(lamp: str, movable: tuple[str, ...]) -> None:
        try:
            barrier.wait(30)
            for step in range(UPDATES_PER_THREAD):
                expected = memory.version if pinned else None
                delta = _toggle(memory, lamp)
                if step % 2 == 0:
                    move = _move(memory, movable[step // 2 % len(movable)])
                    delta = Delta(remove=delta.remove | move.remove, add=delta.add | move.add)
                try:
                    update = memory.apply(
                        delta, source=UpdateSource.API, input=f"{lamp} step {step}", expected_version=expected
                    )
                except VersionConflict as exc:
                    with outcomes.lock:
                        outcomes.conflicts.append(exc)
                    continue
                with outcomes.lock:
                    if expected is not None:
                        outcomes.expected[update.id] = expected
                    target = outcomes.applied if update.status is UpdateStatus.APPLIED else outcomes.rejected
                    target.append(update)
        except BaseException as exc:
            with outcomes.lock:
                outcomes.errors.append(exc)

    threads = [threading.Thread(target=work, args=(lamp, movable)) for lamp, movable in zip(lamps, items, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not any(t.is_alive() for t in threads), "a writer hung"
    assert not outcomes.errors, outcomes.errors
    return outcomes


def _prepare_concurrency(home: WorldMemory) -> None:
    update = home.add_entities(
        (Entity("lamp_2", "light"), Entity("cup_1", "dish")),
        facts={Fact.parse("(light_in lamp_2 hall)"), Fact.parse("(on cup_1 sink_1)")},
    )
    assert update.status is UpdateStatus.APPLIED, update.issues


def _assert_no_update_lost(home: WorldMemory, start: int, surveyed: frozenset[Fact], outcomes: _Outcomes) -> None:
    applied = sorted(outcomes.applied, key=lambda u: u.version)
    assert len({u.id for u in applied}) == len(applied)
    assert [u.version for u in applied] == list(range(start + 1, start + 1 + len(applied))), (
        "acknowledged versions are not contiguous and unique"
    )
    assert home.version == start + len(applied)
    assert _replay(surveyed, applied) == home.facts(), "replaying acknowledged updates does not give the state"
    history = home.history()
    assert [u.id for u in history if u.status is UpdateStatus.APPLIED and u.version > start] == [u.id for u in applied]
    assert {u.id for u in outcomes.rejected} <= {u.id for u in history}
    assert len(history) == len({u.id for u in history})
    _assert_history_consistent(home)


@pytest.mark.slow
def test_concurrent_writers_lose_no_update(home: WorldMemory) -> None:
    _prepare_concurrency(home)
    start, surveyed = home.version, home.facts()
    outcomes = _run_writers(home, ("lamp_1", "lamp_2"), (("mug_1", "cup_1"), ("mug_1", "book_1")), pinned=False)
    # Without expected_version a conflict is re-verified and retried; only exhausted retries raise.
    assert len(outcomes.applied) + len(outcomes.rejected) + len(outcomes.conflicts) == 2 * UPDATES_PER_THREAD
    assert outcomes.applied, "nothing was applied"
    _assert_no_update_lost(home, start, surveyed, outcomes)


@pytest.mark.slow
def test_concurrent_writers_with_expected_version(home: WorldMemory) -> None:
    _prepare_concurrency(home)
    start, surveyed = home.version, home.facts()
    outcomes = _run_writers(home, ("lamp_1", "lamp_2"), (("mug_1", "cup_1"), ("mug_1", "book_1")), pinned=True)
    assert len(outcomes.applied) + len(outcomes.rejected) + len(outcomes.conflicts) == 2 * UPDATES_PER_THREAD
    for update in outcomes.applied:  # a conflict was raised, never silently retried on a newer state
        assert update.version == outcomes.expected[update.id] + 1
    for conflict in outcomes.conflicts:
        assert conflict.actual > conflict.expected
    _assert_no_update_lost(home, start, surveyed, outcomes)


def test_stale_expected_version_raises_and_writes_nothing(home: WorldMemory) -> None:
    stale = home.version
    moved = home.apply(Delta(add={Fact("light_on", ("lamp_1",))}), source=UpdateSource.API)
    assert moved.status is UpdateStatus.APPLIED
    state, history = home.state(), home.history()

    delta = Delta(remove={Fact.parse("(on mug_1 table_1)")}, add={Fact.parse("(on mug_1 sink_1)")})
    with pytest.raises(VersionConflict) as caught:
        home.apply(delta, source=UpdateSource.API, expected_version=stale)
    assert (caught.value.expected, caught.value.actual) == (stale, stale + 1)
    # The store's own check, inside the write transaction, bypassing apply's early check.
    with pytest.raises(VersionConflict):
        home.store.commit(
            Update(home.name, UpdateSource.API, delta, UpdateStatus.APPLIED, version=stale), expected_version=stale
        )

    assert home.state() == state
    assert home.history() == history


# -- 5. Names, labels and text with quotes, backticks and Cypher -----------------------------

EVIL_LABEL = 'Bob\'s "mug" `x` {a:1}) DETACH DELETE n //'
EVIL_TEXTS = (
    EVIL_LABEL,
    "'); DROP TABLE entities; --",
    "x\\` }]->(m) MATCH (n) DETACH DELETE n RETURN 1 //\n☕ ünïcödé",
)
EVIL_NAMES = (
    "bob's_mug",
    'mug"1',
    "mug`x`",
    "mug_{a:1}",
    "mug_1) DETACH DELETE n //",
    "mug_1'}) MATCH (n) DETACH DELETE n //",
    "mug_1`]->() DELETE",
    "mug;drop",
    "",
)
EVIL_PREDICATES = ("on`]->() DELETE", "on'", "light_on = true DETACH DELETE e //", "on {a:1}")


@dataclass(frozen=True)
class _Snapshot:
    version: int
    entities: dict[str, Entity]
    labels: dict[str, str]
    facts: frozenset[Fact]
    history: int

    @classmethod
    def of(cls, memory: WorldMemory) -> _Snapshot:
        entities = memory.entities()
        labels = {n: e.label for n, e in entities.items()}
        return cls(memory.version, entities, labels, memory.facts(), len(memory.history()))


def test_labels_with_cypher_fragments_are_stored_verbatim(store: GraphStore, home: WorldMemory) -> None:
    bystander = _survey(store)
    before = _Snapshot.of(bystander)
    mugs = tuple(Entity(f"mug_{i + 2}", "dish", text, {"note": text, text: i}) for i, text in enumerate(EVIL_TEXTS))
    update = home.add_entities(mugs, facts={Fact("on", (m.name, "table_1")) for m in mugs}, input=EVIL_LABEL)
    assert update.status is UpdateStatus.APPLIED, update.issues

    stored = home.entities([m.name for m in mugs])
    for mug in mugs:
        assert stored[mug.name].label == mug.label
        assert dict(stored[mug.name].attrs) == dict(mug.attrs)
    assert home.history()[-1].input == EVIL_LABEL
    assert home.store.get_update(home.name, update.id).delta == update.delta

    # Hostile strings used as lookup keys are plain values: they match nothing.
    for text in EVIL_TEXTS:
        assert store.entities(home.name, [text]) == {}
        assert store.facts(home.name, entity=text) == frozenset()
        assert store.facts(home.name, predicate=text) == frozenset()
        with pytest.raises(UnknownMemory):
            store.get_memory(text)
    assert _Snapshot.of(bystander) == before


def test_names_with_cypher_fragments_are_rejected(store: GraphStore, home: WorldMemory) -> None:
    bystander = _survey(store)
    before, home_before = _Snapshot.of(bystander), _Snapshot.of(home)
    memories_before = [m.name for m in store.list_memories()]

    for bad in EVIL_NAMES:
        with pytest.raises(InvalidName):
            Entity(bad, "dish")
        with pytest.raises(InvalidName):
            Entity("mug_2", bad)
        with pytest.raises(InvalidName):
            Fact("on", (bad, "table_1"))
        with pytest.raises(InvalidName):
            store.create_memory(bad, "example_home")
        with pytest.raises(InvalidName):
            WorldMemory.create(store, bad, "example_home")
    for bad in EVIL_PREDICATES:
        with pytest.raises(InvalidName):
            Fact(bad, ("mug_1", "table_1"))
    for text in ("(on mug_1 table_1'})", "(on`]->() mug_1 table_1)", "(on mug_1 `x`)"):
        with pytest.raises(InvalidName):
            Fact.parse(text)
    for bad in ("bob's", 'home"1', "home`x`", "home'}) DETACH DELETE m //"):
        with pytest.raises(InvalidName):
            WorldMemory.create(store, bad, "example_home")

    assert [m.name for m in store.list_memories()] == memories_before
    assert _Snapshot.of(bystander) == before
    assert _Snapshot.of(home) == home_before


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
    memory = _survey(neo4j_store)
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
    memory = _survey(neo4j_store)
    deleter = threading.Thread(target=neo4j_store.delete_memory, args=(memory.name,))
    outcome: list[object] = []

    def write() -> None:
        issue = Issue(IssueCode.UNKNOWN_ENTITY, None, "no such lamp")
        try:
            outcome.append(
                neo4j_store.record(
                    Update(memory.name, UpdateSource.API, Delta(), UpdateStatus.REJECTED, issues=(issue,))
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
