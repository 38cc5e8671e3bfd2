"""The robots' frequent writes answered without FastAPI's machinery (l3mp.service.hot_writes) answer
exactly as their FastAPI routes do: the same status, headers that matter and body, for valid, refused,
malformed and unauthorised requests alike. Two apps, one with the door and one without, get the same
requests in the same order and must stay in step."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from service_support import SURVEY
from test_schema_fuzz import _without_lifespan

from l3mp.service import create_app
from l3mp.service.hot_writes import HotWrites
from l3mp.settings import Settings

HOME = "home"
KEY, READ_KEY = "write-key", "read-key"


class Pair:
    """The same service twice, with and without the door, each on a store of its own."""

    def __init__(self, tmp_path: Path, *, root_path: str = "", **overrides: Any) -> None:
        def app(name: str, hot: bool) -> TestClient:
            fields: dict[str, Any] = {"sqlite_path": tmp_path / f"{name}.db", "retriever": "full", **overrides}
            return TestClient(create_app(Settings(**fields), hot_writes=hot), root_path=root_path)

        self.hot, self.plain = app("hot", True), app("plain", False)

    def __enter__(self) -> Pair:
        for client in (self.hot, self.plain):
            client.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        for client in (self.hot, self.plain):
            client.__exit__(None, None, None)

    def served(self) -> int:
        door: HotWrites = self.hot.app.hot  # type: ignore[attr-defined]
        return door.served

    def seed(self, headers: dict[str, str] | None = None) -> None:
        for client in (self.hot, self.plain):
            created = client.post("/v1/memories", json={"name": HOME, "domain": "example_home"}, headers=headers)
            assert created.status_code == 201, created.text
            added = client.post(f"/v1/memories/{HOME}/entities", json=SURVEY, headers=headers)
            assert added.status_code == 200, added.text

    def post(self, path: str, *, hot_served: bool | None = None, **request: Any) -> tuple[int, Any]:
        """Both answers to one request, which must agree; ``hot_served`` says whether the door answers it."""
        before = self.served()
        hot, plain = (client.post(path, **request) for client in (self.hot, self.plain))
        assert (hot.status_code, _comparable(hot)) == (plain.status_code, _comparable(plain)), path
        for header in ("content-type", "retry-after"):
            assert hot.headers.get(header) == plain.headers.get(header), header
        if hot_served is not None:
            assert self.served() - before == int(hot_served)
        return hot.status_code, _comparable(hot)


def _comparable(response: Any) -> Any:
    """The body with what differs between two stores by chance (ids, times, request ids) blanked."""
    try:
        body = response.json()
    except ValueError:
        return response.text
    return _blank(body)


def _blank(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "*" if k in ("id", "time", "request_id") else _blank(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank(v) for v in value]
    if isinstance(value, str) and "logged as request" in value:
        return value.split("logged as request")[0]
    return value


def kitchen(*, lamp_on: bool, mug_on: str, **extra: Any) -> dict[str, Any]:
    lamp: dict[str, Any] = {"name": "lamp_1", "type": "light", "properties": ["light_on"] if lamp_on else []}
    return {
        "room": "kitchen",
        "entities": [
            {"name": "table_1", "type": "furniture"},
            {"name": "sink_1", "type": "sink"},
            lamp,
            {"name": "mug_1", "type": "dish", "relations": [["on", mug_on]]},
        ],
        **extra,
    }


@pytest.fixture(params=[True, False], ids=["grouped", "one-by-one"])
def pair(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Pair]:
    """With group commit on and off: the door calls the routes' functions, which write either way."""
    with Pair(tmp_path, group_commit=request.param) as both:
        both.seed()
        yield both


OBSERVE = f"/v1/memories/{HOME}/observations"
BATCH = f"/v1/memories/{HOME}/observations/batch"
DELTAS = f"/v1/memories/{HOME}/deltas"


