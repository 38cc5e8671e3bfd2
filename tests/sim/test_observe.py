"""The robot's simulated perception and the observation model it produces."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from kg_memory import Fact
from perception import Observation, ObservedEntity
from sim.events import EventGenerator
from sim.household import Home, HomeSpec, generate_home
from sim.observe import observe

F = Fact.parse
Scene = tuple[frozenset[Fact], dict[str, str]]


@pytest.fixture(scope="module")
def home() -> Home:
    return generate_home(HomeSpec(seed=4))


def in_kind(home: Home, kind: str) -> str:
    return next(r for r in home.rooms if home.by_name[r].attrs["kind"] == kind)


def fixture(home: Home, room: str, noun: str) -> str:
    return next(n for n in home.in_room(room) if home.by_name[n].attrs["noun"] == noun)


def placed(state: frozenset[Fact], item: str, fact: Fact) -> frozenset[Fact]:
    """``state`` with ``item`` moved to ``fact`` (its old location fact removed)."""
    old = {f for f in state if f.predicate in ("on", "inside", "in_hand", "held") and f.args[0] == item}
    return (state - old) | {fact}


@pytest.fixture(scope="module")
def kitchen_scene(home: Home) -> Scene:
    """The robot in a kitchen holding a pen; a book on the table, cheese in the closed fridge, beans in the
    open pantry, and a person there holding a phone."""
    kitchen = in_kind(home, "kitchen")
    names = {
        "kitchen": kitchen,
        "table": fixture(home, kitchen, "table"),
        "fridge": fixture(home, kitchen, "fridge"),
        "pantry": fixture(home, kitchen, "pantry"),
        "book": home.of_type("book")[0],
        "cheese": home.of_type("perishable")[0],
        "beans": home.of_type("nonperishable")[0],
        "pen": home.of_type("pen")[0],
        "phone": home.of_type("phone")[0],
        "person": home.people[0],
    }
    state = home.facts
    state = frozenset(f for f in state if f.predicate not in ("robot_at", "in_hand"))
    state = frozenset(f for f in state if not (f.predicate == "person_in" and f.args[0] == names["person"]))
    state = frozenset(f for f in state if not (f.predicate == "open" and f.args[0] == names["fridge"]))
    state = state - {F("(hand_empty robot_1)")}
    in_hand_items = {f.args[0] for f in home.facts if f.predicate == "in_hand"}
    shelf = home.receptacles_for["book"][0]
    for item in in_hand_items:  # put what people held down, to keep one holder in the scene
        state = placed(state, item, Fact("on", (item, shelf)))
    state |= {
        Fact("robot_at", ("robot_1", kitchen)),
        Fact("person_in", (names["person"], kitchen)),
        Fact("open", (names["pantry"],)),
    }
    state = placed(state, names["book"], Fact("on", (names["book"], names["table"])))
    state = placed(state, names["cheese"], Fact("inside", (names["cheese"], names["fridge"])))
    state = placed(state, names["beans"], Fact("inside", (names["beans"], names["pantry"])))
    state = placed(state, names["pen"], Fact("held", (names["pen"], "robot_1")))
    state = placed(state, names["phone"], Fact("in_hand", (names["phone"], names["person"])))
    return state, names


def test_the_robot_sees_its_room_and_what_stands_in_it(home: Home, kitchen_scene: Scene) -> None:
    state, names = kitchen_scene
    seen = observe(home.by_name, state)
    assert seen.room == names["kitchen"] and seen.robot == "robot_1"
    assert seen.names()[:2] == (names["kitchen"], "robot_1")
    assert set(home.in_room(names["kitchen"])) <= set(seen.names())
    table = seen.get(names["table"])
    assert table is not None and table.label == home.label(names["table"]) and table.type == "surface"
    assert ("in_room", names["kitchen"]) in table.relations


def test_items_on_surfaces_and_in_open_containers_are_seen(home: Home, kitchen_scene: Scene) -> None:
    state, names = kitchen_scene
    seen = observe(home.by_name, state)
    book, beans = seen.get(names["book"]), seen.get(names["beans"])
    assert book is not None and ("on", names["table"]) in book.relations
    assert beans is not None and ("inside", names["pantry"]) in beans.relations
    pantry = seen.get(names["pantry"])
    assert pantry is not None and "open" in pantry.properties


def test_items_inside_closed_containers_are_not_seen(home: Home, kitchen_scene: Scene) -> None:
    state, names = kitchen_scene
    seen = observe(home.by_name, state)
    assert names["cheese"] not in seen.names()
    fridge = seen.get(names["fridge"])
    assert fridge is not None and "open" not in fridge.properties
    opened = observe(home.by_name, state | {Fact("open", (names["fridge"],))})
    assert names["cheese"] in opened.names()


def test_people_what_they_hold_and_what_the_robot_holds_are_seen(home: Home, kitchen_scene: Scene) -> None:
    state, names = kitchen_scene
    seen = observe(home.by_name, state)
    person, phone, pen = seen.get(names["person"]), seen.get(names["phone"]), seen.get(names["pen"])
    assert person is not None and ("person_in", names["kitchen"]) in person.relations
    assert phone is not None and ("in_hand", names["person"]) in phone.relations
    assert pen is not None and ("held", "robot_1") in pen.relations
    robot = seen.get("robot_1")
    assert robot is not None and robot.type == "robot" and "hand_empty" not in robot.properties


def test_nothing_from_other_rooms_is_seen(home: Home, kitchen_scene: Scene) -> None:
    state, names = kitchen_scene
    seen = observe(home.by_name, state)
    kitchen = names["kitchen"]
    for entity in seen.entities:
        if entity.name in home.room_of:
            assert home.room_of[entity.name] == kitchen
        if entity.type == "person":
            assert ("person_in", kitchen) in entity.relations
    assert not any(p == "connected" for e in seen.entities for p, _ in e.relations)
    others = [p for p in home.people if Fact("person_in", (p, kitchen)) not in state]
    assert not set(others) & set(seen.names())


def test_observed_facts_are_true_and_complete_for_what_is_seen(home: Home, kitchen_scene: Scene) -> None:
    state, _ = kitchen_scene
    seen = observe(home.by_name, state)
    facts = seen.facts()
    assert facts <= state
    names = set(seen.names())
    about_seen = {f for f in state if f.args and f.args[0] in names and f.predicate != "connected"}
    assert facts == about_seen


def test_observations_round_trip_through_json(home: Home, kitchen_scene: Scene) -> None:
    state, _ = kitchen_scene
    seen = observe(home.by_name, state, time_step=12)
    text = seen.to_json()
    assert json.loads(text)["time_step"] == 12
    again = Observation.from_json(text)
    assert again == seen and again.facts() == seen.facts()
    assert Observation.from_json(seen.to_dict()) == seen
    assert Observation.from_json(text.encode()) == seen


def test_observations_stay_true_while_the_home_changes(home: Home) -> None:
    generator, state = EventGenerator(home, seed=4), home.facts
    for _ in range(100):
        event = generator.next(state)
        state = (state - event.delta.remove) | event.delta.add
        seen = observe(home.by_name, state)
        assert seen.facts() <= state
        assert Fact("robot_at", ("robot_1", seen.room)) in seen.facts()


def test_observe_needs_the_robot_in_a_room(home: Home) -> None:
    state = frozenset(f for f in home.facts if f.predicate != "robot_at")
    with pytest.raises(ValueError, match="no room"):
        observe(home.by_name, state)


def test_the_observation_model_validates_and_normalises() -> None:
    raw = {"name": "Mug_1", "type": "cup", "label": "blue mug", "properties": ["dirty"], "relations": [["on", "T_1"]]}
    entity = ObservedEntity.model_validate(raw)  # lists in, tuples stored
    assert entity.name == "mug_1" and entity.relations == (("on", "t_1"),) and entity.properties == ("dirty",)
    assert entity.facts() == {F("(dirty mug_1)"), F("(on mug_1 t_1)")}
    observation = Observation(room="kitchen", entities=(entity,))
    assert observation.robot == "robot_1" and observation.time_step == 0
    assert observation.to_entities()[0].label == "blue mug"
    with pytest.raises(ValidationError):
        ObservedEntity(name="mug 1", type="cup")
    with pytest.raises(ValidationError):
        Observation(room="kitchen", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Observation(room="kitchen", time_step=-1)
    with pytest.raises(ValidationError):
        entity.name = "other"
