"""Prompts: golden renderings, strict-mode schemas, per-request schemas, the static prefix, input checks and re-prompts.

Rewrite the golden files with ``L3MP_UPDATE_GOLDEN=1 pytest tests/l3mp/test_prompts.py`` and review the diff.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kg_memory.domain import Domain, DomainRegistry
from kg_memory.errors import L3mpError
from kg_memory.model import Entity, Fact
from l3mp.llm._json import outline, schema_instruction
from l3mp.llm.base import Message
from l3mp.prompts import (
    ISSUES_HEADER,
    EntitySelectionInput,
    GoalInput,
    InvalidPromptInput,
    QueryGraphInput,
    StateChangeInput,
    entity_selection,
    follow_up,
    goal,
    query_graph,
    schemas,
    state_change,
)
from l3mp.prompts._common import domain_block
from retrieval.query import QueryGraph

GOLDEN = Path(__file__).parent / "golden"
UTTERANCE = "Alice took the blue mug off the kitchen table and turned off the overhead light."
PREVIOUS = '{"remove": [], "add": [{"predicate": "holding", "args": ["alice", "mug_1"]}]}'
ISSUES = ("(on mug_1 table_1) is still true: remove it when mug_1 moves.", "Unknown predicate 'holding'.")


@pytest.fixture(scope="module")
def domain() -> Domain:
    return DomainRegistry().get("example_home")


def _entities() -> list[Entity]:  # deliberately unsorted: rendering sorts
    return [
        Entity("mug_1", "dish", "blue mug"),
        Entity("kitchen", "room"),
        Entity("table_1", "furniture", "kitchen table"),
        Entity("lamp_1", "light", "overhead light"),
        Entity("alice", "person", "Alice"),
        Entity("living_room", "room", "living room"),
        Entity("robot_1", "robot"),
    ]


def _facts() -> list[Fact]:
    return [
        Fact.parse("(on mug_1 table_1)"),
        Fact.parse("(dirty mug_1)"),
        Fact.parse("(in_room table_1 kitchen)"),
        Fact.parse("(light_in lamp_1 kitchen)"),
        Fact.parse("(light_on lamp_1)"),
        Fact.parse("(person_in alice kitchen)"),
        Fact.parse("(connected kitchen living_room)"),
        Fact.parse("(robot_at robot_1 living_room)"),
        Fact.parse("(hand_empty robot_1)"),
    ]


def _cases(domain: Domain) -> dict[str, list[Message]]:
    return {
        "query_graph": query_graph.render(QueryGraphInput(domain, UTTERANCE)),
        "entity_selection": entity_selection.render(EntitySelectionInput(domain, UTTERANCE, _entities())),
        "state_change": state_change.render(StateChangeInput(domain, UTTERANCE, _entities(), _facts())),
        "state_change_reprompt": follow_up(
            state_change.render(StateChangeInput(domain, UTTERANCE, _entities(), _facts())), PREVIOUS, ISSUES
        ),
        "goal": goal.render(
            GoalInput(
                domain=domain,
                task="Bring the blue mug to Alice and switch on the overhead light.",
                entities=_entities(),
                facts=_facts(),
            )
        ),
    }


def _text(messages: Sequence[Message]) -> str:
    return "".join(f"=== {m.role} ===\n{m.content}\n" for m in messages)


@pytest.mark.parametrize("name", ["query_graph", "entity_selection", "state_change", "state_change_reprompt", "goal"])
def test_golden(domain: Domain, name: str) -> None:
    messages = _cases(domain)[name]
    follow = ["assistant", "user"] if name.endswith("reprompt") else []
    assert [m.role for m in messages] == ["system", "user", *follow]
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("L3MP_UPDATE_GOLDEN") == "1":
        path.write_text(_text(messages), encoding="utf-8")
    assert _text(messages) == path.read_text(encoding="utf-8")


def test_rendering_ignores_input_order(domain: Domain) -> None:
    forward = state_change.render(StateChangeInput(domain, UTTERANCE, _entities(), _facts()))
    backward = state_change.render(StateChangeInput(domain, UTTERANCE, _entities()[::-1], _facts()[::-1]))
    assert forward == backward


def test_predicates_shown_with_parameters_and_english(domain: Domain) -> None:
    system = state_change.render(StateChangeInput(domain, UTTERANCE, _entities(), _facts()))[0].content
    assert "(on ?i - item ?f - furniture): ?i is on ?f" in system
    assert "(light_on ?l - light): ?l is on" in system
    user = state_change.render(StateChangeInput(domain, UTTERANCE, _entities(), _facts()))[1].content
    assert "mug_1 (dish): blue mug" in user
    assert "(mug_1, on, table_1)" in user
    assert "(lamp_1, light_on, true)" in user


def test_a_reprompt_follows_the_previous_answer_with_the_issues(domain: Domain) -> None:
    first = state_change.render(StateChangeInput(domain, UTTERANCE, _entities(), _facts()))
    again = follow_up(first, PREVIOUS, ISSUES)
    assert ISSUES_HEADER not in first[-1].content
    assert again[: len(first)] == first  # the context is not repeated
    assert again[-2] == Message("assistant", PREVIOUS)
    assert again[-1].content.startswith(ISSUES_HEADER)
    assert all(f"- {issue}" in again[-1].content for issue in ISSUES)
    goal_first = goal.render(GoalInput(domain=domain, task="Wash the mug.", entities=_entities(), facts=_facts()))
    goal_again = follow_up(goal_first, '{"goal": "(clean cup_9)"}', ["Unknown entity 'cup_9'."])
    assert "- Unknown entity 'cup_9'." in goal_again[-1].content


def test_a_reprompt_without_issues_is_refused(domain: Domain) -> None:
    first = state_change.render(StateChangeInput(domain, UTTERANCE, _entities(), _facts()))
    with pytest.raises(InvalidPromptInput):
        follow_up(first, PREVIOUS, [])
    with pytest.raises(InvalidPromptInput):
        follow_up(first, PREVIOUS, ["  "])


def _walk(schema: Any, where: str = "$") -> Iterator[str]:
    """Every strict-mode violation in ``schema``, by JSON path."""
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            properties = schema.get("properties")
            if not isinstance(properties, dict):
                yield f"{where}: object without properties"
            else:
                if schema.get("additionalProperties") is not False:
                    yield f"{where}: additionalProperties must be false"
                if sorted(schema.get("required", [])) != sorted(properties):
                    yield f"{where}: required must list every property"
        if schema.get("type") == "array" and "items" not in schema:
            yield f"{where}: array without items"
        for key, value in schema.items():
            yield from _walk(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from _walk(value, f"{where}[{i}]")


SCHEMAS = {
    "query_graph": query_graph.SCHEMA,
    "entity_selection": entity_selection.SCHEMA,
    "state_change": state_change.SCHEMA,
    "goal": goal.SCHEMA,
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_is_strict_mode_valid(name: str) -> None:
    assert list(_walk(SCHEMAS[name])) == []


def test_walker_catches_violations() -> None:
    loose = {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}}
    assert len(list(_walk(loose))) == 4


def test_schema_shapes() -> None:
    node = query_graph.SCHEMA["properties"]["nodes"]["items"]
    assert node["properties"]["type"]["type"] == ["string", "null"]
    assert sorted(node["required"]) == ["id", "mention", "type"]
    edit = state_change.SCHEMA["properties"]["add"]["items"]
    assert edit["properties"]["args"] == {"type": "array", "items": {"type": "string"}}
    assert sorted(state_change.SCHEMA["required"]) == ["add", "remove"]
    assert entity_selection.SCHEMA["properties"]["entities"]["items"] == {"type": "string"}
    assert goal.SCHEMA["properties"]["goal"] == {"type": "string"}


def test_query_graph_schema_matches_retrieval_shape() -> None:
    answer = {
        "nodes": [{"id": "n1", "mention": "blue mug", "type": "dish"}, {"id": "n2", "mention": "table", "type": None}],
        "edges": [{"source": "n1", "target": "n2", "relation": "on"}],
    }
    assert QueryGraph.from_json(answer).to_json() == answer


BUILDERS: dict[str, Callable[[Domain, Any], object]] = {
    "query_graph": lambda d, u: QueryGraphInput(d, u),
    "entity_selection": lambda d, u: EntitySelectionInput(d, u, _entities()),
    "state_change": lambda d, u: StateChangeInput(d, u, _entities(), _facts()),
    "goal": lambda d, u: GoalInput(domain=d, task=u, entities=_entities(), facts=_facts()),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("text", ["", "   \n\t", None])
def test_empty_request_rejected_with_the_input(domain: Domain, name: str, text: object) -> None:
    with pytest.raises(InvalidPromptInput) as caught:
        BUILDERS[name](domain, text)
    assert isinstance(caught.value, L3mpError)
    assert caught.value.value == text
    assert repr(text) in str(caught.value)


def test_whitespace_in_request_is_collapsed(domain: Domain) -> None:
    assert QueryGraphInput(domain, "  the  mug\n is gone ").utterance == "the mug is gone"


@pytest.mark.parametrize(
    "build",
    [
        lambda d: StateChangeInput(d, UTTERANCE, ["mug_1"], _facts()),  # type: ignore[list-item]
        lambda d: StateChangeInput(d, UTTERANCE, _entities(), ["(on mug_1 table_1)"]),  # type: ignore[list-item]
        lambda d: GoalInput(domain="example_home", task="Wash the mug.", entities=_entities(), facts=_facts()),  # type: ignore[arg-type]
        lambda d: EntitySelectionInput(d, UTTERANCE, "mug_1"),  # type: ignore[arg-type]
    ],
)
def test_bad_inputs_rejected(domain: Domain, build: Callable[[Domain], object]) -> None:
    with pytest.raises(InvalidPromptInput):
        build(domain)


def test_inputs_are_frozen_tuples(domain: Domain) -> None:
    inputs = StateChangeInput(domain, UTTERANCE, list(_entities()), list(_facts()))
    assert isinstance(inputs.entities, tuple) and isinstance(inputs.facts, tuple)
    with pytest.raises(AttributeError):
        inputs.utterance = "x"  # type: ignore[misc]


def test_empty_context_renders_none(domain: Domain) -> None:
    user = state_change.render(StateChangeInput(domain, UTTERANCE, (), ()))[1].content
    assert "Entities (name (type): label):\n(none)" in user
    assert "Current facts:\n(none)" in user


# -- per-request schemas and the static prefix ------------------------------------------------------


def _defs(schema: dict[str, Any]) -> dict[str, Any]:
    return dict(schema["$defs"])


def _branches(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The state-change schema's edit branches by predicate."""
    edit = _defs(schema)["edit"]
    return {b["properties"]["predicate"]["enum"][0]: b for b in edit.get("anyOf", [edit])}


