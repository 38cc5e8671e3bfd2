"""An observation that cannot be true of the home is refused whole, on both stores.

Before, an observation from room "nowhere" was applied, a shelf the memory places in the hall seen "in
the kitchen" was applied and took the book off that shelf, and a ``robot`` naming a person was ignored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import unique_name

from kg_memory import Fact, IssueCode, UpdateSource, UpdateStatus, WorldMemory
from l3mp.cli import main
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS
from l3mp.pipelines import SensorUpdater
from perception import Observation, ObservedEntity

MUG_IN_SINK = ObservedEntity(name="mug_1", type="dish", relations=(("on", "sink_1"),))
SHELF = ObservedEntity(name="shelf_1", type="furniture", label="hall shelf")


def _refused(memory: WorldMemory, observation: Observation, code: IssueCode, words: str) -> None:
    """Rejected with ``code``, a message containing ``words``, the state as it was, the rejection recorded."""
    version, facts, entities = memory.version, memory.facts(), memory.entities()
    result = SensorUpdater(memory).apply(observation)
    update = result.update
    assert update.status is UpdateStatus.REJECTED and update.source is UpdateSource.SENSOR
    assert [i.code for i in update.issues] == [code], update.issues
    assert words in update.issues[0].message
    assert memory.version == version and memory.facts() == facts and memory.entities() == entities
    (recorded,) = memory.history(since_seq=update.seq - 1)
    assert recorded.id == update.id and recorded.status is UpdateStatus.REJECTED
    assert Observation.from_json(recorded.input) == observation


def test_a_room_the_memory_does_not_know_is_refused(home: WorldMemory) -> None:
    observation = Observation(room="nowhere", entities=(MUG_IN_SINK,))
    _refused(home, observation, IssueCode.UNKNOWN_ENTITY, "room 'nowhere', which is no entity of this memory")


def test_a_room_that_is_not_a_room_is_refused(home: WorldMemory) -> None:
    observation = Observation(room="table_1", entities=(MUG_IN_SINK,))
    _refused(home, observation, IssueCode.TYPE_MISMATCH, "a furniture, not a room")


def test_a_static_thing_seen_in_another_room_is_a_conflict_that_moves_nothing(home: WorldMemory) -> None:
    assert Fact.parse("(on book_1 shelf_1)") in home.facts()
    bare = Observation(room="kitchen", entities=(SHELF,))  # the book is not seen on it
    _refused(home, bare, IssueCode.OBSERVED_ELSEWHERE, "shelf_1 was seen in kitchen, but the memory has")
    placed = Observation(room="kitchen", entities=(SHELF.model_copy(update={"relations": (("in_room", "kitchen"),)}),))
    _refused(home, placed, IssueCode.OBSERVED_ELSEWHERE, "(in_room shelf_1 hall)")
    assert {Fact.parse("(on book_1 shelf_1)"), Fact.parse("(in_room shelf_1 hall)")} <= home.facts()


def test_a_robot_that_is_not_a_robot_is_refused(home: WorldMemory) -> None:
    person = Observation(room="kitchen", robot="alex", entities=(MUG_IN_SINK,))
    _refused(home, person, IssueCode.TYPE_MISMATCH, "robot 'alex', which is a person, not a robot")
    nobody = Observation(room="kitchen", robot="robot_9", entities=(MUG_IN_SINK,))
    _refused(home, nobody, IssueCode.UNKNOWN_ENTITY, "robot 'robot_9', which is no entity of this memory")


def test_the_same_things_seen_where_they_are_are_applied(home: WorldMemory) -> None:
    """The checks refuse only what cannot be true: the shelf seen in the hall, the mug in the kitchen."""
    hall = Observation(room="hall", entities=(SHELF.model_copy(update={"relations": (("in_room", "hall"),)}),))
    seen = SensorUpdater(home).apply(hall).update
    assert seen.status is UpdateStatus.APPLIED and seen.delta.remove == {Fact.parse("(on book_1 shelf_1)")}
    kitchen = SensorUpdater(home).apply(Observation(room="kitchen", entities=(MUG_IN_SINK,))).update
    assert kitchen.status is UpdateStatus.APPLIED and Fact.parse("(on mug_1 sink_1)") in home.facts()


def test_a_new_room_observed_as_a_room_is_explored_not_refused(home: WorldMemory) -> None:
    """Perception creates entities, rooms included: a room it reports as an entity of type room is known."""
    attic = Observation(room="attic", entities=(ObservedEntity(name="attic", type="room"),))
    update = SensorUpdater(home).apply(attic).update
    assert update.status is UpdateStatus.APPLIED and home.entities()["attic"].type == "room"


def test_the_cli_prints_the_conflict_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kg_memory import DomainRegistry
    from kg_memory.stores import SQLiteStore

    db, name = tmp_path / "cli.db", unique_name("obs")
    store = SQLiteStore(db, DomainRegistry())
    memory = WorldMemory.create(store, name, "example_home")
    assert memory.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS).status is UpdateStatus.APPLIED
    store.close()
    seen = tmp_path / "seen.json"
    for observation, words in (
        (Observation(room="nowhere", entities=(MUG_IN_SINK,)), "room 'nowhere'"),
        (Observation(room="kitchen", entities=(SHELF,)), "(in_room shelf_1 hall)"),
        (Observation(room="kitchen", robot="alex", entities=(MUG_IN_SINK,)), "a person, not a robot"),
    ):
        seen.write_text(observation.to_json())
        capsys.readouterr()
        assert main(["--db", str(db), "observe", name, str(seen), "--json"]) == 2
        out = json.loads(capsys.readouterr().out)
        assert out["status"] == "rejected" and words in out["issues"][0]["message"]
    capsys.readouterr()
    assert main(["--db", str(db), "state", name, "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["version"] == 1 and "(on book_1 shelf_1)" in state["facts"]
