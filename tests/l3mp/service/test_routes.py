"""Each route's happy path through the ASGI app (SQLite in tmp_path; the NL update with a scripted model)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import unique_name
from service_support import SURVEY, Factory, client_factory, snapshot, surveyed

from l3mp.llm import ScriptedModel
from l3mp.outcomes import PlanOutcome

MOVE = {
    "remove": [{"predicate": "on", "args": ["mug_1", "table_1"]}],
    "add": [{"predicate": "on", "args": ["mug_1", "shelf_1"]}],
}


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Factory]:
    yield from client_factory(tmp_path)


def test_health_and_readiness(make_client: Factory) -> None:
    client = make_client()
    assert client.get("/health").json() == {"status": "ok"}
    assert client.get("/ready").json() == {"status": "ready"}


def test_create_list_get_a_memory_and_its_survey(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    assert name in [m["name"] for m in client.get("/v1/memories").json()]
    record = client.get(f"/v1/memories/{name}").json()
    assert record["domain"] == "example_home" and record["version"] == 1
    entities = {e["name"]: e for e in client.get(f"/v1/memories/{name}/entities").json()}
    assert entities["mug_1"]["label"] == "blue mug" and entities["mug_1"]["attrs"] == {"colour": "blue"}
    domain, first = client.get(f"/v1/memories/{name}/updates").json()["updates"][:2]
    assert domain["source"] == "domain" and [e["name"] for e in domain["delta"]["new_entities"]] == ["robot_1"]
    assert first["source"] == "sensor" and first["status"] == "applied" and len(first["delta"]["add"]) == 11


def test_creating_an_existing_memory_is_a_conflict(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    again = client.post("/v1/memories", json={"name": name, "domain": "example_home"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "memory_exists"
    unknown = client.post("/v1/memories", json={"name": unique_name(), "domain": "no_such_domain"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_domain"


def test_a_memory_in_use_is_deleted_with_its_history_and_its_name_is_free(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    refused = client.delete(f"/v1/memories/{name.upper()}", params={"abandoned_import": "true"})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "memory_exists", refused.text
    assert "not being imported" in refused.json()["error"]["message"]
    deleted = client.delete(f"/v1/memories/{name.upper()}")
    assert deleted.status_code == 204 and deleted.content == b"", deleted.text
    for gone in (
        client.get(f"/v1/memories/{name}"),
        client.get(f"/v1/memories/{name}/updates"),
        client.post(f"/v1/memories/{name}/deltas", json={"add": ["(light_on lamp_1)"]}),
        client.delete(f"/v1/memories/{name}"),
    ):
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "unknown_memory", gone.text
    assert client.post("/v1/memories", json={"name": name, "domain": "example_home"}).status_code == 201
    assert client.get(f"/v1/memories/{name}").json()["version"] == 0
    assert [e["name"] for e in client.get(f"/v1/memories/{name}/entities").json()] == ["robot_1"]


def test_a_memory_a_killed_import_left_is_deleted_only_as_an_abandoned_import(make_client: Factory) -> None:
    client = make_client()
    stuck = unique_name("stuck")
    client.app.state.services.store.create_memory(stuck, "example_home", importing=True)  # type: ignore[attr-defined]
    hidden = client.delete(f"/v1/memories/{stuck}")
    assert hidden.status_code == 404 and hidden.json()["error"]["code"] == "unknown_memory"
    create = {"name": stuck, "domain": "example_home"}
    taken = client.post("/v1/memories", json=create)
    assert taken.status_code == 409 and "abandoned_import" in taken.json()["error"]["message"]
    freed = client.delete(f"/v1/memories/{stuck}", params={"abandoned_import": "true"})
    assert freed.status_code == 204 and freed.content == b"", freed.text
    assert "content-type" not in freed.headers
    assert client.post("/v1/memories", json=create).status_code == 201
    in_use = client.delete(f"/v1/memories/{stuck}", params={"abandoned_import": "true"})
    assert in_use.status_code == 409 and "not being imported" in in_use.json()["error"]["message"]
    assert client.get(f"/v1/memories/{stuck}").status_code == 200
    gone = client.delete(f"/v1/memories/{unique_name('attic')}", params={"abandoned_import": "true"})
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "unknown_memory"


def test_facts_filtered_by_entity_and_predicate(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    about = client.get(f"/v1/memories/{name}/facts", params={"entity": "mug_1"}).json()
    assert about == {"version": 1, "facts": ["(on mug_1 table_1)"]}
    connected = client.get(f"/v1/memories/{name}/facts", params={"predicate": "connected"}).json()["facts"]
    assert connected == ["(connected hall kitchen)", "(connected kitchen hall)"]


def test_a_delta_is_applied_and_a_stale_expected_version_conflicts(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    move = {"remove": ["(on mug_1 table_1)"], "add": ["(on mug_1 shelf_1)"], "expected_version": 1}
    response = client.post(f"/v1/memories/{name}/deltas", json=move)
    assert response.status_code == 200, response.text
    update = response.json()
    assert update["status"] == "applied" and update["source"] == "api" and update["version"] == 2
    assert client.get(f"/v1/memories/{name}/facts", params={"entity": "mug_1"}).json()["facts"] == [
        "(on mug_1 shelf_1)"
    ]
    stale = client.post(f"/v1/memories/{name}/deltas", json={**move, "remove": move["add"], "add": move["remove"]})
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "version_conflict"
    assert snapshot(client, name)[0] == 2


def test_a_rejected_delta_is_422_with_issues_and_recorded(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    before = snapshot(client, name)
    both = {"add": ["(on mug_1 shelf_1)"]}  # the mug would be on two things at once
    response = client.post(f"/v1/memories/{name}/deltas", json=both)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "update_rejected" and error["issues"]
    assert {"code", "fact", "message"} <= set(error["issues"][0])
    after = snapshot(client, name)
    assert after[:2] == before[:2] and after[2] == before[2] + 1
    last = client.get(f"/v1/memories/{name}/updates/{error['update']['id']}").json()
    assert last["status"] == "rejected" and last["issues"] == error["issues"]


def test_an_nl_update_through_the_scripted_model(make_client: Factory) -> None:
    model = ScriptedModel([MOVE])
    client = make_client(model=model)
    name = surveyed(client)
    text = "Alex moved the blue mug from the kitchen table to the hall shelf."
    response = client.post(f"/v1/memories/{name}/updates/nl", json={"text": text})
    assert response.status_code == 200, response.text
    update = response.json()
    assert update["source"] == "nl" and update["input"] == text and update["status"] == "applied"
    assert update["delta"]["add"] == ["(on mug_1 shelf_1)"] and len(model.calls) == 1
    assert snapshot(client, name)[0] == 2


def test_a_rejected_nl_update_is_422_with_issues_and_in_history(make_client: Factory) -> None:
    no_removal = {"remove": [], "add": MOVE["add"]}
    client = make_client(model=ScriptedModel([no_removal] * 4))
    name = surveyed(client)
    before = snapshot(client, name)
    response = client.post(f"/v1/memories/{name}/updates/nl", json={"text": "The blue mug is on the hall shelf."})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "update_rejected"
    assert any(i["code"] == "functional" and "mug_1" in i["message"] for i in error["issues"]), error
    after = snapshot(client, name)
    assert after[:2] == before[:2] and after[2] == before[2] + 1
    last = client.get(f"/v1/memories/{name}/updates", params={"since_seq": 1}).json()["updates"][-1]
    assert last["status"] == "rejected" and last["source"] == "nl" and last["id"] == error["update"]["id"]


def test_an_observation_is_a_sensor_update(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    observation = {
        "room": "kitchen",
        "entities": [
            {"name": "table_1", "type": "furniture"},
            {"name": "sink_1", "type": "sink"},
            {"name": "lamp_1", "type": "light"},
            {"name": "mug_1", "type": "dish", "relations": [["on", "sink_1"]]},
        ],
    }
    response = client.post(f"/v1/memories/{name}/observations", json=observation)
    assert response.status_code == 200, response.text
    update = response.json()
    assert update["source"] == "sensor" and update["status"] == "applied"
    assert "(on mug_1 sink_1)" in update["delta"]["add"] and "(on mug_1 table_1)" in update["delta"]["remove"]


def test_an_observation_measures_distances_and_a_new_value_replaces_the_old(make_client: Factory) -> None:
    client = make_client()
    name = unique_name("walks")
    assert client.post("/v1/memories", json={"name": name, "domain": "thor-travel"}).status_code == 201
    entities = [
        {"name": "robot_1", "type": "agent", "properties": ["hand_empty"], "relations": [["at", "fridge_1"]]},
        {"name": "fridge_1", "type": "fridge", "properties": ["openable", "receptacle"]},
        {"name": "apple_1", "type": "apple", "properties": ["pickupable"], "relations": [["fits", "fridge_1"]]},
    ]

    def observe(metres: float, status: int = 200) -> dict[str, Any]:
        measures = [["distance", ["fridge_1", "apple_1"], metres], ["distance", ["apple_1", "fridge_1"], metres]]
        response = client.post(
            f"/v1/memories/{name}/observations", json={"room": "kitchen", "entities": entities, "measures": measures}
        )
        assert response.status_code == status, response.text
        return dict(response.json())

    assert observe(2.5)["status"] == "applied"
    moved = observe(3.0)
    assert moved["status"] == "applied" and "(= (distance apple_1 fridge_1) 2.5)" in moved["delta"]["remove"]
    assert "(= (distance apple_1 fridge_1) 3)" in moved["delta"]["add"]
    refused = observe(-1.0, 422)["error"]  # no walk is shorter than nothing: recorded, refused, with the reason
    assert refused["update"]["status"] == "rejected" and "cannot be negative" in refused["message"]
    for no_number in (True, "3"):  # a JSON true is no distance of 1, nor is text one
        assert observe(no_number, 422)["error"]["code"] == "invalid_request"  # type: ignore[arg-type]
    assert client.get(f"/v1/memories/{name}").json()["version"] == 2  # nothing of it was applied
    plan = client.post(f"/v1/memories/{name}/plans", json={"goal": "(holding robot_1 apple_1)"}).json()
    assert plan["status"] == "solved", (plan["issues"], plan["explanation"])
    assert plan["plan"][0] == "(go_to robot_1 fridge_1 apple_1)" and plan["cost"] == 3.0


def test_a_plan_for_a_pddl_goal(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    response = client.post(f"/v1/memories/{name}/plans", json={"goal": "(on mug_1 shelf_1)"})
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["status"] == "solved" and report["version"] == 1 and report["plan"]
    assert any("mug_1" in step for step in report["plan"]) and len(report["explanation"]) == len(report["plan"])
    assert snapshot(client, name)[:2][0] == 1  # planning writes nothing


def test_history_is_paged(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    for delta in ({"add": ["(light_on lamp_1)"]}, {"remove": ["(light_on lamp_1)"]}):
        assert client.post(f"/v1/memories/{name}/deltas", json=delta).status_code == 200
    page = client.get(f"/v1/memories/{name}/updates", params={"limit": 2}).json()
    assert [u["seq"] for u in page["updates"]] == [1, 2] and page["next_since_seq"] == 2
    rest = client.get(f"/v1/memories/{name}/updates", params={"since_seq": 2}).json()
    assert [u["seq"] for u in rest["updates"]] == [3, 4]  # seq 1 is the domain's constants


def test_revert_undoes_an_applied_update(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    applied = client.post(f"/v1/memories/{name}/deltas", json={"add": ["(light_on lamp_1)"]}).json()
    reverted = client.post(f"/v1/memories/{name}/updates/{applied['id']}/revert")
    assert reverted.status_code == 200, reverted.text
    body = reverted.json()
    assert body["source"] == "revert" and body["meta"]["reverts"] == applied["id"]
    assert "(light_on lamp_1)" not in snapshot(client, name)[1]
    survey = client.get(f"/v1/memories/{name}/updates").json()["updates"][0]
    refused = client.post(f"/v1/memories/{name}/updates/{survey['id']}/revert", json={})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_value"
    missing = client.post(f"/v1/memories/{name}/updates/nope/revert")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_update"


def test_export_then_import_under_a_new_name(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    assert client.post(f"/v1/memories/{name}/deltas", json={"add": ["(light_on lamp_1)"]}).status_code == 200
    exported = client.get(f"/v1/memories/{name}/export").json()
    copy = unique_name("copy")
    imported = client.post("/v1/memories/import", params={"name": copy}, json=exported)
    assert imported.status_code == 201, imported.text
    assert imported.json()["version"] == 2
    assert snapshot(client, copy)[:2] == snapshot(client, name)[:2]
    again = client.post("/v1/memories/import", params={"name": copy}, json=exported)
    assert again.status_code == 409
    broken = client.post("/v1/memories/import", json={"format": "nope"})
    assert broken.status_code == 422 and broken.json()["error"]["code"] == "invalid_value"


def test_perception_adds_entities_and_a_bad_one_is_rejected(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    cup = {"entities": [{"name": "cup_1", "type": "dish"}], "facts": ["(on cup_1 table_1)"]}
    assert client.post(f"/v1/memories/{name}/entities", json=cup).status_code == 200
    before = snapshot(client, name)
    again = client.post(f"/v1/memories/{name}/entities", json=cup)
    assert again.status_code == 422 and again.json()["error"]["code"] == "update_rejected"
    assert snapshot(client, name)[:2] == before[:2]
    assert SURVEY["input"] == "survey"


def test_open_world_plans_and_the_new_statuses_in_the_openapi_schema(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    body = {"goal": "(on mug_1 shelf_1)", "open_world": True, "explored": []}
    report = client.post(f"/v1/memories/{name}/plans", json=body).json()
    assert report["status"] == "solved" and report["questions"] == [] and report["unknowns"] == []
    schema = client.get("/openapi.json").json()["components"]["schemas"]
    status = schema["PlanOut"]["properties"]["status"]["description"]
    assert "needs_information" in status and "impossible" in status and "needs_exploration" in status
    assert {"open_world", "answers", "explored"} <= set(schema["PlanIn"]["properties"])


def test_the_openapi_schema_lists_every_plan_outcome(make_client: Factory) -> None:
    schema = make_client().app.openapi()["components"]["schemas"]  # type: ignore[attr-defined]
    status = schema["PlanOut"]["properties"]["status"]
    assert status["$ref"] == "#/components/schemas/PlanOutcome"
    assert schema["PlanOutcome"]["enum"] == [outcome.value for outcome in PlanOutcome]
    assert {"solved", "invalid_goal", "needs_information", "impossible", "needs_exploration"} <= set(
        schema["PlanOutcome"]["enum"]
    )
    questions = schema["PlanOut"]["properties"]["questions"]["items"]["anyOf"]
    assert [q["$ref"].rsplit("/", 1)[1] for q in questions] == ["Ambiguous", "Unrecognised", "NotFound"]
    assert schema["ExplorationStep"]["properties"]["status"]["$ref"] == "#/components/schemas/PlanOutcome"
