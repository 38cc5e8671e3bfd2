"""POST /v1/memories/{m}/observations/batch: many observations in one request, one verdict each."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_support import Factory, client_factory, snapshot, surveyed

from l3mp.operations.models import MAX_BATCH


@pytest.fixture(params=[True, False], ids=["grouped", "one-by-one"])
def make_client(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Factory]:
    """Every test runs with group commit on and off: the answers must not depend on it."""
    factory = client_factory(tmp_path)
    make = next(factory)
    yield lambda **overrides: make(group_commit=request.param, **overrides)
    next(factory, None)  # closes the clients


def kitchen(*, lamp_on: bool, mug_on: str, step: int = 0, **extra: Any) -> dict[str, Any]:
    lamp: dict[str, Any] = {"name": "lamp_1", "type": "light", "properties": ["light_on"] if lamp_on else []}
    return {
        "room": "kitchen",
        "time_step": step,
        "entities": [
            {"name": "table_1", "type": "furniture"},
            {"name": "sink_1", "type": "sink"},
            lamp,
            {"name": "mug_1", "type": "dish", "relations": [["on", mug_on]]},
        ],
        **extra,
    }


def test_each_observation_has_its_own_verdict_and_update(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    _, _, before = snapshot(client, name)
    batch = [
        kitchen(lamp_on=True, mug_on="sink_1", step=1),
        {"room": "attic_9", "entities": [{"name": "mug_1", "type": "dish"}]},  # no such room
        kitchen(lamp_on=False, mug_on="table_1", step=2),
    ]
    response = client.post(f"/v1/memories/{name}/observations/batch", json={"observations": batch})
    assert response.status_code == 200, response.text
    first, refused, last = response.json()["updates"]
    assert [first["status"], refused["status"], last["status"]] == ["applied", "rejected", "applied"]
    assert refused["issues"] and any("attic_9" in i["message"] for i in refused["issues"])
    assert "(on mug_1 sink_1)" in first["delta"]["add"] and "(light_on lamp_1)" in first["delta"]["add"]
    assert "(on mug_1 sink_1)" in last["delta"]["remove"] and "(on mug_1 table_1)" in last["delta"]["add"]
    assert (first["version"], last["version"]) == (2, 3)
    assert first["seq"] < refused["seq"] < last["seq"]  # recorded in the request's order

    version, facts, after = snapshot(client, name)
    assert version == 3 and after == before + 3
    assert "(on mug_1 table_1)" in facts and "(light_on lamp_1)" not in facts
    for update in (first, refused, last):
        stored = client.get(f"/v1/memories/{name}/updates/{update['id']}").json()
        assert stored == update
        explained = client.get(f"/v1/memories/{name}/updates/{update['id']}/explanation").json()
        assert explained["sentences"]
    assert (
        client.get(f"/v1/memories/{name}/updates/{refused['id']}/explanation")
        .json()["sentences"][-1]
        .startswith("Refused:")
    )


def test_a_stale_expected_version_is_that_items_error_alone(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    _, _, before = snapshot(client, name)
    batch = [
        kitchen(lamp_on=True, mug_on="table_1", expected_version=1),  # current: applied, version 2
        kitchen(lamp_on=False, mug_on="sink_1", expected_version=1),  # stale after the first
        kitchen(lamp_on=False, mug_on="sink_1", expected_version=2),
    ]
    response = client.post(f"/v1/memories/{name}/observations/batch", json={"observations": batch})
    assert response.status_code == 200, response.text
    first, stale, last = response.json()["updates"]
    assert first["status"] == "applied" and first["version"] == 2
    assert stale["error"] == "version_conflict" and stale["status"] == 409 and "1" in stale["message"]
    assert last["status"] == "applied" and last["version"] == 3
    version, facts, after = snapshot(client, name)
    assert version == 3 and after == before + 2  # nothing recorded for the stale one
    assert "(on mug_1 sink_1)" in facts


def test_an_observation_that_changes_nothing_is_a_noop_item(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    same = kitchen(lamp_on=False, mug_on="table_1")
    response = client.post(f"/v1/memories/{name}/observations/batch", json={"observations": [same, same]})
    assert response.status_code == 200, response.text
    statuses = [u["status"] for u in response.json()["updates"]]
    assert statuses[1] == "noop" and statuses[0] in ("applied", "noop")


@pytest.mark.parametrize("count", [0, MAX_BATCH + 1])
def test_an_empty_or_oversized_batch_is_refused_whole(make_client: Factory, count: int) -> None:
    client = make_client()
    name = surveyed(client)
    before = snapshot(client, name)
    batch = [kitchen(lamp_on=i % 2 == 0, mug_on="sink_1") for i in range(count)]
    response = client.post(f"/v1/memories/{name}/observations/batch", json={"observations": batch})
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_request"
    assert snapshot(client, name) == before


def test_an_invalid_item_refuses_the_whole_request_before_anything_is_written(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    before = snapshot(client, name)
    batch = [kitchen(lamp_on=True, mug_on="sink_1"), {"room": "kitchen", "time_step": -1}]
    response = client.post(f"/v1/memories/{name}/observations/batch", json={"observations": batch})
    assert response.status_code == 422
    assert snapshot(client, name) == before


def test_an_unknown_memory_is_404(make_client: Factory) -> None:
    client = make_client()
    body = {"observations": [kitchen(lamp_on=True, mug_on="sink_1")]}
    response = client.post("/v1/memories/no_such_memory/observations/batch", json=body)
    assert response.status_code == 404 and response.json()["error"]["code"] == "unknown_memory"
