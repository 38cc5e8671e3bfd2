"""History routes: cursor pages, last seen, fact intervals, and JSON Lines export/import streamed
both ways (imports under their own, larger limit than other bodies)."""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import unique_name
from service_support import Factory, client_factory, surveyed


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Factory]:
    yield from client_factory(tmp_path)


def _move(client: object, name: str, here: str, there: str) -> None:
    body = {"remove": [f"(on mug_1 {here})"], "add": [f"(on mug_1 {there})"]}
    response = client.post(f"/v1/memories/{name}/deltas", json=body)  # type: ignore[attr-defined]
    assert response.status_code == 200, response.text


def test_history_pages_follow_the_cursor(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    places = ["table_1", "shelf_1", "sink_1", "table_1", "shelf_1"]
    for here, there in itertools.pairwise(places):
        _move(client, name, here, there)
    seen, cursor = [], 0
    while True:
        page = client.get(f"/v1/memories/{name}/history", params={"entity": "mug_1", "limit": 2, "cursor": cursor})
        assert page.status_code == 200, page.text
        seen += [u["version"] for u in page.json()["updates"]]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            break
    assert seen == [1, 2, 3, 4, 5]
    newest = client.get(f"/v1/memories/{name}/history", params={"order": "newest", "limit": 2}).json()
    assert [u["version"] for u in newest["updates"]] == [5, 4]
    older = client.get(f"/v1/memories/{name}/history", params={"order": "newest", "cursor": newest["next_cursor"]})
    assert [u["version"] for u in older.json()["updates"]] == [3, 2, 1, 0]  # 0: the domain's constants
    sensor = client.get(f"/v1/memories/{name}/history", params={"source": "sensor"}).json()["updates"]
    assert [u["version"] for u in sensor] == [1]
    bad = client.get(f"/v1/memories/{name}/history", params={"since": "yesterday"})
    assert bad.status_code == 422 and bad.json()["error"]["code"]
    seen_at = client.get(f"/v1/memories/{name}/entities/mug_1/last-seen").json()
    assert seen_at["update"]["version"] == 1 and seen_at["time"]
    spans = client.get(f"/v1/memories/{name}/facts/intervals", params={"fact": "(on mug_1 table_1)"}).json()
    assert [(s["start"]["version"], s["end"]["version"]) for s in spans] == [(1, 2), (4, 5)]


@pytest.mark.parametrize("gzipped", [False, True])
def test_export_and_import_stream_over_the_request_limit(make_client: Factory, gzipped: bool) -> None:
    client = make_client(max_request_bytes=1_000)  # below the export, gzipped or not
    name = surveyed(client)
    for here, there in [("table_1", "shelf_1"), ("shelf_1", "table_1")] * 5:
        _move(client, name, here, there)
    exported = client.get(f"/v1/memories/{name}/export.jsonl", params={"gzip": gzipped})
    assert exported.status_code == 200
    body = exported.content
    text = gzip.decompress(body).decode() if gzipped else body.decode()
    assert len(body) > 1_000 and json.loads(text.splitlines()[-1])["end"]["updates"] == 12  # with the domain's
    copy = unique_name("copy")
    imported = client.post("/v1/memories/import.jsonl", params={"name": copy}, content=body)
    assert imported.status_code == 201, imported.text
    assert imported.json()["version"] == 11
    facts = [client.get(f"/v1/memories/{n}/facts").json()["facts"] for n in (name, copy)]
    assert facts[0] == facts[1]
    document = client.get(f"/v1/memories/{name}/export").content
    refused = client.post("/v1/memories/import", params={"name": unique_name()}, content=document)
    assert refused.status_code == 413  # the one-document route keeps the ordinary limit


def test_a_forged_stream_is_422_and_the_import_limit_is_413(make_client: Factory) -> None:
    client = make_client(max_import_bytes=5_000)
    name = surveyed(client)
    lines = client.get(f"/v1/memories/{name}/export.jsonl").text.splitlines()
    survey = json.loads(lines[-2])
    survey["update"]["source"] = "nl"
    forged = "\n".join([*lines[:-2], json.dumps(survey), lines[-1]]) + "\n"
    copy = unique_name("forged")
    response = client.post("/v1/memories/import.jsonl", params={"name": copy}, content=forged.encode())
    assert response.status_code == 422 and "only perception adds entities" in response.json()["error"]["message"]
    assert client.get(f"/v1/memories/{copy}").status_code == 404
    big = client.post("/v1/memories/import.jsonl", content=b"x" * 6_000)
    assert big.status_code == 413 and big.json()["error"]["code"] == "too_large"


HISTORY_ROUTES = {
    ("get", "/v1/memories/{memory}/history"),
    ("get", "/v1/memories/{memory}/entities/{entity}/last-seen"),
    ("get", "/v1/memories/{memory}/facts/intervals"),
    ("get", "/v1/memories/{memory}/export.jsonl"),
    ("post", "/v1/memories/import.jsonl"),
}


def test_history_routes_are_in_the_openapi_schema_and_the_docs(make_client: Factory) -> None:
    schema = make_client().get("/openapi.json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    listed = {(method, path) for path, methods in paths.items() for method in methods}
    assert listed >= HISTORY_ROUTES, HISTORY_ROUTES - listed
    history = paths["/v1/memories/{memory}/history"]["get"]
    assert {"entity", "since", "source", "status", "cursor", "limit", "order"} <= {
        p["name"] for p in history["parameters"]
    }
    page = (Path(__file__).parents[3] / "docs" / "concepts" / "lifelong.md").read_text(encoding="utf-8")
    for method, path in HISTORY_ROUTES:
        shown = path.replace("{memory}", "{m}")
        assert f"{method.upper()} " in page and shown in page, (method, shown)
