"""l3mp's own ROS 2 services, their handlers called with messages (CDR round trips both ways) over a
real memory: the surveyed example home in SQLite under tmp_path, the scripted model for reports."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import unique_name

from l3mp.examples import survey_json
from l3mp.llm import LanguageModel, ModelUnavailable, ScriptedModel
from l3mp.operations import Operations, Services
from l3mp.operations.models import EntitiesIn, HistoryIn, MemoryIn
from l3mp.outcomes import NotFound
from l3mp.ros.l3mp_services import OBSERVE, PLAN, REPORT, l3mp_services
from l3mp.ros.spec import ServiceSpec
from l3mp.ros.types import Interfaces
from l3mp.settings import Settings
from l3mp.wiring import open_store

INTERFACES = Interfaces.load()
MOVE = {
    "remove": [{"predicate": "on", "args": ["mug_1", "table_1"]}],
    "add": [{"predicate": "on", "args": ["mug_1", "shelf_1"]}],
}
NO_REMOVAL = {"remove": [], "add": MOVE["add"]}  # the mug would be on two things at once
SAID = "Alex moved the blue mug from the kitchen table to the hall shelf."


@dataclass
class Door:
    ops: Operations
    memory: str
    specs: dict[str, ServiceSpec]

    def call(self, name: str, **fields: Any) -> Any:
        """Call ``~/name`` as the node would: the request and the response each through CDR."""
        spec = self.specs[f"~/{name}"]
        request = _round_trip(INTERFACES.new(f"{spec.type_name}_Request", **fields), f"{spec.type_name}_Request")
        return _round_trip(spec.handle(request), f"{spec.type_name}_Response")

    def facts(self, entity: str) -> list[str]:
        return self.ops.facts(self.memory, entity=entity).facts


def _round_trip(message: Any, type_name: str) -> Any:
    return INTERFACES.decode(INTERFACES.encode(message, type_name), type_name)


@pytest.fixture
def open_door(tmp_path: Path) -> Iterator[Any]:
    """``open_door(model=..., memory=..., **settings)``: the services over a surveyed memory (version 1)."""
    opened: list[Services] = []

    def make(model: LanguageModel | None = None, memory: str | None = None, **overrides: Any) -> Door:
        settings = Settings(**{"sqlite_path": tmp_path / "ros.db", "retriever": "full", **overrides})
        services = Services(settings=settings, store=open_store(settings), model=model)
        opened.append(services)
        ops = Operations(services=services)
        name = unique_name("ros")
        ops.create_memory(MemoryIn(name=name, domain="example_home"))
        ops.add_entities(name, EntitiesIn.model_validate(survey_json()))
        specs = {s.name: s for s in l3mp_services(ops, memory or name, INTERFACES)}
        return Door(ops=ops, memory=name, specs=specs)

    yield make
    for services in opened:
        services.close()


def _seen(name: str, type: str, **fields: Any) -> Any:
    return INTERFACES.new("l3mp_msgs/msg/ObservedEntity", name=name, type=type, **fields)


def _relation(predicate: str, other: str) -> Any:
    return INTERFACES.new("l3mp_msgs/msg/Relation", predicate=predicate, object=other)


# the kitchen without the mug on its table: the mug's location becomes unknown
KITCHEN_WITHOUT_MUG = [_seen("table_1", "furniture"), _seen("sink_1", "sink"), _seen("lamp_1", "light")]


def test_the_services_are_private_names_of_loaded_types_and_the_model_bound_ones_are_slow(open_door: Any) -> None:
    door = open_door()
    assert {(s.name, s.type_name, s.slow) for s in door.specs.values()} == {
        ("~/report", REPORT, True),
        ("~/plan", PLAN, True),
        ("~/observe", OBSERVE, False),
    }
    assert {REPORT, PLAN, OBSERVE} <= INTERFACES.services


def test_report_applies_an_english_update_through_the_scripted_model(open_door: Any) -> None:
    model = ScriptedModel([MOVE])
    door = open_door(model=model)
    answer = door.call("report", text=SAID)
    assert (answer.accepted, answer.status, answer.version) == (True, "applied", 2), answer.reasons
    assert answer.added == ["(on mug_1 shelf_1)"] and answer.removed == ["(on mug_1 table_1)"]
    assert answer.update_id == door.ops.history(door.memory, HistoryIn(order="newest", limit=1)).updates[0].id
    assert door.facts("mug_1") == ["(on mug_1 shelf_1)"] and len(model.calls) == 1


def test_a_wrong_report_is_refused_with_its_reasons_and_changes_nothing(open_door: Any) -> None:
    door = open_door(model=ScriptedModel([NO_REMOVAL] * 4))
    answer = door.call("report", text="The blue mug is on the hall shelf.")
    assert (answer.accepted, answer.status, answer.version) == (False, "rejected", 1)
    assert answer.update_id and any("mug_1" in r for r in answer.reasons), answer.reasons
    assert door.facts("mug_1") == ["(on mug_1 table_1)"]


def test_plan_for_a_pddl_goal_returns_steps_and_their_explanation(open_door: Any) -> None:
    door = open_door()
    answer = door.call("plan", goal="(on mug_1 shelf_1)")
    assert answer.status == "solved", (answer.issues, answer.explanation)
    assert answer.goal == "(on mug_1 shelf_1)" and answer.version == 1 and answer.questions == []
    assert any("mug_1" in step for step in answer.steps) and len(answer.explanation) == len(answer.steps)
    assert answer.cost == len(answer.steps)  # the example home has no action costs
    assert door.ops.get_memory(door.memory).version == 1  # planning writes nothing


def test_observe_applies_and_names_the_lost_location_in_its_reasons(open_door: Any) -> None:
    door = open_door()
    answer = door.call("observe", room="kitchen", entities=KITCHEN_WITHOUT_MUG, expected_version=-1)
    assert (answer.accepted, answer.status, answer.version) == (True, "applied", 2), answer.reasons
    assert answer.removed == ["(on mug_1 table_1)"] and answer.added == []
    assert any("mug_1" in r and "unknown" in r for r in answer.reasons), answer.reasons
    assert door.facts("mug_1") == []


def test_observe_carries_relations_and_new_entities_at_the_expected_version(open_door: Any) -> None:
    door = open_door()
    seen = [
        *KITCHEN_WITHOUT_MUG,
        _seen("mug_1", "dish", relations=[_relation("on", "sink_1")]),
        _seen("plate_1", "dish", label="white plate", relations=[_relation("on", "table_1")]),
    ]
    answer = door.call("observe", room="kitchen", robot="robot_1", entities=seen, expected_version=1)
    assert (answer.accepted, answer.status, answer.version) == (True, "applied", 2), answer.reasons
    assert answer.new_entities == ["plate_1"] and "(on plate_1 table_1)" in answer.added
    assert door.facts("mug_1") == ["(on mug_1 sink_1)"]


def test_an_open_world_plan_asks_its_questions_as_sentences(open_door: Any) -> None:
    door = open_door()
    door.call("observe", room="kitchen", entities=KITCHEN_WITHOUT_MUG, expected_version=-1)
    searched = ["kitchen", "hall", "table_1", "shelf_1", "sink_1"]
    answer = door.call("plan", goal="(on mug_1 shelf_1)", open_world=True, explored=searched)
    assert answer.status == "needs_information" and answer.steps == []
    assert answer.questions == [NotFound(where="mug_1", searched=tuple(searched)).sentence()]


def test_errors_are_answers_with_their_message(open_door: Any) -> None:
    door = open_door(model=ScriptedModel([ModelUnavailable("http://127.0.0.1:1", "scripted", "refused")]))
    failed = door.call("report", text=SAID)
    assert (failed.accepted, failed.status, failed.update_id) == (False, "error", "")
    assert any("refused" in r for r in failed.reasons), failed.reasons
    stale = door.call("observe", room="kitchen", entities=KITCHEN_WITHOUT_MUG, expected_version=0)
    assert (stale.accepted, stale.status) == (False, "error") and "version 1, not 0" in stale.reasons[0], stale
    malformed = door.call("observe", room="Kitchen Room!", entities=[], expected_version=-1)
    assert malformed.status == "error" and any("room" in r for r in malformed.reasons), malformed.reasons
    assert door.facts("mug_1") == ["(on mug_1 table_1)"]  # none of them wrote anything

    elsewhere = open_door(memory="no_such_memory")
    for service, fields in (("report", {"text": SAID}), ("observe", {"room": "kitchen"}), ("plan", {"goal": "(x)"})):
        answer = elsewhere.call(service, **fields)
        said = answer.issues if service == "plan" else answer.reasons
        assert answer.status == "error" and any("no_such_memory" in s for s in said), (service, said)


def test_a_report_while_every_model_slot_is_busy_is_an_error_answer(open_door: Any) -> None:
    inside, release = threading.Event(), threading.Event()

    def held(_messages: Any) -> dict[str, Any]:
        inside.set()
        assert release.wait(60), "the test never released the model"
        return MOVE

    door = open_door(model=ScriptedModel([held]), model_concurrency=1)
    first: list[Any] = []
    worker = threading.Thread(target=lambda: first.append(door.call("report", text=SAID)))
    worker.start()
    try:
        assert inside.wait(60), "the first report never reached the model"
        busy = door.call("report", text=SAID)
    finally:
        release.set()
        worker.join(60)
    assert (busy.accepted, busy.status) == (False, "error") and any("busy" in r for r in busy.reasons), busy
    assert first and first[0].status == "applied" and door.facts("mug_1") == ["(on mug_1 shelf_1)"]
