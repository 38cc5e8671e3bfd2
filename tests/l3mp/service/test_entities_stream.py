"""Bulk entity creation over REST: a large home streamed as JSON Lines in one request, written in pages
of whole rooms, each a verified sensor update with its own verdict."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import unique_name
from service_support import Factory, client_factory

from kg_memory import Entity, Fact
from l3mp.operations.paging import entity_pages, to_lines
from sim import HomeSpec, generate_home


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Factory]:
    yield from client_factory(tmp_path)


@pytest.fixture(scope="module")
def home() -> object:
    return generate_home(HomeSpec.scaled(3_000))


def _memory(client: object, domain: str = "household") -> str:
    name = unique_name("bulk")
    created = client.post("/v1/memories", json={"name": name, "domain": domain})  # type: ignore[attr-defined]
    assert created.status_code == 201, created.text
    return name


def _body(entities: tuple[Entity, ...], facts: frozenset[Fact] | list[Fact]) -> bytes:
    return "".join(to_lines(entities, sorted(facts, key=str))).encode()


@pytest.mark.slow
@pytest.mark.parametrize("gzipped", [False, True])
def test_a_home_streamed_in_one_request_is_written_in_verified_pages(
    make_client: Factory, home: object, gzipped: bool
) -> None:
    body = _body(home.entities, home.facts)  # type: ignore[attr-defined]
    client = make_client(max_request_bytes=40_000)  # the stream is far over the ordinary body limit
    assert len(body) > 10 * 40_000
    name = _memory(client)
    sent = gzip.compress(body) if gzipped else body
    answer = client.post(
        f"/v1/memories/{name}/entities.jsonl", params={"page": 500, "input": "first look"}, content=sent
    )
    assert answer.status_code == 200, answer.text[:1000]
    done = answer.json()
    expected = entity_pages(home.entities, home.facts, size=500)  # type: ignore[attr-defined]
    assert done["applied"] == len(expected) > 3 and done["rejected"] == 0
    assert [p["entities"] for p in done["pages"]] == [len(p.entities) for p in expected]
    assert all(p["update"]["source"] == "sensor" and "first look" in p["update"]["input"] for p in done["pages"])
    state = client.get(f"/v1/memories/{name}/state").json()
    assert done["version"] == state["version"] == len(expected)
    assert sorted(state["facts"]) == sorted(str(f) for f in home.facts)  # type: ignore[attr-defined]
    assert {e.name for e in home.entities} <= {e["name"] for e in state["entities"]}  # type: ignore[attr-defined]
    assert state["unknown_location"] == []
    history = client.get(f"/v1/memories/{name}/updates", params={"limit": 1000}).json()["updates"]
    assert [u["id"] for u in history[1:]] == [p["update"]["id"] for p in done["pages"]]


def test_a_bad_page_is_refused_with_its_reason_and_the_others_stand(make_client: Factory, home: object) -> None:
    entities = home.entities  # type: ignore[attr-defined]
    pages = entity_pages(entities, home.facts, size=500)  # type: ignore[attr-defined]
    placing = next(f for f in pages[2].facts if f.predicate == "on")  # an item on something, in the third page
    victim, place = placing.args
    other = next(f.args[1] for f in pages[2].facts if f.predicate == "on" and f.args[1] != place)
    facts = [*home.facts, Fact("on", (victim, other))]  # type: ignore[attr-defined]  # two places at once
    client = make_client()
    name = _memory(client)
    answer = client.post(f"/v1/memories/{name}/entities.jsonl", params={"page": 500}, content=_body(entities, facts))
    assert answer.status_code == 422, answer.text[:500]
    done = answer.json()
    verdicts = [p["update"]["status"] for p in done["pages"]]
    assert verdicts[2] == "rejected" and verdicts.count("rejected") == done["rejected"] == 1
    assert done["applied"] == len(verdicts) - 1
    reasons = " ".join(i["message"] for i in done["pages"][2]["update"]["issues"])
    assert victim in reasons, reasons
    state = client.get(f"/v1/memories/{name}/state").json()
    assert victim not in {e["name"] for e in state["entities"]}
    assert {pages[1].entities[0].name, pages[3].entities[0].name} <= {e["name"] for e in state["entities"]}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"entity": {"name": "hall", "type": "room"}}\nnot json\n', "entities line 2"),
        (b'{"entity": {"name": "hall", "type": "room"}}\n{"fact": "(in_room"}\n', "entities line 2"),
        (b'{"entity": {"name": "hall"}}\n', "entities line 1"),
        (b'{"thing": 1}\n', "entities line 1"),
        (b'{"fact": "(connected a b)"}\n', "creates no entity"),
        (b"\x1f\x8bnot gzip at all", "not UTF-8 JSON Lines"),
        (b'{"entity": {"name": "hall", "type": "room"}}\n\xff\xfe\n', "not UTF-8 JSON Lines"),
    ],
)
def test_a_malformed_stream_is_refused_naming_its_line_and_writes_nothing(
    make_client: Factory, body: bytes, says: str
) -> None:
    client = make_client()
    name = _memory(client)
    answer = client.post(f"/v1/memories/{name}/entities.jsonl", content=body)
    assert answer.status_code == 422, answer.text
    assert says in answer.json()["error"]["message"], answer.json()
    assert client.get(f"/v1/memories/{name}").json()["version"] == 0


def test_the_stream_has_the_services_rules(make_client: Factory) -> None:
    body = b'{"entity": {"name": "hall", "type": "room"}}\n'
    client = make_client(api_key="stream-secret", max_import_bytes=1_000)
    assert client.post("/v1/memories/nowhere/entities.jsonl", content=body).status_code == 401
    keyed = {"X-API-Key": "stream-secret"}
    assert client.post("/v1/memories/nowhere/entities.jsonl", content=body, headers=keyed).status_code == 404
    big = client.post("/v1/memories/nowhere/entities.jsonl", content=body * 100, headers=keyed)
    assert big.status_code == 413 and big.json()["error"]["code"] == "too_large"


def test_pages_hold_whole_rooms_and_every_fact_once(home: object) -> None:
    pages = entity_pages(home.entities, home.facts, size=500)  # type: ignore[attr-defined]
    assert sum(len(p.entities) for p in pages) == len(home.entities)  # type: ignore[attr-defined]
    assert sorted((f for p in pages for f in p.facts), key=str) == sorted(home.facts, key=str)  # type: ignore[attr-defined]
    created = {e.name for e in home.entities}  # type: ignore[attr-defined]
    known: set[str] = set()
    for page in pages:
        known |= {e.name for e in page.entities}
        assert all(a in known or a not in created for f in page.facts for a in f.args)
    assert json.loads(json.dumps(pages[1].to_json()))["entities"][0]["name"] == pages[1].entities[0].name


def test_a_page_with_too_many_facts_passes_the_links_between_rooms_on(make_client: Factory) -> None:
    building = generate_home(HomeSpec.building(2_000, 1))
    pages = entity_pages(building.entities, building.facts, size=400, max_facts=300)
    assert (
        len(pages[0].facts) <= 300 < sum(len(f.args) == 2 and {*f.args} <= set(building.rooms) for f in building.facts)
    )
    assert sorted((f for p in pages for f in p.facts), key=str) == sorted(building.facts, key=str)
    client = make_client()
    name = _memory(client)
    for page in pages:
        answer = client.post(f"/v1/memories/{name}/entities", json=page.to_json())
        assert answer.status_code == 200 and answer.json()["status"] == "applied", answer.text[:300]
    state = client.get(f"/v1/memories/{name}/state").json()
    assert sorted(state["facts"]) == sorted(str(f) for f in building.facts)