def _resolve(schema: dict[str, Any], ref: dict[str, Any]) -> dict[str, Any]:
    return dict(_defs(schema)[ref["$ref"].removeprefix("#/$defs/")])


def test_state_change_schema_types_each_argument_by_its_position(domain: Domain) -> None:
    schema = schemas.state_change_schema(domain, _entities(), dialect="tuples")
    branches = _branches(schema)
    for predicate, branch in branches.items():
        assert branch["properties"]["predicate"]["enum"] == [predicate]
        args = branch["properties"]["args"]
        assert args["minItems"] == args["maxItems"] == len(args["prefixItems"]) == domain.predicates[predicate].arity
    on = [_resolve(schema, r)["enum"] for r in branches["on"]["properties"]["args"]["prefixItems"]]
    assert on == [["mug_1"], ["table_1"]]  # a dish is an item; the room and the person are not
    person_in = [_resolve(schema, r)["enum"] for r in branches["person_in"]["properties"]["args"]["prefixItems"]]
    assert person_in == [["alice"], ["kitchen", "living_room"]]


def test_portable_schema_is_strict_mode_valid_and_types_arguments_by_the_predicates_parameters(domain: Domain) -> None:
    schema = schemas.state_change_schema(domain, _entities())
    assert list(_walk(schema)) == []
    assert "prefixItems" not in json.dumps(schema)  # OpenAI's strict mode refuses it
    args = _branches(schema)["on"]["properties"]["args"]
    assert args["minItems"] == args["maxItems"] == 2
    allowed = {n for ref in args["items"]["anyOf"] for n in _resolve(schema, ref)["enum"]}
    assert allowed == {"mug_1", "table_1"}  # never a room, a person or a light


