"""Staged group commit (``WorldMemory.stage_group``, ``SQLiteStore.stage_group``): a group written up
to its COMMIT on one thread and committed from another, or nothing at all; and never staged where
it would have to wait or would fail (the caller then commits it the usual way)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from faults_common import replay

from kg_memory import Delta, DomainRegistry, Fact, StoreUnavailable, Update, UpdateSource, UpdateStatus, WorldMemory
from kg_memory.memory import Proposal, Propose
from kg_memory.stores import SQLiteStore
from kg_memory.verifier import StateView
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS

F = Fact.parse


@pytest.fixture
def sqlite(tmp_path: Path, domains: DomainRegistry) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "staged.db", domains)
    yield store
    store.close()


@pytest.fixture
def home(sqlite: SQLiteStore) -> WorldMemory:
    memory = WorldMemory.create(sqlite, "home", "example_home")
    assert memory.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey").status == UpdateStatus.APPLIED
    return memory


def _move(item: str, to: str) -> Propose:
    def propose(view: StateView) -> Proposal:
        (where,) = [f for f in view.facts_about([item]) if f.predicate == "on" and f.args[0] == item]
        return Proposal(delta=Delta(remove={where}, add={F(f"(on {item} {to})")}), source=UpdateSource.SENSOR)

    return propose


def _state(memory: WorldMemory) -> tuple[int, frozenset[Fact], list[Update]]:
    return memory.version, memory.facts(), memory.history()


def test_a_staged_group_committed_from_another_thread_is_what_apply_group_writes(
    sqlite: SQLiteStore, home: WorldMemory, tmp_path: Path, domains: DomainRegistry
) -> None:
    twin_store = SQLiteStore(tmp_path / "twin.db", domains)
    twin = WorldMemory.create(twin_store, "home", "example_home")
    twin.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    proposals = [_move("mug_1", "shelf_1"), _move("mug_1", "table_1"), _move("book_1", "table_1")]
    before = home.facts()

    staged = home.stage_group(proposals)
    assert staged is not None
    stored: list[Update] = []
    committer = threading.Thread(target=lambda: stored.extend(staged.commit()))
    committer.start()
    committer.join()
    outcomes = staged.outcomes(stored)
    expected = twin.apply_group(proposals)
    twin_store.close()

    assert [(o.status, o.version, o.delta) for o in outcomes if isinstance(o, Update)] == [
        (e.status, e.version, e.delta) for e in expected if isinstance(e, Update)
    ]
    assert len(outcomes) == 3
    assert home.history()[-3:] == stored
    assert replay(before, stored) == home.facts()
    assert {F("(on mug_1 table_1)"), F("(on book_1 table_1)")} <= home.facts()


def test_an_abandoned_group_writes_nothing_and_the_next_one_stages(home: WorldMemory) -> None:
    before = _state(home)
    staged = home.stage_group([_move("mug_1", "shelf_1")])
    assert staged is not None
    staged.abandon()
    assert _state(home) == before
    again = home.stage_group([_move("mug_1", "shelf_1")])
    assert again is not None
    again.outcomes(again.commit())
    assert F("(on mug_1 shelf_1)") in home.facts()


def test_a_group_is_not_staged_while_another_writer_holds_the_write_lock(
    sqlite: SQLiteStore, home: WorldMemory
) -> None:
    before = _state(home)
    other = sqlite3.connect(sqlite.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        assert home.stage_group([_move("mug_1", "shelf_1")]) is None  # at once: it does not wait
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert _state(home) == before
    staged = home.stage_group([_move("mug_1", "shelf_1")])
    assert staged is not None
    staged.outcomes(staged.commit())


def test_only_one_group_is_staged_at_a_time(home: WorldMemory) -> None:
    first = home.stage_group([_move("mug_1", "shelf_1")])
    assert first is not None
    assert home.stage_group([_move("book_1", "table_1")]) is None
    first.outcomes(first.commit())
    second = home.stage_group([_move("book_1", "table_1")])
    assert second is not None
    second.outcomes(second.commit())
    assert {F("(on mug_1 shelf_1)"), F("(on book_1 table_1)")} <= home.facts()


def test_a_group_the_store_would_refuse_is_not_staged(sqlite: SQLiteStore, home: WorldMemory) -> None:
    version = home.version
    stale = Update(
        memory=home.name,
        source=UpdateSource.API,
        delta=Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")}),
        status=UpdateStatus.APPLIED,
        version=version,
    )
    assert sqlite.stage_group(home.name, [stale], version - 1) is None  # another writer moved it on
    absent = Update(
        memory=home.name,
        source=UpdateSource.API,
        delta=Delta(remove={F("(on book_1 table_1)")}),
        status=UpdateStatus.APPLIED,
        version=version,
    )
    assert sqlite.stage_group(home.name, [absent], version) is None  # a removal of a fact not there
    elsewhere = Update(memory="nowhere", source=UpdateSource.API, delta=stale.delta, status=UpdateStatus.APPLIED)
    assert sqlite.stage_group("nowhere", [elsewhere], version) is None  # no such memory
    assert sqlite.stage_group(home.name, [], version) is None
    staged = sqlite.stage_group(home.name, [stale], version)  # and the lock was let go of each time
    assert staged is not None
    assert [u.version for u in staged.finish()] == [version + 1]


def test_a_store_closed_under_a_staged_group_refuses_its_commit_as_unavailable(
    sqlite: SQLiteStore, home: WorldMemory
) -> None:
    staged = home.stage_group([_move("mug_1", "shelf_1")])
    assert staged is not None
    sqlite.close()
    with pytest.raises(StoreUnavailable, match="closed"):
        staged.commit()
