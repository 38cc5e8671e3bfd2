"""The graph payload is declared once: the service answers its pydantic model (and OpenAPI documents it),
and the page's JSDoc typedefs (js/payload.js) name the same fields."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import unique_name
from fastapi.testclient import TestClient
from pydantic import BaseModel, ValidationError

from l3mp.examples import SURVEY_ENTITIES, survey_json
from l3mp.service import create_app
from l3mp.service.schemas import GraphDiffOut, GraphEntitiesOut, GraphFactsOut, GraphOut
from l3mp.settings import Settings

PAYLOAD_JS = Path(__file__).resolve().parents[3] / "l3mp" / "service" / "dashboard" / "static" / "js" / "payload.js"
TYPEDEFS: dict[str, type[BaseModel]] = {
    "GraphPayload": GraphOut,
    "GraphEntities": GraphEntitiesOut,
    "GraphFacts": GraphFactsOut,
    "GraphDiff": GraphDiffOut,
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(sqlite_path=tmp_path / "d.db", retriever="full"))) as client:
        yield client


def surveyed(client: TestClient) -> str:
    name = unique_name("payload")
    assert client.post("/v1/memories", json={"name": name, "domain": "example_home"}).is_success
    assert client.post(f"/v1/memories/{name}/entities", json=survey_json()).is_success
    return name


def test_the_graph_route_answers_the_declared_model_in_named_columns(client: TestClient) -> None:
    name = surveyed(client)
    response = client.get(f"/dashboard/api/memories/{name}/graph")
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == set(GraphOut.model_fields)
    payload = GraphOut.model_validate(body)
    entities = payload.entities
    assert len(entities.name) == len(SURVEY_ENTITIES) + 1  # with the domain's robot
    row = entities.name.index("mug_1")
    assert (entities.type[row], entities.parent[row]) == ("dish", "table_1")
    assert entities.parent[entities.name.index("kitchen")] is None  # rooms are roots
    assert ("on", ["mug_1", "table_1"]) in zip(payload.facts.predicate, payload.facts.args, strict=True)
    assert payload.diff is None
    # each column is named once, whatever the number of entities
    assert response.text.count('"label"') == 1 and response.text.count('"predicate"') == 1


def test_openapi_documents_the_graph_payload(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    answer = schema["paths"]["/dashboard/api/memories/{memory}/graph"]["get"]["responses"]["200"]
    assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/GraphOut"}
    components = schema["components"]["schemas"]
    assert list(components["GraphEntitiesOut"]["properties"]) == ["name", "type", "label", "parent"]
    assert list(components["GraphFactsOut"]["properties"]) == ["predicate", "args"]


def typedefs(source: str) -> dict[str, list[str]]:
    """Each ``@typedef {object} Name`` in ``source`` with its ``@property`` names, in order."""
    found: dict[str, list[str]] = {}
    for block in re.findall(r"/\*\*(.*?)\*/", source, re.DOTALL):
        named = re.search(r"@typedef\s+\{object\}\s+(\w+)", block)
        if named:
            found[named.group(1)] = re.findall(r"@property\s+\{[^}]*\}\s+(\w+)", block)
    return found


def test_the_pages_typedefs_name_the_models_fields() -> None:
    declared = typedefs(PAYLOAD_JS.read_text(encoding="utf-8"))
    assert {name: list(model.model_fields) for name, model in TYPEDEFS.items()} == declared


def test_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValidationError, match="columns differ in length"):
        GraphEntitiesOut(name=["mug_1", "cup_1"], type=["dish"], label=["mug", "cup"], parent=[None, None])
    with pytest.raises(ValidationError, match="columns differ in length"):
        GraphFactsOut(predicate=["on"], args=[])
