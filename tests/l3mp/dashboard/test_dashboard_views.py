"""The dashboard's data (no browser): placement, the newest sequence number, the event stream, access."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from conftest import unique_name
from fastapi.testclient import TestClient

from kg_memory import Delta, Fact, GraphStore, Issue, IssueCode, UpdateSource, WorldMemory
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS, survey_json
from l3mp.service import create_app
from l3mp.service.dashboard import views
from l3mp.service.dashboard.events import StreamConfig, history_stream
from l3mp.settings import Settings


def test_placement_nests_items_in_furniture_in_rooms(home: WorldMemory) -> None:
    state = home.state()
    parents = views.placement(state.entities, state.facts, home.domain)
    assert parents["mug_1"] == "table_1" and parents["table_1"] == "kitchen"
    assert parents["robot_1"] == "hall" and parents["alex"] == "hall" and parents["lamp_1"] == "kitchen"
    assert "kitchen" not in parents and "hall" not in parents  # rooms are roots, though connected


def test_last_seq_counts_rejected_and_noop_updates_without_reading_the_history(home: WorldMemory) -> None:
    issue = Issue(IssueCode.INVALID_INPUT, None, "nonsense")
    for i in range(13):
        if i % 3 == 0:
            home.apply(Delta(remove={Fact.parse("(hand_empty robot_1)")}), source=UpdateSource.API)
            home.apply(Delta(add={Fact.parse("(hand_empty robot_1)")}), source=UpdateSource.API)
        home.reject(source=UpdateSource.NL, input=f"report {i}", issues=[issue])
        home.apply(Delta(), source=UpdateSource.API, input="checkpoint")
    assert views.last_seq(home.store, home.name) == len(home.history())


def test_the_graph_at_a_past_version_carries_the_difference_from_now(home: WorldMemory) -> None:
    home.apply(Delta(remove={Fact.parse("(on mug_1 table_1)")}, add={Fact.parse("(on mug_1 shelf_1)")}), source="api")
    then = views.graph(home, 1).model_dump(mode="json")
    assert then["version"] == 1 and then["now"] == 2
    assert ("on", ["mug_1", "table_1"]) in zip(then["facts"]["predicate"], then["facts"]["args"], strict=True)
    assert then["diff"] == {"added": ["(on mug_1 shelf_1)"], "removed": ["(on mug_1 table_1)"], "new_entities": []}
    assert views.graph(home).diff is None


def test_the_stream_sends_new_rows_in_order_then_heartbeats(home: WorldMemory) -> None:
    store: GraphStore = home.store
    sent: list[str] = []

    async def run() -> None:
        polls = 0

        async def disconnected() -> bool:
            nonlocal polls
            polls += 1
            if polls == 2:  # a write lands while the stream is open
                home.apply(Delta(add={Fact.parse("(light_on lamp_1)")}), source="api", input="lights on")
            return polls > 6

        config = StreamConfig(poll=0.01, heartbeat=0.02)
        async for chunk in history_stream(store, home.record, 0, disconnected, config):
            sent.append(chunk)

    worker = threading.Thread(target=anyio.run, args=(run,))  # its own loop, whatever else runs in this thread
    worker.start()
    worker.join(timeout=30)
    updates = [c for c in sent if "event: update" in c]
    sources = [json.loads(c.split("data: ", 1)[1])["source"] for c in updates]
    assert sources[0] == "domain"  # the memory's first update: the domain's constants
    assert [json.loads(c.split("data: ", 1)[1])["input"] for c in updates[1:]] == ["survey", "lights on"]
    assert [c.split("\n", 1)[0] for c in updates] == ["id: 1", "id: 2", "id: 3"]
    assert any(c.startswith(": heartbeat") for c in sent)


def test_the_stream_of_a_memory_deleted_and_made_again_ends_rather_than_send_the_new_ones_rows(
    home: WorldMemory,
) -> None:
    store: GraphStore = home.store
    sent: list[str] = []
    made_again: list[bool] = []

    async def run() -> None:
        async def disconnected() -> bool:
            if len(sent) == 1 and not made_again:  # after the hello, before the first read
                made_again.append(True)
                store.delete_memory(home.name)
                again = WorldMemory.create(store, home.name, "example_home")
                for light in ("on", "off", "on"):  # its seq 4 is past the old memory's newest (2)
                    change = Fact.parse("(light_on lamp_1)")
                    delta = Delta(add={change}) if light == "on" else Delta(remove={change})
                    again.apply(delta, source="api", input=f"light {light}")
            return len(sent) > 3

        async for chunk in history_stream(store, home.record, 2, disconnected, StreamConfig(poll=0.01)):
            sent.append(chunk)

    worker = threading.Thread(target=anyio.run, args=(run,))
    worker.start()
    worker.join(timeout=30)
    assert not [c for c in sent if "event: update" in c]
    assert sent[-1] == f'event: error\ndata: {{"message":"unknown memory \'{home.name}\'"}}\n\n'


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(sqlite_path=tmp_path / "d.db", retriever="full", api_key="w", read_only_api_key="r")
    with TestClient(create_app(settings)) as client:
        yield client


def test_the_dashboards_data_needs_a_key_where_rest_reads_do(keyed: TestClient) -> None:
    name = unique_name("dash")
    assert keyed.post(
        "/v1/memories", json={"name": name, "domain": "example_home"}, headers={"X-API-Key": "w"}
    ).is_success
    assert keyed.post(f"/v1/memories/{name}/entities", json=survey_json(), headers={"X-API-Key": "w"}).is_success
    page = keyed.get("/")  # the page holds no data
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    for path in (
        "/dashboard/api/memories",
        f"/dashboard/api/memories/{name}/graph",
        f"/dashboard/api/memories/{name}/events",
    ):
        assert keyed.get(path).status_code == 401
    listed = keyed.get("/dashboard/api/memories", headers={"X-API-Key": "r"}).json()
    assert [(m["name"], m["entities"], m["version"], m["updates"]) for m in listed] == [
        (name, len(SURVEY_ENTITIES) + 1, 1, 2)  # with the domain's robot, and its update
    ]
    assert listed[0]["facts"] == len(SURVEY_FACTS)
    missing = keyed.get(f"/dashboard/api/memories/{name}/entities/nobody", headers={"X-API-Key": "r"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    unknown = keyed.get("/dashboard/api/memories/nothing_here/events", headers={"X-API-Key": "r"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_memory"
    assert keyed.get("/dashboard/static/vendor/cytoscape-3.34.4.min.js").status_code == 200


def _stream_start(client: TestClient, memory: str, headers: dict[str, bytes], **params: int) -> tuple[int, str]:
    """The status and the first chunk of the events stream (the whole body when it is refused)."""
    with client.stream(
        "GET", f"/dashboard/api/memories/{memory}/events", params=params, headers={"X-API-Key": b"r", **headers}
    ) as response:
        first = response.read().decode() if response.status_code != 200 else next(response.iter_text())
        return response.status_code, first


def _hello_since(chunk: str) -> int:
    assert "event: hello" in chunk, chunk
    return int(json.loads(chunk.split("data: ", 1)[1].split("\n", 1)[0])["since_seq"])


@pytest.mark.parametrize(
    "header",
    [b"\xb2", "\u0663".encode(), b"9" * 5000, b"9" * 25, str(2**53 + 1).encode(), b"-1", b"+5", b"1_0", b"abc"],
    ids=[
        "superscript-two",
        "arabic-three",
        "5000-digits",
        "25-digits",
        "past-2**53",
        "negative",
        "plus",
        "underscore",
        "word",
    ],
)
def test_a_last_event_id_that_is_no_sequence_number_is_422_like_a_bad_since_seq(
    keyed: TestClient, header: bytes
) -> None:
    name = unique_name("dash")
    assert keyed.post("/v1/memories", json={"name": name, "domain": "example_home"}, headers={"X-API-Key": "w"})
    status, body = _stream_start(keyed, name, {"Last-Event-ID": header})  # "\xb2" reads as "²", a str.isdigit()
    assert status == 422, body
    error = json.loads(body)["error"]
    assert error["code"] == "invalid_request" and "header.last-event-id" in error["issues"][0]["message"]
    bad_query = keyed.get(
        f"/dashboard/api/memories/{name}/events", params={"since_seq": 2**53 + 1}, headers={"X-API-Key": "r"}
    )
    assert bad_query.status_code == 422 and bad_query.json()["error"]["code"] == "invalid_request"


def test_a_last_event_id_resumes_within_the_same_bounds_as_since_seq(keyed: TestClient) -> None:
    name = unique_name("dash")
    assert keyed.post("/v1/memories", json={"name": name, "domain": "example_home"}, headers={"X-API-Key": "w"})
    assert _hello_since(_stream_start(keyed, name, {"Last-Event-ID": b"3"})[1]) == 3
    assert _hello_since(_stream_start(keyed, name, {"Last-Event-ID": str(2**53).encode()})[1]) == 2**53
    assert _hello_since(_stream_start(keyed, name, {"Last-Event-ID": b"2"}, since_seq=5)[1]) == 5  # the later one
    assert _hello_since(_stream_start(keyed, name, {"Last-Event-ID": b""}, since_seq=4)[1]) == 4  # none to resume from
