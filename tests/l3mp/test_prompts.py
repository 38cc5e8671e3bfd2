"""Prompts: golden renderings, strict-mode schemas, input checks and re-prompts.

Rewrite the golden files with ``L3MP_UPDATE_GOLDEN=1 pytest tests/l3mp/test_prompts.py`` and review the diff.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kg_memory.domain import Domain, DomainRegistry
from kg_memory.errors import L3mpError
from kg_memory.model import Entity, Fact
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
    state_change,
)
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
