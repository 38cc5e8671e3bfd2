"""An observed entity's relations: the object form and the older pair give the same facts."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from kg_memory import Fact
from perception import Observation, ObservedEntity
from perception.observation import Relation

F = Fact.parse


def _mug(relations: list[object]) -> Observation:
    entity = {"name": "mug_1", "type": "cup", "properties": ["dirty"], "relations": relations}
    return Observation.from_json({"room": "kitchen", "entities": [entity]})


def test_objects_and_pairs_give_the_same_facts() -> None:
    as_objects = _mug([{"predicate": "on", "object": "table_1"}, {"predicate": "Near", "object": " Sink_1 "}])
    as_pairs = _mug([["on", "table_1"], ["near", "sink_1"]])
    mixed = _mug([{"predicate": "on", "object": "table_1"}, ["near", "sink_1"]])
    expected = {F("(dirty mug_1)"), F("(on mug_1 table_1)"), F("(near mug_1 sink_1)")}
    assert as_objects.facts() == as_pairs.facts() == mixed.facts() == expected
    assert as_objects == as_pairs == mixed  # one internal form, whichever was sent
    (mug,) = as_objects.entities
    assert mug.relations == (Relation("on", "table_1"), Relation("near", "sink_1"))
    assert [r.predicate for r in mug.relations] == ["on", "near"] and ("on", "table_1") in mug.relations


def test_relations_round_trip_through_json_as_pairs() -> None:
    observation = _mug([{"predicate": "on", "object": "table_1"}])
    data = json.loads(observation.to_json())
    assert data["entities"][0]["relations"] == [["on", "table_1"]]  # what older readers expect
    assert Observation.from_json(observation.to_json()) == observation


@pytest.mark.parametrize(
    ("relation", "problem"),
    [
        ({"predicate": "on"}, "object: Field required"),
        ({"object": "table_1"}, "predicate: Field required"),
        ({"predicate": "on", "object": "table_1", "subject": "mug_1"}, "subject: Extra inputs are not permitted"),
        ({"predicate": "on", "object": 3}, "object: Input should be a valid string"),
    ],
)
def test_a_malformed_relation_object_is_a_clear_validation_error(relation: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _mug([{"predicate": "on", "object": "table_1"}, relation])
    (error,) = caught.value.errors()
    assert error["loc"] == ("entities", 0, "relations", 1)  # names the offending relation
    assert 'write a relation as {"predicate": "on", "object": "table_1"}' in error["msg"]
    assert problem in error["msg"]


def test_a_malformed_pair_is_still_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        _mug([["on", "table_1", "kitchen"]])
    assert caught.value.errors()[0]["loc"][:4] == ("entities", 0, "relations", 0)


def test_a_bad_name_in_a_relation_object_names_the_rule() -> None:
    with pytest.raises(ValidationError, match="PDDL name"):
        _mug([{"predicate": "on top of", "object": "table_1"}])


def test_the_request_schema_documents_the_object_form_first() -> None:
    schema = ObservedEntity.model_json_schema(mode="validation")
    field = schema["properties"]["relations"]
    assert '{"predicate": "on", "object": "table_1"} (preferred)' in field["description"]
    first, second = field["items"]["anyOf"]
    assert first["type"] == "object" and first["required"] == ["predicate", "object"]
    assert first["additionalProperties"] is False and "preferred" in first["description"]
    assert second["type"] == "array" and second["minItems"] == second["maxItems"] == 2