def test_writes_the_door_answers_are_answered_as_the_routes_answer_them(pair: Pair) -> None:
    assert pair.post(OBSERVE, json=kitchen(lamp_on=True, mug_on="sink_1"), hot_served=True)[0] == 200
    status, body = pair.post(OBSERVE, json=kitchen(lamp_on=True, mug_on="sink_1"), hot_served=True)
    assert (status, body["status"]) == (200, "noop")
    status, body = pair.post(OBSERVE, json={"room": "attic_9", "entities": []}, hot_served=True)
    assert (status, body["error"]["code"]) == (422, "update_rejected")
    stale = kitchen(lamp_on=False, mug_on="table_1", expected_version=1)
    assert pair.post(OBSERVE, json=stale, hot_served=True)[1]["error"]["code"] == "version_conflict"
    missing = "/v1/memories/no_such_home/observations"
    assert pair.post(missing, json=kitchen(lamp_on=False, mug_on="sink_1"), hot_served=True)[0] == 404
    status, body = pair.post(BATCH, json={"observations": [kitchen(lamp_on=False, mug_on="table_1"), stale]})
    assert status == 200 and [u.get("error", u["status"]) for u in body["updates"]] == [
        "applied",
        "version_conflict",
    ]
    assert pair.post(DELTAS, json={"add": ["(on mug_1 sink_1)"]}, hot_served=True)[1]["error"]["code"] == (
        "update_rejected"
    )
    moved = {"remove": ["(on mug_1 table_1)"], "add": ["(on mug_1 sink_1)"], "input": "moved"}
    assert pair.post(DELTAS, json=moved, hot_served=True)[0] == 200
    # a repeated key: the last one counts, for both parsers
    repeated = b'{"room": "attic_9", "room": "kitchen", "entities": [], "time_step": 1, "time_step": 2}'
    status, body = pair.post(OBSERVE, content=repeated, headers={"content-type": "application/json"}, hot_served=True)
    assert status == 200 and '"room":"kitchen"' in body["input"] and '"time_step":2' in body["input"]
    # JSON's NaN is read by both parsers, and refused by the memory's own check of attributes
    nan = b'{"room": "kitchen", "entities": [{"name": "mug_1", "type": "dish", "attrs": {"x": NaN}}]}'
    status, body = pair.post(OBSERVE, content=nan, headers={"content-type": "application/json"}, hot_served=True)
    assert (status, body["error"]["code"]) == (422, "invalid_value")
    versions = [client.get(f"/v1/memories/{HOME}/facts").json() for client in (pair.hot, pair.plain)]
    assert versions[0] == versions[1]


@pytest.mark.parametrize(
    "request_",
    [
        pytest.param({"content": b"{not json"}, id="malformed JSON"),
        pytest.param({"content": b""}, id="no body"),
        pytest.param({"json": {**kitchen(lamp_on=True, mug_on="sink_1"), "colour": "red"}}, id="unknown field"),
        pytest.param({"json": kitchen(lamp_on=True, mug_on="sink_1", expected_version=True)}, id="bool version"),
        pytest.param({"json": kitchen(lamp_on=True, mug_on="sink_1", time_step="3")}, id="string step"),
        pytest.param({"json": {"room": "Kitchen Two", "entities": []}}, id="invalid name"),
        pytest.param({"json": [1, 2]}, id="an array"),
        pytest.param(
            {"content": json.dumps(kitchen(lamp_on=True, mug_on="sink_1")).encode("utf-16")}, id="UTF-16 body"
        ),
        pytest.param(
            {"content": b'{"room": "kitchen", "entities": [{"name": "mug_1", "type": "dish", "label": "\\ud800"}]}'},
            id="lone surrogate",
        ),
        pytest.param(
            {
                "content": json.dumps(kitchen(lamp_on=True, mug_on="sink_1")).encode(),
                "headers": {"content-type": "text/plain"},
            },
            id="text/plain",
        ),
        pytest.param(
            {
                "content": json.dumps(kitchen(lamp_on=True, mug_on="sink_1")).encode(),
                "headers": {"content-type": "application/vnd.robot+json"},
            },
            id="+json type",
        ),
    ],
)
def test_requests_the_door_passes_on_get_the_routes_own_answer(pair: Pair, request_: dict[str, Any]) -> None:
    given = dict(request_)  # the parameter is shared by the fixture's two runs
    headers = {"content-type": "application/json", **given.pop("headers", {})}
    pair.post(OBSERVE, headers=headers, hot_served=False, **given)


def test_paths_the_door_does_not_serve_exactly_go_to_the_app(pair: Pair) -> None:
    body = kitchen(lamp_on=True, mug_on="sink_1")
    for path in (OBSERVE + "/", f"/v1/memories/{HOME}/observations/batch/x", "/v1/memories//observations"):
        pair.post(path, json=body, hot_served=False, follow_redirects=False)
    assert pair.post(f"/v1/memories/{HOME}/updates/nl", json={"text": ""}, hot_served=False)[0] == 422


def test_behind_a_proxy_that_mounts_the_service_under_a_prefix_the_door_still_answers(tmp_path: Path) -> None:
    with Pair(tmp_path, root_path="/memory") as pair:
        pair.seed()
        # the prefix in front of the path (as uvicorn puts it), and the path without it
        status, body = pair.post("/memory" + OBSERVE, json=kitchen(lamp_on=True, mug_on="sink_1"), hot_served=True)
        assert (status, body["status"]) == (200, "applied")
        status, body = pair.post(OBSERVE, json=kitchen(lamp_on=False, mug_on="sink_1"), hot_served=True)
        assert (status, body["status"]) == (200, "applied")
        # a prefix that only begins the path's first segment is no prefix, for the door as for the routes
        assert pair.post("/memoryx" + OBSERVE, json=kitchen(lamp_on=True, mug_on="sink_1"), hot_served=False)[0] == 404


