"""``~/updates`` and the history feed under it: every applied update of a memory, whichever door wrote
it (the operations, the REST app over the same SQLite file), published once each, in order, from the
feed's start to its stop. Waits are on events (the bounds only keep a broken feed from hanging)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import unique_name
from fastapi.testclient import TestClient

from kg_memory import UnknownMemory, UpdateStatus
from l3mp.examples import survey_json
from l3mp.operations import Operations, Services
from l3mp.operations.feed import HistoryFeed, newest_seq
from l3mp.operations.models import DeltaIn, EntitiesIn, MemoryIn, ObservationIn, UpdateOut
from l3mp.ros.types import Interfaces
from l3mp.ros.updates_feed import UPDATE, UPDATES, UpdatesFeed
from l3mp.service import create_app
from l3mp.settings import Settings
from l3mp.wiring import open_store

INTERFACES = Interfaces.load()
HANG = 60.0  # seconds before a test gives up on a feed that never delivers
MOVE = DeltaIn(remove=["(on mug_1 table_1)"], add=["(on mug_1 shelf_1)"], input="moved")
BACK = DeltaIn(remove=["(on mug_1 shelf_1)"], add=["(on mug_1 table_1)"], input="back")


class Recorder:
    """A Publisher that keeps what it was given (each message through CDR, as the wire would carry it)."""

    def __init__(self, *, fail_first: int = 0) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.fail_first = fail_first
        self._changed = threading.Condition()

    def publish(self, topic: str, message: Any) -> None:
        with self._changed:
            if self.fail_first > 0:
                self.fail_first -= 1
                raise RuntimeError("the subscriber went away")
            decoded = INTERFACES.decode(INTERFACES.encode(message, UPDATE), UPDATE)
            self.sent.append((topic, decoded))
            self._changed.notify_all()

    def wait_for(self, update_id: str) -> None:
        with self._changed:
            arrived = self._changed.wait_for(lambda: any(m.id == update_id for _, m in self.sent), HANG)
        assert arrived, f"update {update_id} was never published; got {[m.id for _, m in self.sent]}"


@pytest.fixture
def ops(tmp_path: Path) -> Iterator[Operations]:
    settings = Settings(sqlite_path=tmp_path / "feed.db", retriever="full")
    services = Services(settings=settings, store=open_store(settings))
    yield Operations(services=services)
    services.close()


def surveyed(ops: Operations) -> str:
    name: str = unique_name("feed")
    ops.create_memory(MemoryIn(name=name, domain="example_home"))
    ops.add_entities(name, EntitiesIn.model_validate(survey_json()))
    return name


def test_each_applied_update_is_published_once_in_order_from_the_start_to_the_stop(ops: Operations) -> None:
    name = surveyed(ops)
    before = ops.apply_delta(name, MOVE)  # written before the start: not published
    recorder = Recorder()
    feed = UpdatesFeed(ops=ops, memory=name, interfaces=INTERFACES, publisher=recorder, poll=0.05)
    assert feed.start() == before.seq and feed.running
    try:
        back = ops.apply_delta(name, BACK)
        rejected = ops.apply_delta(name, DeltaIn(add=["(on mug_1 shelf_1)"]))  # on two things at once
        noop = ops.apply_delta(name, DeltaIn(input="nothing changed"))
        kitchen = {"room": "kitchen", "entities": [{"name": "table_1", "type": "furniture"}]}
        seen = ops.observe(name, ObservationIn.model_validate(kitchen))
        last = ops.apply_delta(name, DeltaIn(add=["(on mug_1 shelf_1)"], input="found"))  # lost, now found
        statuses = [u.status for u in (back, rejected, noop, seen, last)]
        assert statuses == ["applied", "rejected", "noop", "applied", "applied"], statuses
        recorder.wait_for(last.id)
    finally:
        assert feed.stop(HANG) and not feed.running
    expected = [back, seen, last]
    assert [(topic, m.id) for topic, m in recorder.sent] == [(UPDATES.name, u.id) for u in expected]
    assert [m.seq for _, m in recorder.sent] == sorted(u.seq for u in expected)
    published = recorder.sent[0][1]
    assert (published.memory, published.source, published.status, published.version) == (name, "api", "applied", 3)
    assert (published.added, published.removed, published.input) == (BACK.add, BACK.remove, "back")
    assert published.stamp.sec == int(back.time.timestamp())
    assert published.stamp.nanosec == back.time.microsecond * 1000
    sensor = recorder.sent[1][1]
    assert sensor.source == "sensor" and any("mug_1" in r and "unknown" in r for r in sensor.reasons), sensor


def test_an_update_through_the_rest_app_over_the_same_store_is_published(ops: Operations, tmp_path: Path) -> None:
    name = surveyed(ops)
    recorder = Recorder()
    feed = UpdatesFeed(ops=ops, memory=name, interfaces=INTERFACES, publisher=recorder, poll=0.05)
    feed.start()
    try:
        with TestClient(create_app(Settings(sqlite_path=tmp_path / "feed.db", retriever="full"))) as client:
            response = client.post(f"/v1/memories/{name}/deltas", json=MOVE.model_dump())
            assert response.status_code == 200, response.text
        moved = response.json()
        recorder.wait_for(moved["id"])
    finally:
        assert feed.stop(HANG)
    assert [(m.id, m.seq, m.added) for _, m in recorder.sent] == [(moved["id"], moved["seq"], MOVE.add)]


def test_a_failing_publish_loses_only_its_own_update(ops: Operations) -> None:
    name = surveyed(ops)
    recorder = Recorder(fail_first=1)
    feed = UpdatesFeed(ops=ops, memory=name, interfaces=INTERFACES, publisher=recorder, poll=0.05)
    feed.start()
    try:
        lost = ops.apply_delta(name, MOVE)
        kept = ops.apply_delta(name, BACK)
        recorder.wait_for(kept.id)
    finally:
        assert feed.stop(HANG)
    assert [m.id for _, m in recorder.sent] == [kept.id] and lost.id != kept.id


def test_stop_ends_the_wait_between_reads_and_a_feed_needs_a_known_memory(ops: Operations) -> None:
    name = surveyed(ops)
    # an hour between reads: only the stop event can end the wait within the bound
    feed = UpdatesFeed(ops=ops, memory=name, interfaces=INTERFACES, publisher=Recorder(), poll=3600.0)
    feed.start()
    assert feed.running and feed.stop(HANG) and not feed.running
    assert feed.stop(HANG)  # stopping again is harmless
    unknown = UpdatesFeed(ops=ops, memory="no_such_memory", interfaces=INTERFACES, publisher=Recorder())
    with pytest.raises(UnknownMemory, match="no_such_memory"):
        unknown.start()
    assert not unknown.running


def test_the_history_feed_without_a_status_delivers_every_row_and_restarts_from_the_newest(ops: Operations) -> None:
    name = surveyed(ops)
    got: list[UpdateOut] = []
    arrived = threading.Event()

    def deliver(update: UpdateOut) -> None:
        got.append(update)
        if update.input == "last":
            arrived.set()

    feed = HistoryFeed(ops=ops, memory=name, deliver=deliver, poll=0.05)
    assert feed.start() == newest_seq(ops, name) == 2  # the domain's constants, then the survey
    try:
        rejected = ops.apply_delta(name, DeltaIn(add=["(on mug_1 shelf_1)"], input="rejected"))
        last = ops.apply_delta(name, DeltaIn(input="last"))  # changes nothing: a noop
        assert arrived.wait(HANG), [u.id for u in got]
    finally:
        assert feed.stop(HANG)
    assert [(u.id, u.status) for u in got] == [(rejected.id, UpdateStatus.REJECTED), (last.id, UpdateStatus.NOOP)]
    again = ops.apply_delta(name, MOVE)
    assert feed.start() == again.seq  # a restarted feed goes on from what is newest now
    assert feed.stop(HANG)


def test_a_memory_deleted_and_made_again_under_its_name_is_followed_from_its_start(ops: Operations) -> None:
    name = surveyed(ops)
    for _ in range(3):  # the deleted memory's history runs past the new one's
        ops.apply_delta(name, MOVE)
        ops.apply_delta(name, BACK)
    recorder = Recorder()
    feed = UpdatesFeed(ops=ops, memory=name, interfaces=INTERFACES, publisher=recorder, poll=0.05)
    feed.start()
    try:
        ops.delete_memory(name)
        ops.create_memory(MemoryIn(name=name, domain="example_home"))
        ops.add_entities(name, EntitiesIn.model_validate(survey_json()))
        moved = ops.apply_delta(name, MOVE)
        assert moved.seq < 8  # below where the feed stood in the deleted memory's history
        recorder.wait_for(moved.id)
    finally:
        assert feed.stop(HANG)
    assert [m.seq for _, m in recorder.sent] == sorted({m.seq for _, m in recorder.sent})
    assert recorder.sent[-1][1].id == moved.id and all(m.memory == name for _, m in recorder.sent)
