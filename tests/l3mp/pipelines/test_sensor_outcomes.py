"""What a sensor update says about itself, on both stores: a conditional observation, an entity whose
location the observation lost, and an entity observed as another type than the memory's."""

from __future__ import annotations

from typing import Any

import pytest

from kg_memory import Delta, Fact, IssueCode, Update, UpdateSource, UpdateStatus, VersionConflict, WorldMemory
from kg_memory.unknowns import unknown_locations
from l3mp.pipelines import SensorUpdater
from perception import Observation, ObservedEntity

F = Fact.parse
SHELF_IN_HALL = ObservedEntity(name="shelf_1", type="furniture", relations=(("in_room", "hall"),))  # no book on it
LAMP_OFF = Delta(add={F("(light_on lamp_1)")})


def _dirty_mug(type_: str) -> Observation:
    mug = ObservedEntity(name="mug_1", type=type_, properties=("dirty",), relations=(("on", "table_1"),))
    return Observation(room="kitchen", entities=(mug,))


def _snapshot(memory: WorldMemory) -> tuple[Any, ...]:
    return memory.version, memory.facts(), memory.entities(), [u.id for u in memory.history()]


# -- a conditional observation --------------------------------------------------------------------


def test_an_observation_at_the_expected_version_is_applied(home: WorldMemory) -> None:
    result = SensorUpdater(home).apply(_dirty_mug("dish"), expected_version=home.version)
    assert result.update.status is UpdateStatus.APPLIED and result.attempts == 1
    assert F("(dirty mug_1)") in home.facts()


def test_a_stale_expected_version_raises_at_once_and_writes_nothing(home: WorldMemory) -> None:
    read_at = home.version
    assert home.apply(LAMP_OFF, source=UpdateSource.API).status is UpdateStatus.APPLIED
    before = _snapshot(home)
    with pytest.raises(VersionConflict) as caught:
        SensorUpdater(home).apply(_dirty_mug("dish"), expected_version=read_at)
    assert (caught.value.expected, caught.value.actual) == (read_at, read_at + 1)
    assert _snapshot(home) == before  # not even a rejected update is recorded


