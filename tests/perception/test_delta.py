"""Observations → deltas: a closed world within the field of view, over a small in-memory household."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from conftest import SetView
from pydantic import ValidationError

from kg_memory import Delta, Domain, DomainRegistry, Entity, Fact
from perception import Observation, ObservedEntity, observation_delta, unseen_entities

F = Fact.parse

ENTITIES = (
    Entity("kitchen", "room"),
    Entity("hall", "room"),
    Entity("table_1", "surface", "kitchen table"),
    Entity("counter_1", "surface", "kitchen counter"),
    Entity("fridge_1", "container", "fridge"),
    Entity("shelf_1", "surface", "hall shelf"),
    Entity("lamp_1", "light", "ceiling lamp"),
    Entity("mug_1", "cup", "blue mug"),
    Entity("book_1", "book", "cookbook"),
    Entity("cheese_1", "perishable", "cheese"),
    Entity("phone_1", "phone", "phone"),
    Entity("alex", "person", "Alex"),
)
FACTS = frozenset(
    F(f)
    for f in (
        "(connected kitchen hall)",
        "(connected hall kitchen)",
        "(in_room table_1 kitchen)",
        "(in_room counter_1 kitchen)",
        "(in_room fridge_1 kitchen)",
        "(in_room shelf_1 hall)",
        "(appliance_in lamp_1 kitchen)",
        "(robot_at robot_1 kitchen)",
        "(hand_empty robot_1)",
        "(on mug_1 table_1)",
        "(dirty mug_1)",
        "(on book_1 table_1)",
        "(inside cheese_1 fridge_1)",
        "(person_in alex kitchen)",
        "(in_hand phone_1 alex)",
    )
)
# what the robot in the kitchen sees of FACTS (the fridge is closed, so not the cheese)
IN_VIEW = ("kitchen", "robot_1", "table_1", "counter_1", "fridge_1", "lamp_1", "mug_1", "book_1", "alex", "phone_1")
TYPES = {e.name: e.type for e in ENTITIES} | {"robot_1": "robot"}


@pytest.fixture(scope="module")
def domain() -> Domain:
    return DomainRegistry().get("household")


def look(truth: Iterable[Fact], names: Iterable[str], opaque: Iterable[str] = (), **types: str) -> Observation:
    """What a robot in the kitchen reports of ``names`` in ``truth`` (their facts, ``connected`` left out)."""
    facts = frozenset(truth)
    entities = []
    for name in names:
        about = [f for f in facts if f.args[0] == name and f.predicate != "connected"]
        entities.append(
            ObservedEntity(
                name=name,
                type=types.get(name) or TYPES[name],
                properties=tuple(sorted(f.predicate for f in about if f.arity == 1)),
                relations=tuple(sorted((f.predicate, f.args[1]) for f in about if f.arity == 2)),
            )
        )
    return Observation(room="kitchen", entities=tuple(entities), opaque=tuple(opaque))


def delta_for(domain: Domain, observation: Observation, facts: Iterable[Fact] = FACTS) -> Delta:
    delta = observation_delta(observation, SetView(ENTITIES, facts), domain)
    assert not delta.remove & delta.add
    return delta


def test_an_observation_equal_to_the_state_changes_nothing(domain: Domain) -> None:
    delta = delta_for(domain, look(FACTS, IN_VIEW, opaque=["fridge_1"]))
    assert delta.is_empty and delta == Delta()


def test_unknown_entities_are_created_with_their_facts(domain: Domain) -> None:
    truth = FACTS | {F("(on pen_1 counter_1)"), F("(in_room desk_1 kitchen)")}
    seen = look(truth, (*IN_VIEW, "pen_1", "desk_1"), ["fridge_1"], pen_1="pen", desk_1="surface")
    delta = delta_for(domain, seen)
    assert delta.new_entities == (Entity("pen_1", "pen"), Entity("desk_1", "surface"))
    # a new table's static in_room is added like any observed fact; robot_1 is a constant, never created
    assert delta.add == {F("(on pen_1 counter_1)"), F("(in_room desk_1 kitchen)")} and not delta.remove


def test_properties_are_replaced(domain: Domain) -> None:
    switched_on = F("(switched_on lamp_1)")
    on = delta_for(domain, look(FACTS | {switched_on}, IN_VIEW, ["fridge_1"]))
    assert on == Delta(add={switched_on})
    off = delta_for(domain, look(FACTS, IN_VIEW, ["fridge_1"]), FACTS | {switched_on})
    assert off == Delta(remove={switched_on})
    washed = delta_for(domain, look(FACTS - {F("(dirty mug_1)")}, IN_VIEW, ["fridge_1"]))
    assert washed == Delta(remove={F("(dirty mug_1)")})


def test_a_moved_item_has_its_relation_replaced(domain: Domain) -> None:
    truth = (FACTS - {F("(on mug_1 table_1)")}) | {F("(on mug_1 counter_1)")}
    delta = delta_for(domain, look(truth, IN_VIEW, ["fridge_1"]))
    assert delta == Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 counter_1)")})


def test_an_unseen_item_on_a_visible_fixture_loses_its_location(domain: Domain) -> None:
    seen = look(FACTS, [n for n in IN_VIEW if n != "book_1"], ["fridge_1"])
    delta = delta_for(domain, seen)
    assert delta == Delta(remove={F("(on book_1 table_1)")})
    assert unseen_entities(seen, delta) == ("book_1",)


def test_an_item_inside_an_opaque_container_keeps_its_location(domain: Domain) -> None:
    assert delta_for(domain, look(FACTS, IN_VIEW, opaque=["fridge_1"])).is_empty
    # an open fridge shows its contents, so cheese that is not seen is no longer in it
    opened = FACTS | {F("(open fridge_1)")}
    delta = delta_for(domain, look(opened, IN_VIEW), opened)
    assert delta == Delta(remove={F("(inside cheese_1 fridge_1)")})


def test_static_facts_are_never_removed_by_absence(domain: Domain) -> None:
    # a mis-segmented frame: the table without its in_room, and the kitchen never reports `connected`
    missing = FACTS - {F("(in_room table_1 kitchen)"), F("(in_room fridge_1 kitchen)")}
    assert delta_for(domain, look(missing, IN_VIEW, ["fridge_1"])).is_empty
    # nor is a static fact of an unseen entity pointing into view (a table perception missed)
    assert delta_for(domain, look(FACTS, [n for n in IN_VIEW if n != "counter_1"], ["fridge_1"])).is_empty


def test_a_person_who_left_loses_person_in_but_keeps_what_they_hold(domain: Domain) -> None:
    seen = look(FACTS, [n for n in IN_VIEW if n not in ("alex", "phone_1")], ["fridge_1"])
    delta = delta_for(domain, seen)
    assert delta == Delta(remove={F("(person_in alex kitchen)")})  # the phone went with alex, out of view
    assert unseen_entities(seen, delta) == ("alex",)


def test_the_robot_is_where_it_sees_itself(domain: Domain) -> None:
    stale = (FACTS - {F("(robot_at robot_1 kitchen)")}) | {F("(robot_at robot_1 hall)")}
    delta = delta_for(domain, look(FACTS, IN_VIEW, ["fridge_1"]), stale)
    assert delta == Delta(remove={F("(robot_at robot_1 hall)")}, add={F("(robot_at robot_1 kitchen)")})


def test_the_delta_is_deterministic(domain: Domain) -> None:
    truth = (FACTS - {F("(on mug_1 table_1)"), F("(person_in alex kitchen)")}) | {F("(on mug_1 counter_1)")}
    seen = look(truth, [n for n in IN_VIEW if n not in ("alex", "phone_1")], ["fridge_1"])
    first, second = delta_for(domain, seen), delta_for(domain, Observation.from_json(seen.to_json()))
    assert first == second and first.to_json() == second.to_json()


def test_opaque_names_are_validated() -> None:
    fridge = ObservedEntity(name="fridge_1", type="container")
    observation = Observation(room="kitchen", entities=(fridge,), opaque=["Fridge_1"])  # type: ignore[arg-type]
    assert observation.opaque == ("fridge_1",)
    assert Observation.from_json(observation.to_json()) == observation
    assert Observation.from_json(observation.to_dict()) == observation
    with pytest.raises(ValidationError, match="not observed: table_1"):
        Observation(room="kitchen", entities=(fridge,), opaque=("table_1",))
    with pytest.raises(ValidationError):
        Observation(room="kitchen", entities=(fridge,), opaque=("fridge 1",))
