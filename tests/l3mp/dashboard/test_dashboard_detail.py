"""Level of detail for large memories: the outline (floors, rooms with counts, links between rooms),
then one room or floor at a time, each agreeing with the home it was seeded from."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import unique_name
from fastapi.testclient import TestClient

from kg_memory import Delta, Entity, Fact, UpdateSource, UpdateStatus, WorldMemory
from kg_memory.stores import SQLiteStore
from l3mp.operations.paging import entity_pages, room_of, to_lines
from l3mp.service import create_app
from l3mp.service.dashboard import detail, views
from l3mp.service.dashboard.index import placement
from l3mp.settings import Settings
from sim import HomeSpec, generate_home
from sim.home import Home

FLOORS = 3


@pytest.fixture(scope="module")
def home() -> Home:
    """A generated home whose rooms are spread over three floors (the ``floor`` attribute)."""
    plain = generate_home(HomeSpec.scaled(1_200))
    rooms = sorted(plain.rooms)
    floor = {r: str(i % FLOORS) for i, r in enumerate(rooms)}
    entities = tuple(
        Entity(e.name, e.type, e.label, {**e.attrs, "floor": int(floor[e.name])}) if e.name in floor else e
        for e in plain.entities
    )
    return replace(plain, entities=entities)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = Settings(sqlite_path=tmp_path_factory.mktemp("detail") / "d.db", retriever="full")
    with TestClient(create_app(settings)) as client:
        yield client


def _seed(client: TestClient, home: Home) -> str:
    name = unique_name("detail")
    assert client.post("/v1/memories", json={"name": name, "domain": "household"}).status_code == 201
    body = "".join(to_lines(home.entities, sorted(home.facts, key=str))).encode()
    answer = client.post(f"/v1/memories/{name}/entities.jsonl", params={"page": 400}, content=body)
    assert answer.status_code == 200, answer.text[:500]
    return name


@pytest.fixture(scope="module")
def memory(client: TestClient, home: Home) -> str:
    return _seed(client, home)


def _room_of(home: Home) -> dict[str, str]:
    located = room_of(set(home.rooms), home.facts)
    return {**located, **{r: r for r in home.rooms}}


def test_the_outline_counts_every_room_and_floor(client: TestClient, home: Home, memory: str) -> None:
    outline = client.get(f"/dashboard/api/memories/{memory}/outline").json()
    located = _room_of(home)
    assert [f["name"] for f in outline["floors"]] == [str(i) for i in range(FLOORS)]
    assert sorted(outline["rooms"]["name"]) == sorted(home.rooms)
    per_room = Counter(room for name, room in located.items() if name != room and name in home.by_name)
    per_room = Counter({r: n for r, n in per_room.items() if r in home.rooms})
    counted = dict(zip(outline["rooms"]["name"], outline["rooms"]["entities"], strict=True))
    assert counted == {r: per_room.get(r, 0) for r in home.rooms}
    assert sum(f["entities"] for f in outline["floors"]) == len(located)  # the robot (a constant) included
    assert all(
        sum(k.values()) == n for k, n in zip(outline["rooms"]["kinds"], outline["rooms"]["entities"], strict=True)
    )
    joined = {tuple(sorted(f.args)) for f in home.facts if f.predicate == "connected"}
    assert {tuple(link) for link in outline["links"]} == joined


def test_a_floor_or_a_room_is_exactly_what_is_on_it(client: TestClient, home: Home, memory: str) -> None:
    located = _room_of(home)
    floor_of = {e.name: str(e.attrs["floor"]) for e in home.entities if e.name in home.rooms}
    floor = client.get(f"/dashboard/api/memories/{memory}/graph", params={"floor": "1"}).json()
    on_floor = {n for n, r in located.items() if floor_of[r] == "1"}
    assert set(floor["entities"]["name"]) == on_floor
    names = set(floor["entities"]["name"]) | {"robot_1"} | {c.name for c in home.constants}
    assert floor["facts"]["predicate"] and all(set(args) <= names for args in floor["facts"]["args"])
    held = {str(f) for f in home.facts if f.args[0] in on_floor and set(f.args) <= on_floor | names}
    drawn = {f"({p} {' '.join(a)})" for p, a in zip(floor["facts"]["predicate"], floor["facts"]["args"], strict=True)}
    assert drawn == held
    room = sorted(home.rooms)[4]
    one = client.get(f"/dashboard/api/memories/{memory}/graph", params={"room": room}).json()
    assert set(one["entities"]["name"]) == {n for n, r in located.items() if r == room}
    parents = dict(zip(one["entities"]["name"], one["entities"]["parent"], strict=True))
    assert parents[room] is None and all(parents[n] for n in parents if n != room)


def test_the_outline_follows_the_memory_as_it_changes(client: TestClient, home: Home) -> None:
    memory = _seed(client, home)
    located = _room_of(home)
    item, place = next((f.args[0], f.args[1]) for f in sorted(home.facts, key=str) if f.predicate == "on")
    there = next(
        f.args[1]
        for f in sorted(home.facts, key=str)
        if f.predicate == "on" and located[f.args[1]] != located[place] and f.args[1] != place
    )
    before = client.get(f"/dashboard/api/memories/{memory}/outline").json()
    moved = client.post(
        f"/v1/memories/{memory}/deltas", json={"remove": [f"(on {item} {place})"], "add": [f"(on {item} {there})"]}
    )
    assert moved.status_code == 200, moved.text
    after = client.get(f"/dashboard/api/memories/{memory}/outline").json()
    count = lambda o, r: dict(zip(o["rooms"]["name"], o["rooms"]["entities"], strict=True))[r]  # noqa: E731
    assert after["version"] == before["version"] + 1
    assert count(after, located[place]) == count(before, located[place]) - 1
    assert count(after, located[there]) == count(before, located[there]) + 1
    room = client.get(f"/dashboard/api/memories/{memory}/graph", params={"room": located[there]}).json()
    assert item in room["entities"]["name"]
    then = client.get(f"/dashboard/api/memories/{memory}/outline", params={"version": before["version"]}).json()
    assert then["rooms"] == before["rooms"] and f"(on {item} {there})" in then["diff"]["added"]


def test_a_home_without_floors_is_one_floor_and_small_memories_are_drawn_whole(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = generate_home(HomeSpec(seed=1))
    memory = _seed(client, plain)
    outline = client.get(f"/dashboard/api/memories/{memory}/outline").json()
    assert [(f["name"], f["rooms"]) for f in outline["floors"]] == [("", len(plain.rooms))]
    rows = {r["name"]: r for r in client.get("/dashboard/api/memories").json()}
    assert rows[memory]["detail"] == "full" and rows[memory]["entities"] == outline["entities"]
    monkeypatch.setattr(views, "FULL_GRAPH_LIMIT", 100)
    assert {r["name"]: r for r in client.get("/dashboard/api/memories").json()}[memory]["detail"] == "outline"


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"room": "no_such_room"}, "no such room"),
        ({"floor": "99"}, "no room"),
        ({"room": "x", "floor": "1"}, "name a room or a floor"),
    ],
)
def test_an_unknown_room_or_floor_is_refused_by_name(
    client: TestClient, memory: str, params: dict[str, str], says: str
) -> None:
    answer = client.get(f"/dashboard/api/memories/{memory}/graph", params=params)
    assert answer.status_code == 422 and says in answer.json()["error"]["message"], answer.text


def test_a_cached_state_is_brought_up_to_date_by_the_updates_since_without_reading_it_whole(
    tmp_path: Path, home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(tmp_path / "catch-up.db")
    memory = WorldMemory.create(store, "catch_up", "household")
    for page in entity_pages(home.entities, home.facts, size=400):
        assert memory.add_entities(page.entities, facts=page.facts).status is UpdateStatus.APPLIED
    before = detail.outline(memory)
    moves = [f for f in sorted(home.facts, key=str) if f.predicate == "on"][:2]
    (item, place), (_, there) = moves[0].args, moves[1].args
    moved = memory.apply(
        Delta(remove={moves[0]}, add={Fact("on", (item, there))}), source=UpdateSource.API, input="moved"
    )
    assert moved.status is UpdateStatus.APPLIED and moved.version == before.version + 1
    monkeypatch.setattr(WorldMemory, "state", lambda self: pytest.fail("the whole state was read again"))
    after = detail.outline(memory).model_dump(mode="json")
    monkeypatch.undo()
    fresh = detail.outline(WorldMemory.open(SQLiteStore(tmp_path / "catch-up.db"), "catch_up"))
    assert after == fresh.model_dump(mode="json") and after["version"] == moved.version
    assert after["rooms"] != before.model_dump(mode="json")["rooms"] or place == there


def test_placement_takes_the_shallowest_place_and_between_equals_the_first_fact() -> None:
    domain = WorldMemory.create(SQLiteStore(":memory:"), "tie", "household").domain
    entities = {
        "hall": Entity("hall", "room"),
        "table_1": Entity("table_1", "table"),
        "box_1": Entity("box_1", "box"),
        "cup_1": Entity("cup_1", "cup"),
        "cup_2": Entity("cup_2", "cup"),
        "table_2": Entity("table_2", "table"),
        "cup_3": Entity("cup_3", "cup"),
    }
    facts = [Fact.parse(f) for f in ("(furniture_in table_1 hall)", "(on box_1 table_1)", "(on cup_1 box_1)")]
    facts += [Fact.parse("(on cup_1 table_1)"), Fact.parse("(inside cup_2 box_1)"), Fact.parse("(on cup_2 table_1)")]
    facts += [
        Fact.parse("(furniture_in table_2 hall)"),
        Fact.parse("(on cup_3 table_1)"),
        Fact.parse("(inside cup_3 table_2)"),
    ]
    parents = placement(entities, reversed(facts), domain)
    assert parents == {
        "table_1": "hall",
        "table_2": "hall",
        "box_1": "table_1",
        "cup_1": "table_1",  # on the table and in a box on it: the table is nearer its room
        "cup_2": "table_1",
        "cup_3": "table_2",  # two tables: (inside cup_3 table_2) comes before (on cup_3 table_1)
    }
    assert placement(entities, facts[:3], domain)["cup_1"] == "box_1"