def _another_writer_first(memory: WorldMemory, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Another writer commits once between the updater's read and its commit; the calls are counted."""
    real, calls = memory.try_apply, []

    def try_apply(delta: Delta, **kwargs: Any) -> Any:
        if not calls:
            other = real(LAMP_OFF, source=UpdateSource.EXECUTION, input="another writer")
            assert isinstance(other, Update) and other.status is UpdateStatus.APPLIED, other
        calls.append(1)
        return real(delta, **kwargs)

    monkeypatch.setattr(memory, "try_apply", try_apply)
    return calls


def test_a_conditional_observation_is_not_retried(home: WorldMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _another_writer_first(home, monkeypatch)
    read_at = home.version
    with pytest.raises(VersionConflict):
        SensorUpdater(home).apply(_dirty_mug("dish"), expected_version=read_at)
    assert len(calls) == 1 and home.version == read_at + 1  # only the other writer's update
    assert home.history()[-1].input == "another writer" and F("(dirty mug_1)") not in home.facts()


def test_without_an_expected_version_a_conflict_is_retried(home: WorldMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _another_writer_first(home, monkeypatch)
    result = SensorUpdater(home).apply(_dirty_mug("dish"))
    assert result.attempts == 2 and len(calls) == 2 and result.update.status is UpdateStatus.APPLIED
    assert F("(dirty mug_1)") in home.facts()


# -- the unknown location, named -----------------------------------------------------------------


def test_an_observation_that_loses_an_entitys_location_says_so(home: WorldMemory) -> None:
    assert F("(on book_1 shelf_1)") in home.facts()
    update = SensorUpdater(home).apply(Observation(room="hall", entities=(SHELF_IN_HALL,))).update
    assert update.status is UpdateStatus.APPLIED and update.delta.remove == {F("(on book_1 shelf_1)")}
    assert update.meta["unknown_location"] == ["book_1"]
    assert update.meta["warnings"] == ["book_1: location now unknown (last (on book_1 shelf_1))"]
    (stored,) = home.history(since_seq=update.seq - 1)
    assert dict(stored.meta) == dict(update.meta)
    # the memory's own account agrees: unknown, last seen on the shelf, by this update
    (unknown,) = unknown_locations(home, home.domain, home.entities(), home.facts())
    assert unknown.entity.name == "book_1" and unknown.last_seen is not None
    assert (unknown.last_seen.fact, unknown.last_seen.version) == (F("(on book_1 shelf_1)"), update.version)


def test_an_entity_already_unknown_is_not_reported_again(home: WorldMemory) -> None:
    look = Observation(room="hall", entities=(SHELF_IN_HALL,))
    SensorUpdater(home).apply(look)
    again = SensorUpdater(home).apply(look.model_copy(update={"time_step": 1})).update
    assert again.status is UpdateStatus.NOOP
    assert again.meta["unknown_location"] == [] and again.meta["warnings"] == []


def test_a_refused_observation_loses_nothing(home: WorldMemory) -> None:
    """The shelf seen in the kitchen would take the book off it, but the observation is refused."""
    wrong_room = Observation(room="kitchen", entities=(SHELF_IN_HALL.model_copy(update={"relations": ()}),))
    update = SensorUpdater(home).apply(wrong_room).update
    assert update.status is UpdateStatus.REJECTED and F("(on book_1 shelf_1)") in update.delta.remove
    assert update.meta["unknown_location"] == [] and F("(on book_1 shelf_1)") in home.facts()


# -- a type change by observation ---------------------------------------------------------------


def test_a_supertype_keeps_the_stored_type_with_a_warning(home: WorldMemory) -> None:
    update = SensorUpdater(home).apply(_dirty_mug("item")).update
    assert update.status is UpdateStatus.APPLIED, update.issues
    assert update.meta["warnings"] == ["mug_1: observed as item, kept as dish"]
    assert home.entities(["mug_1"])["mug_1"].type == "dish" and F("(dirty mug_1)") in home.facts()


def test_a_subtype_keeps_the_stored_type_with_a_warning(home: WorldMemory) -> None:
    as_dish = ObservedEntity(name="book_1", type="dish", relations=(("on", "shelf_1"),))
    update = SensorUpdater(home).apply(Observation(room="hall", entities=(as_dish,))).update
    assert update.status is UpdateStatus.NOOP and update.meta["warnings"] == ["book_1: observed as dish, kept as item"]
    assert home.entities(["book_1"])["book_1"].type == "item"
    # its facts are checked against the kept type: an item cannot be dirty, whatever it was seen as
    dirty = as_dish.model_copy(update={"properties": ("dirty",)})
    refused = SensorUpdater(home).apply(Observation(room="hall", entities=(dirty,))).update
    assert refused.status is UpdateStatus.REJECTED and [i.code for i in refused.issues] == [IssueCode.TYPE_MISMATCH]
    assert "book_1 is of type item" in refused.issues[0].message
    assert refused.meta["warnings"] == ["book_1: observed as dish, kept as item"]


def test_the_same_type_says_nothing(home: WorldMemory) -> None:
    update = SensorUpdater(home).apply(_dirty_mug("dish")).update
    assert update.status is UpdateStatus.APPLIED and update.meta["warnings"] == []


def test_an_unrelated_type_refuses_the_observation_whole(home: WorldMemory) -> None:
    before = _snapshot(home)[:3]
    update = SensorUpdater(home).apply(_dirty_mug("furniture")).update
    assert update.status is UpdateStatus.REJECTED and update.source is UpdateSource.SENSOR
    (issue,) = update.issues
    assert issue.code is IssueCode.TYPE_MISMATCH
    assert "mug_1 is a dish in the memory" in issue.message and "says it is a furniture" in issue.message
    assert _snapshot(home)[:3] == before and home.history()[-1].id == update.id
