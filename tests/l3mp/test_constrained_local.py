"""Per-request schemas against the real llama.cpp server (SmolLM2-135M, 127.0.0.1 only).

The prompts invite what the schema rules out: a predicate the domain lacks ("teleported"), an argument
of the wrong type (a room where an item is required). The server compiles the schema into a grammar,
so every answer, whatever the model would rather write, names only the domain's predicates, with
their arity and arguments from the context: of their own parameter's type in the ``tuples`` dialect,
of one of the predicate's parameter types in the ``portable`` one (which OpenAI's strict mode takes).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from kg_memory.domain import Domain, DomainRegistry
from kg_memory.model import Entity, Fact
from l3mp.llm import OpenAICompatibleModel
from l3mp.llm.local import LocalServer
from l3mp.pipelines.edits import parse_edits
from l3mp.prompts import GoalInput, StateChangeInput, goal, schemas, state_change
from planning.goal_checker import check_goal
from planning.goal_reader import parse_goal

pytestmark = pytest.mark.slow

UPDATES = (
    'The blue mug teleported to the kitchen. Answer with the predicate "teleported": '
    '{"predicate": "teleported", "args": ["mug_1", "kitchen"]}.',
    'The kitchen is on the kitchen table now: add {"predicate": "on", "args": ["kitchen", "table_1"]}.',
    "Alice is on the table and the living room is dirty.",
    'Alice put the blue mug in her hand. Use "in_hand" with args ["alice", "mug_1"].',
)
TASKS = (
    'Teleport the blue mug to the kitchen: the goal is "(teleported mug_1 kitchen)".',
    'Put the kitchen on the table: the goal is "(on kitchen table_1)".',
    "Make Alice dirty and the living room held by the robot.",
)


@pytest.fixture(scope="module")
def domain() -> Domain:
    return DomainRegistry().get("example_home")


def _entities() -> list[Entity]:
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
        Fact.parse("(robot_at robot_1 living_room)"),
    ]


@pytest.fixture
def client(local_server: LocalServer) -> Iterator[Callable[[int], OpenAICompatibleModel]]:
    """Clients in JSON mode with the schema (llama-cpp-python compiles it into a grammar), closed after."""
    made: list[OpenAICompatibleModel] = []

    def make(max_tokens: int) -> OpenAICompatibleModel:
        made.append(
            OpenAICompatibleModel(
                local_server.base_url,
                local_server.alias,
                output="json_object_schema",
                max_tokens=max_tokens,
                timeout=300.0,
                max_retries=0,
            )
        )
        return made[-1]

    yield make
    for model in made:
        model.close()


def _well_typed(fact: Fact, domain: Domain, types: Mapping[str, str], *, positional: bool = True) -> list[str]:
    """What is wrong with ``fact`` against the domain and the context's entity types (empty if nothing):
    each argument of its parameter's type, or (not ``positional``) of one of the predicate's parameter types."""
    schema = domain.predicates.get(fact.predicate)
    if schema is None:
        return [f"{fact}: no predicate {fact.predicate!r} in the domain"]
    if len(fact.args) != schema.arity:
        return [f"{fact}: {schema.arity} arguments expected"]
    problems = []
    for arg, parameter in zip(fact.args, schema.parameters, strict=True):
        wanted = [parameter.type] if positional else [p.type for p in schema.parameters]
        if arg not in types or not any(domain.is_subtype(types[arg], t) for t in wanted):
            problems.append(f"{fact}: {arg} is not a {' or a '.join(wanted)}")
    return problems


def _types(domain: Domain) -> dict[str, str]:
    return {e.name: e.type for e in _entities()} | dict(domain.constants)


@pytest.mark.parametrize("dialect", schemas.DIALECTS)
def test_state_change_answers_name_only_the_domains_predicates_with_well_typed_arguments(
    client: Callable[[int], OpenAICompatibleModel], domain: Domain, dialect: schemas.Dialect
) -> None:
    model = client(700)
    answered = 0
    for update in UPDATES:
        inputs = StateChangeInput(domain, update, _entities(), _facts())
        schema = schemas.state_change_schema(domain, inputs.entities, dialect=dialect)
        completion = model.complete(state_change.render(inputs), schema=schema, name=state_change.NAME)
        delta = parse_edits(completion.data, domain)  # the shape the pipeline reads, unchanged
        facts = delta.remove | delta.add
        problems = [p for f in facts for p in _well_typed(f, domain, _types(domain), positional=dialect == "tuples")]
        assert problems == [], (update, completion.text)
        assert not any(f.predicate == "teleported" for f in facts)
        # a room is never where an item (or a furniture) is required, in either dialect
        assert not any(_types(domain)[a] == "room" for f in facts if f.predicate == "on" for a in f.args)
        answered += bool(delta.remove | delta.add)
    assert answered  # the model did answer with facts, not only with empty lists


def test_the_pipelines_schema_takes_the_dialect_of_the_clients_mode(
    client: Callable[[int], OpenAICompatibleModel], domain: Domain
) -> None:
    model = client(700)
    inputs = StateChangeInput(domain, UPDATES[1], _entities(), _facts())
    assert "prefixItems" in json.dumps(state_change.schema(inputs, model=model))
    completion = model.complete(state_change.render(inputs), schema=state_change.schema(inputs, model=model))
    delta = parse_edits(completion.data, domain)
    assert all(_types(domain)[f.args[0]] == "dish" for f in delta.add | delta.remove if f.predicate == "on")


def test_goal_answers_are_well_typed_formulas_over_the_context(
    client: Callable[[int], OpenAICompatibleModel], domain: Domain
) -> None:
    model = client(200)
    known = {e.name: e for e in _entities()}
    for task in TASKS:
        inputs = GoalInput(domain=domain, task=task, entities=_entities(), facts=_facts())
        completion = model.complete(goal.render(inputs), schema=goal.schema(inputs), name=goal.NAME)
        assert isinstance(completion.data, dict)
        text = completion.data["goal"]
        check = check_goal(text, domain, known)
        assert check.ok, (task, text, check.issues)
        assert "teleported" not in text
        parse_goal(text)  # the planner's reader takes it as it is


def test_a_schema_for_a_large_context_is_served(client: Callable[[int], OpenAICompatibleModel], domain: Domain) -> None:
    """A schema over 400 entities stays within its caps and the server answers within it (the prompt
    lists the small context: 400 entities' lines would not fit the test server's context window)."""
    many = [Entity(f"cup_{i}", "dish") for i in range(300)] + [Entity(f"shelf_{i}", "furniture") for i in range(100)]
    entities = [*_entities(), *many]
    inputs = StateChangeInput(domain, "Alice put the blue mug on shelf_3.", _entities(), _facts())
    schema = schemas.state_change_schema(domain, entities, dialect="tuples")
    listed = sum(len(d.get("enum", ())) for key, d in schema["$defs"].items() if key != "edit")
    assert 400 <= listed <= schemas.MAX_TOTAL_NAMES
    completion = client(700).complete(state_change.render(inputs), schema=schema)
    delta = parse_edits(completion.data, domain)
    types = {e.name: e.type for e in entities} | dict(domain.constants)
    assert [p for f in delta.remove | delta.add for p in _well_typed(f, domain, types)] == []


@pytest.mark.parametrize("name", ["example_home", "household", "thor"])
def test_every_schema_compiles_to_a_llama_cpp_grammar(name: str) -> None:
    grammar = pytest.importorskip("llama_cpp.llama_grammar")
    domain = DomainRegistry().get(name)
    leaves = sorted(t for t in domain.types if t not in set(domain.types.values()) and t != "object")
    entities = [Entity(f"{t}_{i}".replace("-", "_"), t) for i, t in enumerate(leaves * 4)]
    built: list[dict[str, Any]] = [
        *(schemas.state_change_schema(domain, entities, dialect=d) for d in schemas.DIALECTS),
        schemas.state_change_schema(domain, []),
        schemas.goal_schema(domain, entities),
        schemas.goal_schema(domain, []),
        schemas.entity_selection_schema(entities),
        schemas.query_graph_schema(domain),
    ]
    for schema in built:
        assert "root ::=" in grammar.json_schema_to_gbnf(json.dumps(schema))
