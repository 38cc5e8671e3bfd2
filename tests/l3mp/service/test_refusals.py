"""Refused requests (bad input, size, auth, unknown names): the right status, and the state untouched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import STORES, neo4j_uri, require_neo4j, unique_name
from service_support import Factory, client_factory, snapshot, surveyed

from planning.goal_checker import MAX_GOAL_BINDINGS
from planning.goal_reader import MAX_GOAL_DEPTH

MOVE = {"remove": ["(on mug_1 table_1)"], "add": ["(on mug_1 shelf_1)"]}
WRITER = {"X-API-Key": "write-secret"}
READER = {"X-API-Key": "read-secret"}


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Factory]:
    yield from client_factory(tmp_path)


@pytest.mark.parametrize(
    "body",
    [b'{"add": ["(on mug_1', b'{"add": ["(on mug_1 \xff shelf_1)"]}', b"[" * 100_000 + b"]" * 100_000],
    ids=["cut short", "not utf-8", "nested too deeply"],
)
def test_malformed_json_is_400(make_client: Factory, body: bytes) -> None:
    client = make_client()
    name = surveyed(client)
    before = snapshot(client, name)
    response = client.post(f"/v1/memories/{name}/deltas", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and response.json()["error"]["code"] == "malformed_json", response.text
    assert snapshot(client, name) == before


@pytest.mark.parametrize(
    "body",
    [
        {"add": "(on mug_1 shelf_1)"},  # a string, not a list
        {"add": [42]},
        {"remove": [], "add": [], "expected_version": "one"},
        {"add": ["(on mug_1 shelf_1)"], "unexpected": True},
        [MOVE],
    ],
)
def test_wrong_types_are_422_with_issues(make_client: Factory, body: object) -> None:
    client = make_client()
    name = surveyed(client)
    before = snapshot(client, name)
    response = client.post(f"/v1/memories/{name}/deltas", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["issues"] and error["issues"][0]["code"] == "validation"
    assert snapshot(client, name) == before


KITCHEN = {
    "room": "kitchen",
    "entities": [
        {"name": "table_1", "type": "furniture"},
        {"name": "sink_1", "type": "sink"},
        {"name": "lamp_1", "type": "light"},
        {"name": "mug_1", "type": "dish", "relations": [["on", "sink_1"]]},
    ],
}
LIGHT_ON = {"add": ["(light_on lamp_1)"]}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/deltas", {**MOVE, "expected_version": True}),
        ("/deltas", {**MOVE, "expected_version": False}),
        ("/deltas", {**MOVE, "expected_version": "1"}),
        ("/deltas", {**MOVE, "expected_version": 1.0}),
        ("/observations", {**KITCHEN, "expected_version": True}),
        ("/observations", {**KITCHEN, "time_step": True}),
        ("/observations/batch", {"observations": [{**KITCHEN, "expected_version": True}]}),
        ("/updates/{update}/revert", {"expected_version": True}),
    ],
    ids=["delta-true", "delta-false", "delta-string", "delta-float", "observation", "time-step", "batch", "revert"],
)
def test_a_json_boolean_or_string_is_no_integer_in_a_write(make_client: Factory, path: str, body: object) -> None:
    client = make_client()
    name = surveyed(client)
    applied = client.post(f"/v1/memories/{name}/deltas", json=LIGHT_ON).json()
    before = snapshot(client, name)
    response = client.post(f"/v1/memories/{name}{path.format(update=applied['id'])}", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    field = "time_step" if "time_step" in str(body) else "expected_version"
    assert error["code"] == "invalid_request" and field in error["issues"][0]["message"], error
    assert snapshot(client, name) == before


def test_integers_still_pass_as_json_numbers_and_as_query_strings(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    lit = client.post(f"/v1/memories/{name}/deltas", json={**LIGHT_ON, "expected_version": 1})
    assert lit.status_code == 200 and lit.json()["version"] == 2, lit.text
    seen = client.post(f"/v1/memories/{name}/observations", json={**KITCHEN, "expected_version": 2, "time_step": 3})
    assert seen.status_code == 200 and seen.json()["version"] == 3, seen.text
    back = client.post(f"/v1/memories/{name}/updates/{seen.json()['id']}/revert", json={"expected_version": 3})
    assert back.status_code == 200 and back.json()["version"] == 4, back.text
    assert client.get(f"/v1/memories/{name}/state", params={"version": "1"}).json()["version"] == 1
    page = client.get(f"/v1/memories/{name}/history", params={"cursor": "1", "limit": "2"}).json()
    assert [u["seq"] for u in page["updates"]] == [2, 3]
    rest = client.get(f"/v1/memories/{name}/updates", params={"cursor": "3", "limit": "1"}).json()
    assert [u["seq"] for u in rest["updates"]] == [4]


GOAL = "(on mug_1 shelf_1)"


def _refused_goal(make_client: Factory, goal: str) -> dict[str, Any]:
    """The plan report for ``goal``: an invalid goal with one issue, and the memory untouched."""
    client = make_client()
    name = surveyed(client)
    before = snapshot(client, name)
    response = client.post(f"/v1/memories/{name}/plans", json={"goal": goal})
    assert response.status_code == 200, response.text
    report: dict[str, Any] = response.json()
    assert report["status"] == "invalid_goal" and len(report["issues"]) == 1, report
    assert snapshot(client, name) == before
    return report


@pytest.mark.parametrize(
    "goal",
    ["(" * 350 + ")" * 350, "(not " * 400 + GOAL + ")" * 400, "(and " * MAX_GOAL_DEPTH + GOAL + ")" * MAX_GOAL_DEPTH],
    ids=["empty-lists", "nots", "one-past-the-limit"],
)
def test_a_goal_nested_too_deeply_is_an_invalid_goal_naming_the_limit(make_client: Factory, goal: str) -> None:
    issue = _refused_goal(make_client, goal)["issues"][0]
    assert "nested too deeply" in issue and f"at most {MAX_GOAL_DEPTH}" in issue


@pytest.mark.parametrize(
    "goal",
    ["(and " * (MAX_GOAL_DEPTH - 1) + GOAL + ")" * (MAX_GOAL_DEPTH - 1), "(and " + "(not " * 62 + GOAL + ")" * 63],
    ids=["ands", "nots"],
)
def test_a_goal_nested_to_the_limit_is_planned(make_client: Factory, goal: str) -> None:
    client = make_client()
    name = surveyed(client)
    report = client.post(f"/v1/memories/{name}/plans", json={"goal": goal}).json()
    assert report["status"] == "solved" and report["plan"], report


@pytest.mark.parametrize("fact", ["on mug_1 shelf_1", "(on mug_1 Shelf 1!)", "()"])
def test_unparseable_facts_are_422(make_client: Factory, fact: str) -> None:
    client = make_client()
    name = surveyed(client)
    before = snapshot(client, name)
    response = client.post(f"/v1/memories/{name}/deltas", json={"add": [fact]})
    assert response.status_code == 422 and response.json()["error"]["code"] in {"invalid_value", "invalid_name"}
    assert snapshot(client, name) == before


def test_an_oversize_body_is_413_before_parsing(make_client: Factory) -> None:
    client = make_client(max_request_bytes=2_000)
    name = surveyed(client)
    before = snapshot(client, name)
    big = {"add": ["(on mug_1 shelf_1)"], "input": "x" * 5_000}
    response = client.post(f"/v1/memories/{name}/deltas", json=big)
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while streaming
        yield b'{"add": ["(on mug_1 shelf_1)"], "input": "'
        for _ in range(10):
            yield b"y" * 500
        yield b'"}'

    streamed = client.post(
        f"/v1/memories/{name}/deltas", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413
    assert snapshot(client, name) == before


def test_unknown_memory_is_404_everywhere(make_client: Factory) -> None:
    client = make_client()
    ghost = unique_name("ghost")
    for method, path, body in (
        ("GET", "", None),
        ("DELETE", "", None),
        ("GET", "/facts", None),
        ("GET", "/updates", None),
        ("GET", "/export", None),
        ("POST", "/deltas", MOVE),
        ("POST", "/plans", {"goal": "(on mug_1 shelf_1)"}),
    ):
        response = client.request(method, f"/v1/memories/{ghost}{path}", json=body)
        assert response.status_code == 404, (path, response.text)
        assert response.json()["error"]["code"] == "unknown_memory"
    assert ghost not in [m["name"] for m in client.get("/v1/memories").json()]


def test_writes_need_the_api_key(make_client: Factory) -> None:
    client = make_client(api_key="write-secret")
    name = surveyed(client, headers=WRITER)
    before = snapshot(client, name)
    missing = client.post(f"/v1/memories/{name}/deltas", json=MOVE)
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "unauthorized"
    wrong = client.post(f"/v1/memories/{name}/deltas", json=MOVE, headers={"X-API-Key": "guess"})
    assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "forbidden"
    no_memory = client.post("/v1/memories", json={"name": unique_name(), "domain": "example_home"})
    assert no_memory.status_code == 401
    assert snapshot(client, name) == before  # reads stay open without a read-only key
    assert client.post(f"/v1/memories/{name}/deltas", json=MOVE, headers=WRITER).status_code == 200
    assert client.get("/health").status_code == 200 and client.get("/ready").status_code == 200


def test_a_read_only_key_reads_but_may_not_write(make_client: Factory) -> None:
    client = make_client(api_key="write-secret", read_only_api_key="read-secret")
    name = surveyed(client, headers=WRITER)
    before = snapshot(client, name, headers=READER)
    refused = client.post(f"/v1/memories/{name}/deltas", json=MOVE, headers=READER)
    assert refused.status_code == 403
    revert = client.post(f"/v1/memories/{name}/updates/x/revert", headers=READER)
    assert revert.status_code == 403
    assert client.get(f"/v1/memories/{name}/facts").status_code == 401  # reads need a key now
    assert client.get(f"/v1/memories/{name}/facts", headers={"X-API-Key": "guess"}).status_code == 403
    assert snapshot(client, name, headers=READER) == before == snapshot(client, name, headers=WRITER)


def test_deleting_a_memory_needs_the_write_key(make_client: Factory) -> None:
    client = make_client(api_key="write-secret", read_only_api_key="read-secret")
    name = unique_name("stuck")
    client.app.state.services.store.create_memory(name, "example_home", importing=True)  # type: ignore[attr-defined]
    abandon = {"abandoned_import": "true"}
    missing = client.delete(f"/v1/memories/{name}", params=abandon)
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "unauthorized"
    for refused in (READER, {"X-API-Key": "guess"}):
        response = client.delete(f"/v1/memories/{name}", params=abandon, headers=refused)
        assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"
    assert client.delete(f"/v1/memories/{name}", params=abandon, headers=WRITER).status_code == 204


@pytest.mark.parametrize("backend", STORES)
def test_the_same_api_over_each_store(make_client: Factory, backend: str) -> None:
    if backend == "neo4j":
        require_neo4j()
        client = make_client(store="neo4j", neo4j_uri=neo4j_uri())
    else:
        client = make_client()
    name = surveyed(client)
    try:
        assert client.get("/ready").json() == {"status": "ready"}
        before = snapshot(client, name)
        rejected = client.post(f"/v1/memories/{name}/deltas", json={"add": ["(on mug_1 shelf_1)"]})
        assert rejected.status_code == 422 and rejected.json()["error"]["issues"]
        after = snapshot(client, name)
        assert after[:2] == before[:2] and after[2] == before[2] + 1
        applied = client.post(f"/v1/memories/{name}/deltas", json={**MOVE, "expected_version": 1})
        assert applied.status_code == 200 and applied.json()["version"] == 2
        conflict = client.post(f"/v1/memories/{name}/deltas", json={**MOVE, "expected_version": 1})
        assert conflict.status_code == 409
        reverted = client.post(f"/v1/memories/{name}/updates/{applied.json()['id']}/revert")
        assert reverted.status_code == 200 and "(on mug_1 table_1)" in snapshot(client, name)[1]
        plan = client.post(f"/v1/memories/{name}/plans", json={"goal": "(on mug_1 shelf_1)"}).json()
        assert plan["status"] == "solved"
    finally:
        if backend == "neo4j":
            client.app.state.services.store.delete_memory(name)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("observation", "code", "words"),
    [
        ({"room": "nowhere", "entities": []}, "unknown_entity", "room 'nowhere'"),
        ({"room": "kitchen", "entities": [{"name": "shelf_1", "type": "furniture"}]}, "observed_elsewhere", "hall"),
        ({"room": "kitchen", "robot": "alex", "entities": []}, "type_mismatch", "a person, not a robot"),
    ],
)
def test_an_observation_that_cannot_be_true_is_422(
    make_client: Factory, observation: dict[str, object], code: str, words: str
) -> None:
    """Over REST: the reason comes back, the state stays (the rejection is recorded)."""
    client = make_client()
    name = surveyed(client)
    before = snapshot(client, name)
    response = client.post(f"/v1/memories/{name}/observations", json=observation)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "update_rejected" and [i["code"] for i in error["issues"]] == [code]
    assert words in error["message"]
    after = snapshot(client, name)
    assert after[:2] == before[:2] and after[2] == before[2] + 1
    assert "(on book_1 shelf_1)" in after[1]


def _over_every_binding(word: str, count: int) -> str:
    """A goal true or false of every binding, whose quantifiers nest ``count`` variables deep."""
    nest = "".join(f"({word} (?v{i} - object) " for i in range(count))
    return nest + "(or (= ?v0 ?v1) (not (= ?v0 ?v1)))" + ")" * count


@pytest.mark.parametrize(
    "goal",
    [
        _over_every_binding("forall", 8),
        _over_every_binding("exists", 8),
        "(forall (?v0 ?v1 ?v2 ?v3 ?v4 ?v5 ?v6 ?v7 - object) (or (= ?v0 ?v1) (not (= ?v0 ?v1))))",
        _over_every_binding("exists", MAX_GOAL_DEPTH - 1).replace("(or (= ?v0 ?v1) (not (= ?v0 ?v1)))", GOAL),
    ],
    ids=["nested-foralls", "nested-exists", "one-forall", "deepest-exists"],
)
def test_a_goal_over_too_many_bindings_is_an_invalid_goal_naming_the_limit(make_client: Factory, goal: str) -> None:
    report = _refused_goal(make_client, goal)
    assert not report["attempts"], report
    issue = report["issues"][0]
    assert f"more than the limit of {MAX_GOAL_BINDINGS:,}" in issue and "quantify over fewer variables" in issue


def test_a_quantified_goal_within_the_bound_is_planned(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    goal = f"(and {GOAL} {_over_every_binding('forall', 2)})"
    report = client.post(f"/v1/memories/{name}/plans", json={"goal": goal}).json()
    assert report["status"] == "solved" and report["plan"], report
