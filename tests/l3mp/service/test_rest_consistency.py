"""The REST doors agree with each other: past states by version and by time, one paging scheme for
every list of updates, conditional observations, and a history a client can replay into the state."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_support import Factory, client_factory, surveyed

MOVE = {"remove": ["(on mug_1 table_1)"], "add": ["(on mug_1 shelf_1)"]}


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Factory]:
    yield from client_factory(tmp_path)


def _move(client: TestClient, name: str, **extra: Any) -> dict[str, Any]:
    response = client.post(f"/v1/memories/{name}/deltas", json={**MOVE, **extra})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_state_now_at_a_past_version_and_at_a_past_time(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    before = client.get(f"/v1/memories/{name}/state").json()
    moved = _move(client, name)
    now = client.get(f"/v1/memories/{name}/state").json()
    assert (before["version"], now["version"], now["now"]) == (1, 2, 2)
    assert "(on mug_1 table_1)" in before["facts"] and "(on mug_1 shelf_1)" in now["facts"]

    past = client.get(f"/v1/memories/{name}/state", params={"version": 1}).json()
    assert past["facts"] == before["facts"] and past["entities"] == before["entities"]
    assert (past["version"], past["now"]) == (1, 2)

    moved_at = datetime.fromisoformat(moved["time"])
    at_move = client.get(f"/v1/memories/{name}/state", params={"at": moved_at.isoformat()}).json()
    assert at_move["version"] == 2 and at_move["facts"] == now["facts"]
    just_before = (moved_at - timedelta(microseconds=1)).isoformat()
    assert client.get(f"/v1/memories/{name}/state", params={"at": just_before}).json()["version"] == 1
    long_ago = client.get(f"/v1/memories/{name}/state", params={"at": "2001-01-01T00:00:00+00:00"}).json()
    assert long_ago["version"] == 0 and long_ago["facts"] == []
    # the last instant a time can name (no instant follows it), and one whose UTC falls after it
    for last in ("9999-12-31T23:59:59.999999+00:00", "9999-12-31T23:00:00-05:00"):
        at_the_end = client.get(f"/v1/memories/{name}/state", params={"at": last})
        assert at_the_end.status_code == 200, at_the_end.text
        assert at_the_end.json()["version"] == 2 and at_the_end.json()["facts"] == now["facts"]


def test_a_state_request_that_cannot_be_answered_says_why(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    both = client.get(f"/v1/memories/{name}/state", params={"version": 1, "at": "2030-01-01T00:00:00+00:00"})
    assert both.status_code == 422 and "version or a time" in both.json()["error"]["message"]
    future = client.get(f"/v1/memories/{name}/state", params={"version": 7})
    assert future.status_code == 422 and "versions 0..1" in future.json()["error"]["message"]
    unknown = client.get("/v1/memories/no_such_memory/state")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_memory"


def test_every_list_of_updates_pages_by_one_cursor(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    for _ in range(2):
        _move(client, name)
        client.post(f"/v1/memories/{name}/deltas", json={"remove": MOVE["add"], "add": MOVE["remove"]})
    everything = client.get(f"/v1/memories/{name}/history", params={"limit": 1000}).json()["updates"]
    for route in ("updates", "history"):
        seen: list[str] = []
        cursor: int | None = 0
        while cursor is not None:
            page = client.get(f"/v1/memories/{name}/{route}", params={"cursor": cursor, "limit": 2}).json()
            seen += [u["id"] for u in page["updates"]]
            cursor = page["next_cursor"]
        assert seen == [u["id"] for u in everything], route


def test_the_older_paging_parameters_still_answer_and_are_marked_deprecated(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    _move(client, name)
    first = client.get(f"/v1/memories/{name}/updates", params={"since_seq": 0, "limit": 1}).json()
    second = client.get(f"/v1/memories/{name}/updates", params={"since_seq": first["next_since_seq"]}).json()
    assert first["next_since_seq"] == first["updates"][0]["seq"]
    rest = first["next_since_seq"] + 1
    assert [u["seq"] for u in second["updates"]] == [rest, rest + 1]  # after the domain's: the survey, the move
    assert second["next_cursor"] is None and second["next_since_seq"] == second["updates"][-1]["seq"]

    schema = client.get("/openapi.json").json()
    parameters = {p["name"]: p for p in schema["paths"]["/v1/memories/{memory}/updates"]["get"]["parameters"]}
    assert parameters["since_seq"].get("deprecated") is True and not parameters["cursor"].get("deprecated")
    page = schema["components"]["schemas"]["HistoryOut"]["properties"]
    assert page["next_since_seq"].get("deprecated") is True and "next_cursor" in page


def test_an_observation_can_be_conditional_on_the_version(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    mug = {"name": "mug_1", "type": "dish", "relations": [{"predicate": "on", "object": "table_1"}]}
    seen = {"room": "kitchen", "entities": [{"name": "table_1", "type": "furniture"}, mug]}
    stale = client.post(f"/v1/memories/{name}/observations", json={**seen, "expected_version": 0})
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "version_conflict"
    assert client.get(f"/v1/memories/{name}").json()["version"] == 1
    current = client.post(f"/v1/memories/{name}/observations", json={**seen, "expected_version": 1})
    assert current.status_code == 200, current.text
    assert "expected_version" not in current.json()["input"]


def test_an_update_is_explained_in_the_domains_words(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    moved = _move(client, name)
    explained = client.get(f"/v1/memories/{name}/updates/{moved['id']}/explanation").json()
    assert explained["update"]["id"] == moved["id"]
    assert len(explained["sentences"]) == 2 and any("shelf" in s for s in explained["sentences"])
    refused = client.post(f"/v1/memories/{name}/deltas", json={"remove": ["(on mug_1 shelf_1)"], "add": []})
    assert refused.status_code == 422
    rejected = refused.json()["error"]["update"]
    why = client.get(f"/v1/memories/{name}/updates/{rejected['id']}/explanation").json()["sentences"]
    assert any(s.startswith("Refused:") and "mug_1" in s for s in why)


def test_replaying_the_served_history_gives_the_served_state(make_client: Factory) -> None:
    """A client that knows only the REST API rebuilds the state from the history, constants included."""
    client = make_client()
    name = surveyed(client)
    _move(client, name)
    client.post(f"/v1/memories/{name}/deltas", json={"remove": ["(on mug_1 shelf_1)"], "add": []})  # rejected
    entities: dict[str, dict[str, Any]] = {}
    facts: set[str] = set()
    cursor: int | None = 0
    while cursor is not None:
        page = client.get(f"/v1/memories/{name}/history", params={"cursor": cursor, "limit": 2}).json()
        for update in page["updates"]:
            if update["status"] != "applied":
                continue
            entities.update({e["name"]: e for e in update["delta"]["new_entities"]})
            facts.difference_update(update["delta"]["remove"])
            facts.update(update["delta"]["add"])
        cursor = page["next_cursor"]
    served = client.get(f"/v1/memories/{name}/state").json()
    assert (
        sorted(entities)
        == [e["name"] for e in served["entities"]]
        == [e["name"] for e in client.get(f"/v1/memories/{name}/entities").json()]
    )
    assert sorted(facts) == served["facts"]


def test_an_item_perception_lost_track_of_is_shown_as_of_unknown_location(make_client: Factory) -> None:
    """Only perception may leave an item nowhere known; the answer names it, and the state, the
    dashboard and planning show it as unknown, not absent."""
    client = make_client()
    name = surveyed(client)
    as_a_delta = client.post(f"/v1/memories/{name}/deltas", json={"remove": ["(on mug_1 table_1)"]})
    assert as_a_delta.status_code == 422 and "mug_1 must be" in as_a_delta.json()["error"]["message"]
    table_without_mug = {"room": "kitchen", "entities": [{"name": "table_1", "type": "furniture"}]}
    answer = client.post(f"/v1/memories/{name}/observations", json=table_without_mug)
    assert answer.status_code == 200, answer.text
    meta = answer.json()["meta"]
    assert meta["unknown_location"] == ["mug_1"]
    assert any(w.startswith("mug_1: location now unknown") for w in meta["warnings"])

    assert client.get(f"/v1/memories/{name}/state").json()["unknown_location"] == ["mug_1"]
    assert client.get(f"/v1/memories/{name}/state", params={"version": 1}).json()["unknown_location"] == []
    assert client.get(f"/dashboard/api/memories/{name}/graph").json()["unknown_location"] == ["mug_1"]
    plan = client.post(f"/v1/memories/{name}/plans", json={"goal": "(on mug_1 shelf_1)", "open_world": True}).json()
    assert [u["entity"] for u in plan["unknowns"]] == ["mug_1"] and plan["status"] != "solved"