def test_constants_fill_parameters_of_their_type(domain: Domain) -> None:
    without_robot = [e for e in _entities() if e.name != "robot_1"]
    schema = schemas.state_change_schema(domain, without_robot, dialect="tuples")
    (robot,) = _branches(schema)["hand_empty"]["properties"]["args"]["prefixItems"]
    assert _resolve(schema, robot)["enum"] == ["robot_1"]  # the domain's constant


def test_predicates_without_a_well_typed_argument_are_left_out(domain: Domain) -> None:
    no_person = [e for e in _entities() if e.type != "person"]
    branches = _branches(schemas.state_change_schema(domain, no_person))
    assert "person_in" not in branches and "in_hand" not in branches
    assert {"on", "dirty", "light_on"} <= set(branches)


def test_with_no_usable_predicate_the_schema_falls_back_to_predicate_names_with_free_arguments(domain: Domain) -> None:
    bare = dataclasses.replace(domain, constants={})
    schema = schemas.state_change_schema(bare, [Entity("kitchen", "room")])  # connected needs two rooms...
    assert "connected" in _branches(schema)  # ...which one room fills twice
    schema = schemas.state_change_schema(bare, [])
    edit = _defs(schema)["edit"]
    assert edit["properties"]["predicate"]["enum"] == sorted(domain.predicates)
    assert edit["properties"]["args"] == {"type": "array", "items": {"type": "string"}}
    assert list(_walk(schema)) == []


