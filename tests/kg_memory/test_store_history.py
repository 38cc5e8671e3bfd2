"""The history contract on both stores: checkpoints, history queries, streaming export/import
(verified like live updates) and compaction."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import unique_name

from kg_memory import (
    Checkpoint,
    Delta,
    Fact,
    GraphStore,
    ImportMismatch,
    InvalidValue,
    Issue,
    IssueCode,
    Update,
    UpdateSource,
    UpdateStatus,
    WorldMemory,
)
from kg_memory.jsonl_stream import open_lines
from kg_memory.operations import full_replay

F = Fact.parse
PLACES = ("table_1", "shelf_1", "sink_1")


@pytest.fixture
def small_checkpoints(store: GraphStore) -> Iterator[GraphStore]:
    """Checkpoints every 7 versions, so a short history crosses several."""
    before = store.checkpoint_every
    store.checkpoint_every = 7
    yield store
    store.checkpoint_every = before


def _move(memory: WorldMemory, item: str, to: str) -> None:
    (where,) = [f for f in memory.facts("on", item)]
    update = memory.apply(Delta(remove={where}, add={F(f"(on {item} {to})")}), source=UpdateSource.API)
    assert update.status is UpdateStatus.APPLIED, update.issues


def _churn(memory: WorldMemory, steps: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    for step in range(steps):
        if step % 5 == 4:  # a rejected update now and then: kept in the history, no new version
            memory.apply(Delta(add={F("(on mug_1 shelf_1)"), F("(on mug_1 sink_1)")}), source=UpdateSource.NL)
        elif step % 3 == 0:
            lamp = F("(light_on lamp_1)")
            lit = lamp in memory.facts("light_on")
            memory.apply(Delta(remove={lamp} if lit else set(), add=set() if lit else {lamp}), source=UpdateSource.API)
        else:
            item = rng.choice(("mug_1", "book_1"))
            here = next(iter(memory.facts("on", item))).args[1]
            _move(memory, item, rng.choice([p for p in PLACES if p != here]))


# -- checkpoints --------------------------------------------------------------------------


def test_state_at_from_checkpoints_equals_a_full_replay(small_checkpoints: GraphStore, home: WorldMemory) -> None:
    _churn(home, 60)
    store = small_checkpoints
    top = home.version
    assert top > 30
    checkpoint = store.nearest_checkpoint(home.name, top)
    assert checkpoint is not None and checkpoint.version % 7 == 0 and top - checkpoint.version < 7
    for version in [0, 1, 6, 7, 8, top, *random.Random(1).sample(range(top + 1), 15)]:
        fast, slow = home.state_at(version), full_replay(store, store.domains, home.name, version)
        assert fast.facts == slow.facts, version
        assert set(fast.entities) == set(slow.entities)
    assert home.state_at(top).facts == home.facts()


def test_a_crash_while_writing_a_checkpoint_leaves_a_consistent_memory(
    small_checkpoints: GraphStore, home: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = small_checkpoints
    while (home.version + 1) % 7:
        _churn(home, 1, seed=home.version)
    before = (home.version, home.facts(), len(home.history()))

    def crash(*args: object) -> None:
        raise RuntimeError("power cut while writing the checkpoint")

    monkeypatch.setattr(store, "_write_checkpoint", crash)
    with pytest.raises(RuntimeError, match="power cut"):
        _move(home, "book_1", "table_1")
    assert (home.version, home.facts(), len(home.history())) == before
    assert store.nearest_checkpoint(home.name, before[0] + 1) is None or (
        store.nearest_checkpoint(home.name, before[0] + 1).version < before[0] + 1  # type: ignore[union-attr]
    )
    monkeypatch.undo()
    _move(home, "book_1", "table_1")
    checkpoint = store.nearest_checkpoint(home.name, home.version)
    assert checkpoint is not None and checkpoint.version == home.version
    assert checkpoint.facts == home.facts()


# -- history queries ----------------------------------------------------------------------


def test_one_entitys_history_pages_with_a_cursor(home: WorldMemory) -> None:
    _churn(home, 25)
    everything = [u for u in home.history() if "book_1" in u.delta.mentioned()]
    pages, after = [], 0
    while page := home.query_history(entity="book_1", after=after, limit=3):
        pages.append(page)
        after = page[-1].seq
    assert [u.id for p in pages for u in p] == [u.id for u in everything]
    assert all(len(p) <= 3 for p in pages) and len(pages) > 2
    newest = home.query_history(entity="book_1", newest_first=True, limit=2)
    assert [u.id for u in newest] == [u.id for u in everything[::-1][:2]]


def test_history_by_time_source_and_status(home: WorldMemory) -> None:
    _churn(home, 15)
    history = home.history()
    middle = history[len(history) // 2].time
    assert [u.id for u in home.query_history(since=middle, limit=1000)] == [u.id for u in history if u.time >= middle]
    assert [u.id for u in home.query_history(until=middle, limit=1000)] == [u.id for u in history if u.time < middle]
    rejected = home.query_history(status=UpdateStatus.REJECTED, limit=1000)
    assert rejected and [u.id for u in rejected] == [u.id for u in history if u.status is UpdateStatus.REJECTED]
    nl = home.query_history(source=UpdateSource.NL, status="applied", limit=1000)
    assert nl == []
    assert home.query_history(entity="mug_1", since=datetime.now(UTC) + timedelta(days=1)) == []
    with pytest.raises(InvalidValue, match="page size"):
        home.query_history(limit=0)


def test_an_entitys_history_since_a_time_holds_when_the_log_goes_back_in_time(home: WorldMemory) -> None:
    """A write drafted in another process, or recorded after one drafted later, is stamped earlier
    than one before it in the log: a query by time finds every update in its window, wherever it stands."""
    _churn(home, 10)
    middle = home.history()[len(home.history()) // 2].time
    mug = F("(on mug_1 shelf_1)")
    for minutes in (-90, 1, -1, 0):  # before the window, in it, before it again, at its start
        refused = Update(
            memory=home.name,
            source=UpdateSource.NL,
            delta=Delta(add={mug}),
            status=UpdateStatus.REJECTED,
            issues=(Issue(IssueCode.ADD_PRESENT, mug, "a test's refusal"),),
            time=middle + timedelta(minutes=minutes),
        )
        home.store.record(refused)
    _move(home, "mug_1", "table_1" if mug not in home.facts() else "sink_1")
    about_mug = [u for u in home.history() if "mug_1" in u.delta.mentioned()]
    for since in (middle, middle + timedelta(seconds=30), middle - timedelta(hours=2)):
        expected = [u.id for u in about_mug if u.time >= since]
        assert [u.id for u in home.query_history(entity="mug_1", since=since, limit=1000)] == expected
        newest = home.query_history(entity="mug_1", since=since, newest_first=True, limit=2)
        assert [u.id for u in newest] == expected[::-1][:2]
    later = home.query_history(entity="mug_1", since=middle, until=middle + timedelta(minutes=1), limit=1000)
    assert [u.id for u in later] == [u.id for u in about_mug if middle <= u.time < middle + timedelta(minutes=1)]


def test_last_seen_by_perception(home: WorldMemory) -> None:
    survey = home.history()[1]  # after the domain's constants
    assert home.last_seen("mug_1") == survey
    _move(home, "mug_1", "shelf_1")  # an API update: not perception
    assert home.last_seen("mug_1") == survey
    looked = home.apply(Delta(), source=UpdateSource.SENSOR, meta={"seen": ["mug_1", "shelf_1"]})
    assert looked.status is UpdateStatus.NOOP  # nothing changed, but the robot saw the mug
    assert home.last_seen("mug_1") == looked
    assert home.last_seen("alex") == survey
    assert home.last_seen("nobody") is None


def test_sightings_page_go_with_an_import_and_end_where_compaction_cuts(store: GraphStore, home: WorldMemory) -> None:
    looked = [home.apply(Delta(), source=UpdateSource.SENSOR, meta={"seen": ["mug_1", "book_1"]}) for _ in range(3)]
    _move(home, "mug_1", "shelf_1")  # touches the mug, unseen
    _move(home, "book_1", "table_1")
    copy = WorldMemory.import_lines(store, home.export_lines(), name=unique_name("copy"))
    for memory in (home, copy):
        assert memory.last_seen("mug_1") == next(u for u in memory.history() if u.id == looked[-1].id)
        pages, after = [], 0
        while page := memory.query_history(entity="mug_1", seen_only=True, after=after, limit=2):
            pages.extend(u.id for u in page)
            after = page[-1].seq
        assert pages[-3:] == [u.id for u in looked] and len(pages) == 4  # the survey saw it too
        older = memory.query_history(entity="mug_1", seen_only=True, newest_first=True, before=looked[-1].seq)
        assert [u.id for u in older][:2] == [looked[1].id, looked[0].id]
    home.compact(home.version)
    assert home.last_seen("mug_1") is None and home.last_seen("book_1") is None
    seen_again = home.apply(Delta(), source=UpdateSource.SENSOR, meta={"seen": ["mug_1"]})
    assert home.last_seen("mug_1") == seen_again and home.last_seen("book_1") is None


def test_validity_intervals_of_a_fact_come_from_the_log(home: WorldMemory) -> None:
    _move(home, "mug_1", "shelf_1")
    _move(home, "mug_1", "table_1")
    _move(home, "mug_1", "sink_1")
    spans = home.fact_intervals(F("(on mug_1 table_1)"))
    assert [(s.start_version, s.end_version) for s in spans] == [(1, 2), (3, 4)]
    assert spans[0].start_update == home.history()[1].id and spans[1].end_time is not None  # the survey
    (now,) = home.fact_intervals(F("(on mug_1 sink_1)"))
    assert (now.start_version, now.end_version) == (4, None)
    assert home.fact_intervals(F("(light_on lamp_1)")) == []


# -- streaming export and import ----------------------------------------------------------


def test_json_lines_round_trip_with_history(store: GraphStore, home: WorldMemory) -> None:
    _churn(home, 12)
    lines = list(home.export_lines())
    assert json.loads(lines[0])["format"] == "l3mp.memory.jsonl/1" and "end" in json.loads(lines[-1])
    copy = WorldMemory.import_lines(store, lines, name=unique_name("copy"))
    assert copy.facts() == home.facts() and copy.entities() == home.entities()
    assert [(u.id, u.status, u.version) for u in copy.history()] == [
        (u.id, u.status, u.version) for u in home.history()
    ]
    assert copy.state_at(3).facts == home.state_at(3).facts
    assert [u.id for u in copy.query_history(entity="mug_1", limit=1000)] == [
        u.id for u in home.query_history(entity="mug_1", limit=1000)
    ]


def test_a_cut_stream_is_refused_and_nothing_is_kept(store: GraphStore, home: WorldMemory) -> None:
    _churn(home, 5)
    name = unique_name("cut")
    with pytest.raises(ImportMismatch, match="cut short"):
        WorldMemory.import_lines(store, list(home.export_lines())[:-1], name=name)
    assert name not in {m.name for m in store.list_memories()}


def _grow_raw(store: GraphStore, memory: WorldMemory, moves: int) -> datetime:
    """``moves`` (an even number) moves of the mug between the table and the shelf, appended
    through the store's raw bulk path (``load_history``, checkpoints included), a microsecond
    apart after the survey: test setup, so the round trip verifies once, in its import. The mug
    ends where it began, so the materialized state stays the log's. Returns the first move's time."""
    assert moves % 2 == 0
    entities = tuple(sorted(memory.entities().values(), key=lambda e: e.name))
    base, survey = memory.facts(), memory.history()[-1]
    places = (F("(on mug_1 table_1)"), F("(on mug_1 shelf_1)"))
    start = survey.time + timedelta(microseconds=1)
    updates, checkpoints = [], []
    for n in range(moves):
        version, seq = survey.version + n + 1, survey.seq + n + 1
        away, to = places[n % 2], places[1 - n % 2]
        delta = Delta(remove={away}, add={to})
        when = start + timedelta(microseconds=n)
        updates.append(
            Update(
                memory=memory.name,
                source=UpdateSource.API,
                delta=delta,
                status=UpdateStatus.APPLIED,
                input="",
                issues=(),
                version=version,
                seq=seq,
                time=when,
            )
        )
        if version % store.checkpoint_every == 0:
            checkpoints.append(Checkpoint(version, entities, (base - {places[0]}) | {to}))
        if len(updates) == 10_000 or n == moves - 1:
            store.load_history(memory.name, updates, checkpoints)
            updates, checkpoints = [], []
    return start


# The memory has 100,000 updates on both stores; only its re-import is verified (see _grow_raw).
ROUND_TRIP = 100_000


@pytest.mark.slow
def test_gzip_round_trip_of_100000_updates(store: GraphStore, home: WorldMemory, tmp_path: Path) -> None:
    start = _grow_raw(store, home, ROUND_TRIP - 2)
    _move(home, "mug_1", "sink_1")  # the last one through WorldMemory: a live update after the bulk
    first = WorldMemory.open(store, home.name)
    # the domain's update is at version 0, so every seq is one more than its version
    assert first.version == ROUND_TRIP == first.query_history(newest_first=True, limit=1)[0].seq - 1
    path = tmp_path / "long.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        out.writelines(first.export_lines())
    with open_lines(path) as lines:
        second = WorldMemory.import_lines(store, lines, name=unique_name("again"))
    assert second.version == ROUND_TRIP and second.facts() == first.facts()
    middle = ROUND_TRIP // 2 + 321
    assert (
        second.state_at(middle).facts
        == first.state_at(middle).facts
        == full_replay(store, store.domains, second.name, middle).facts
    )
    since = start + timedelta(microseconds=ROUND_TRIP // 2)  # the second half of the moves
    assert len(second.query_history(entity="mug_1", since=since, limit=10)) == 10


def test_the_one_document_format_still_imports(store: GraphStore, home: WorldMemory) -> None:
    _churn(home, 6)
    copy = WorldMemory.import_(store, json.loads(json.dumps(home.export())), name=unique_name("doc"))
    assert copy.facts() == home.facts() and len(copy.history()) == len(home.history())