def test_keys_are_checked_as_the_routes_check_them(tmp_path: Path) -> None:
    with Pair(tmp_path, api_key=KEY, read_only_api_key=READ_KEY) as pair:
        pair.seed(headers={"X-API-Key": KEY})
        body = kitchen(lamp_on=True, mug_on="sink_1")
        assert pair.post(OBSERVE, json=body, hot_served=False)[0] == 401
        assert pair.post(OBSERVE, json=body, headers={"X-API-Key": READ_KEY}, hot_served=False)[0] == 403
        assert pair.post(OBSERVE, json=body, headers={"X-API-Key": "wrong"}, hot_served=False)[0] == 403
        assert pair.post(OBSERVE, json=body, headers={"X-API-Key": KEY}, hot_served=True)[0] == 200


@pytest.mark.slow
def test_generated_requests_get_the_same_answers(tmp_path: Path) -> None:
    """Bodies generated from the OpenAPI schema of each write the door serves, to the surveyed home."""
    with Pair(tmp_path) as pair:
        pair.seed()
        schema = schemathesis.openapi.from_asgi("/openapi.json", _without_lifespan(pair.plain.app))
        tails = ("/observations", "/observations/batch", "/deltas")
        operations = [
            result.ok()
            for result in schema.get_all_operations()
            if result.ok().method.upper() == "POST" and result.ok().path.endswith(tails)
        ]
        assert len(operations) == 3
        served = pair.served()
        for operation in operations:
            _same_answers_to_generated_bodies(pair, operation)
        assert pair.served() > served  # some generated bodies were valid, and the door answered them


def _same_answers_to_generated_bodies(pair: Pair, operation: Any) -> None:
    path = operation.path.replace("{memory}", HOME)  # the memory is always the home's

    @given(case=operation.as_strategy())
    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def check(case: Any) -> None:
        pair.post(path, content=json.dumps(case.body).encode(), headers={"content-type": "application/json"})

    check()


def test_bodies_over_the_limit_or_of_no_declared_length_get_the_apps_answer(tmp_path: Path) -> None:
    body = json.dumps(kitchen(lamp_on=True, mug_on="sink_1")).encode()
    limit = len(json.dumps(SURVEY)) + 1_000  # the survey that seeds the memory fits
    with Pair(tmp_path, max_request_bytes=limit) as pair:
        pair.seed()
        json_type = {"content-type": "application/json"}
        assert pair.post(OBSERVE, content=body, headers=json_type, hot_served=True)[0] == 200
        padded = body[:-1] + b" " * (limit - len(body) + 1) + b"}"
        status, answer = pair.post(OBSERVE, content=padded, headers=json_type, hot_served=False)
        assert (status, answer["error"]["code"]) == (413, "too_large")

        def chunks() -> Iterator[bytes]:  # no Content-Length: sent chunked, read by the app as it streams
            yield body[:10]
            yield body[10:]

        for client in (pair.hot, pair.plain):  # a generator is spent by one request: one each
            before = pair.served()
            assert client.post(OBSERVE, content=chunks(), headers=json_type).status_code == 200
            assert pair.served() == before


def test_the_door_stands_aside_for_traced_requests_and_for_middleware_added_after_the_services(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(Settings(sqlite_path=tmp_path / "home.db", retriever="full"))
    seen: list[str] = []

    class Audit:  # what a deployment adds in front: it must see every request
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                seen.append(scope["path"])
            await self.inner(scope, receive, send)

    app.add_middleware(Audit)
    door: HotWrites = app.hot  # type: ignore[attr-defined]
    with TestClient(app) as client:
        assert client.post("/v1/memories", json={"name": HOME, "domain": "example_home"}).status_code == 201
        assert client.post(f"/v1/memories/{HOME}/entities", json=SURVEY).status_code == 200
        assert client.post(OBSERVE, json=kitchen(lamp_on=True, mug_on="sink_1")).status_code == 200
        assert door.served == 0 and seen[-1] == OBSERVE

    plain = create_app(Settings(sqlite_path=tmp_path / "traced.db", retriever="full"))
    door = plain.hot  # type: ignore[attr-defined]
    with TestClient(plain) as client:
        client.post("/v1/memories", json={"name": HOME, "domain": "example_home"})
        client.post(f"/v1/memories/{HOME}/entities", json=SURVEY)
        assert client.post(OBSERVE, json=kitchen(lamp_on=True, mug_on="sink_1")).status_code == 200
        assert door.served == 1
        monkeypatch.setattr(plain._native_telemetry, "enabled", lambda: True)  # type: ignore[attr-defined]
        assert client.post(OBSERVE, json=kitchen(lamp_on=False, mug_on="sink_1")).status_code == 200
        assert door.served == 1