def test_large_contexts_leave_the_largest_types_free(domain: Domain) -> None:
    many = [Entity(f"mug_{i}", "dish") for i in range(schemas.MAX_NAMES + 1)]
    schema = schemas.state_change_schema(domain, [*many, *_entities()], dialect="tuples")
    refs = _branches(schema)["on"]["properties"]["args"]["prefixItems"]
    assert _resolve(schema, refs[0]) == {"type": "string"}  # past the cap: any name, still verified
    assert _resolve(schema, refs[1])["enum"] == ["table_1"]
    total = sum(len(d.get("enum", ())) for k, d in _defs(schema).items() if k != "edit")
    assert total <= schemas.MAX_TOTAL_NAMES
    names = {"a": ("x",) * 400, "b": ("y",) * 400, "c": ("z",) * 400}
    assert schemas.enumerable(names) == {"a", "b"}  # the third would pass the total


def test_goal_schema_pattern_admits_well_typed_goals_only(domain: Domain) -> None:
    pattern = re.compile(schemas.goal_schema(domain, _entities())["properties"]["goal"]["pattern"])
    for good in ["(on mug_1 table_1)", "(and (in_hand mug_1 alice) (light_on lamp_1))", "(not (dirty mug_1))"]:
        assert pattern.fullmatch(good), good
    for bad in ["(on kitchen table_1)", "(teleported mug_1)", "(on mug_1)", "(dirty mug_9)", "(on  mug_1 table_1)"]:
        assert not pattern.fullmatch(bad), bad


def test_other_schemas_list_the_names_they_are_about(domain: Domain) -> None:
    selection = schemas.entity_selection_schema(_entities())["properties"]["entities"]
    assert selection["items"]["enum"] == sorted(e.name for e in _entities())
    assert selection["maxItems"] == schemas.MAX_SELECTED
    node = schemas.query_graph_schema(domain)["properties"]["nodes"]["items"]["properties"]
    assert node["type"]["anyOf"][0]["enum"] == sorted(t for t in domain.types if t != "object")
    assert node["id"]["enum"][0] == "n1"


@pytest.mark.parametrize("dialect", schemas.DIALECTS)
def test_per_request_schemas_outline_to_the_static_shape(domain: Domain, dialect: schemas.Dialect) -> None:
    """The client's schema paragraph (leading the conversation in JSON mode) shows the outline: the same
    for every request, so it never breaks the cached prefix."""
    assert outline(schemas.state_change_schema(domain, _entities(), dialect=dialect)) == state_change.SCHEMA
    assert outline(schemas.state_change_schema(domain, [], dialect=dialect)) == state_change.SCHEMA
    assert outline(schemas.goal_schema(domain, _entities())) == goal.SCHEMA
    assert outline(schemas.entity_selection_schema(_entities())) == entity_selection.SCHEMA
    assert outline(schemas.query_graph_schema(domain)) == query_graph.SCHEMA
    per_request = schemas.goal_schema(domain, _entities())
    assert schema_instruction(per_request, "goal") == schema_instruction(goal.SCHEMA, "goal")


def test_dialect_follows_the_clients_output_mode() -> None:
    assert schemas.dialect_for(SimpleNamespace(mode="json_object_schema")) == "tuples"
    assert schemas.dialect_for(SimpleNamespace(mode="json_schema")) == "portable"
    assert schemas.dialect_for(object()) == "portable"


def _other_context() -> tuple[list[Entity], list[Fact]]:
    entities = [Entity("cup_7", "dish", "red cup"), Entity("sink_2", "sink"), Entity("bob", "person", "Bob")]
    return entities, [Fact.parse("(on cup_7 sink_2)")]


def test_system_messages_do_not_depend_on_the_request(domain: Domain) -> None:
    """Two requests with different contexts: byte-identical system messages, each starting with the same
    domain text, so a server reuses their cached prefix (the request is all in the last user message)."""
    entities, facts = _other_context()
    pairs = [
        (
            state_change.render(StateChangeInput(domain, UTTERANCE, _entities(), _facts())),
            state_change.render(StateChangeInput(domain, "Bob washed the red cup.", entities, facts)),
        ),
        (
            goal.render(GoalInput(domain=domain, task="Wash the mug.", entities=_entities(), facts=_facts())),
            goal.render(GoalInput(domain=domain, task="Bring Bob the cup.", entities=entities, facts=facts)),
        ),
        (
            entity_selection.render(EntitySelectionInput(domain, UTTERANCE, _entities())),
            entity_selection.render(EntitySelectionInput(domain, "Bob washed the red cup.", entities)),
        ),
        (
            query_graph.render(QueryGraphInput(domain, UTTERANCE)),
            query_graph.render(QueryGraphInput(domain, "Bob washed the red cup.")),
        ),
    ]
    for first, second in pairs:
        assert first[0].content.encode() == second[0].content.encode()
        assert first[0].content.startswith(domain_block(domain) + "\n\n")
        assert first[-1] != second[-1]
    assert "cup_7" not in pairs[0][1][0].content and "mug_1" not in pairs[0][0][0].content
