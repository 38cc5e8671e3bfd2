"""A large memory in a real browser (Debian's Chromium through Playwright, the real service under uvicorn):
the page draws the outline first (floors collapsed), a click opens a floor in place, and opening another
floor closes the first. The size at which the page switches to the outline is lowered for the test, so
the home stays small enough to seed quickly."""

# The fixtures come from dashboard_support (a conftest here would shadow the root one), so their names
# are both imported and used as parameters:
# ruff: noqa: F811

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import unique_name
from dashboard_support import (  # noqa: F401  (fixtures)
    Console,
    LiveService,
    browser,
    console,
    figures,
    page,
    service,
)

from kg_memory import Entity
from l3mp.operations.paging import room_of, to_lines
from l3mp.service.dashboard import views
from sim import HomeSpec, generate_home
from sim.home import Home

pytestmark = pytest.mark.slow

FLOORS = 4


@pytest.fixture(scope="module")
def home() -> Home:
    plain = generate_home(HomeSpec.scaled(800, seed=3))
    floor = {r: i % FLOORS for i, r in enumerate(sorted(plain.rooms))}
    entities = tuple(
        Entity(e.name, e.type, e.label, {**e.attrs, "floor": floor[e.name]}) if e.name in floor else e
        for e in plain.entities
    )
    return replace(plain, entities=entities)


@pytest.fixture(scope="module")
def building(service: LiveService, home: Home) -> Iterator[str]:
    name = unique_name("tower")
    with service.client() as client:
        assert client.post("/v1/memories", json={"name": name, "domain": "household"}).status_code == 201
        body = "".join(to_lines(home.entities, sorted(home.facts, key=str))).encode()
        answer = client.post(f"/v1/memories/{name}/entities.jsonl", content=body)
        assert answer.status_code == 200, answer.text[:500]
    yield name


@pytest.fixture
def outlined(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views, "FULL_GRAPH_LIMIT", 500)  # the service runs in this process


def _on_floor(home: Home, floor: int) -> set[str]:
    rooms = {e.name for e in home.entities if e.name in home.rooms and e.attrs["floor"] == floor}
    located = room_of(set(home.rooms), home.facts)
    return rooms | {n for n, r in located.items() if r in rooms}


def _drawn(page: Any) -> set[str]:
    return set(page.evaluate("window.l3mpDashboard.cy.nodes('.entity').map((n) => n.id())"))


def _click(page: Any, node: str) -> None:
    point = page.evaluate(
        """(id) => {
            const cy = window.l3mpDashboard.cy;
            const box = cy.getElementById(id).renderedBoundingBox();
            const frame = cy.container().getBoundingClientRect();
            return {x: frame.left + (box.x1 + box.x2) / 2, y: frame.top + (box.y1 + box.y2) / 2};
        }""",
        node,
    )
    page.mouse.click(point["x"], point["y"])


def test_a_building_opens_on_its_floors_and_a_click_draws_one_floor(
    page: Any, console: Console, service: LiveService, building: str, home: Home, outlined: None, figures: Path
) -> None:
    page.goto(f"{service.url}/#memory={building}")
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    floors = page.evaluate("window.l3mpDashboard.cy.nodes('.collapsed').map((n) => n.id())")
    assert sorted(floors) == [f"__floor:{i}" for i in range(FLOORS)]
    assert _drawn(page) == set()  # nothing inside a floor is drawn until it is opened
    _click(page, "__floor:1")
    page.wait_for_function("() => window.l3mpDashboard.metrics.lastOpen !== null", timeout=60_000)
    assert _drawn(page) == _on_floor(home, 1) | {"robot_1"} & _drawn(page)
    assert page.evaluate("window.l3mpDashboard.cy.nodes('.collapsed').length") == FLOORS - 1
    page.evaluate("window.l3mpDashboard.open('floor:2')")
    page.wait_for_function("() => window.l3mpDashboard.cy.getElementById('__floor:1').hasClass('collapsed')")
    assert _drawn(page) - {"robot_1"} == _on_floor(home, 2) - {"robot_1"}
    assert "drawn of" in page.text_content("#graph-count")
    assert console.errors == []
    page.screenshot(path=str(figures / "dashboard-building.png"))


def test_choosing_a_room_opens_its_floor_and_shows_that_room(
    page: Any, console: Console, service: LiveService, building: str, home: Home, outlined: None
) -> None:
    page.goto(f"{service.url}/#memory={building}")
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    room = sorted(e.name for e in home.entities if e.attrs.get("floor") == 3)[0]
    page.select_option("#room-filter", room)
    page.wait_for_function("(r) => window.l3mpDashboard.cy.getElementById(r).nonempty()", arg=room, timeout=60_000)
    page.wait_for_function("() => window.l3mpDashboard.cy.nodes('.entity:visible').length > 0")
    visible = set(page.evaluate("window.l3mpDashboard.cy.nodes('.entity:visible').map((n) => n.id())"))
    located = room_of(set(home.rooms), home.facts)
    assert room in visible and visible - {room} <= {n for n, r in located.items() if r == room}
    assert console.errors == []


def test_a_small_memory_is_still_drawn_whole(page: Any, service: LiveService, building: str) -> None:
    page.goto(f"{service.url}/#memory={building}")  # the switch is at 3,000 entities: this one is whole
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    assert page.evaluate("window.l3mpDashboard.cy.nodes('.collapsed').length") == 0
    assert page.evaluate("window.l3mpDashboard.state.detail") is None
    with service.client(None) as client:
        every = {e["name"] for e in client.get(f"/v1/memories/{building}/entities").json()}
    assert _drawn(page) == every and len(every) > 750


def test_an_update_reaches_the_open_floor_without_a_reload(
    page: Any, console: Console, service: LiveService, building: str, home: Home, outlined: None
) -> None:
    floor = _on_floor(home, 0)
    moves = [f for f in sorted(home.facts, key=str) if f.predicate == "on" and f.args[0] in floor]
    (item, place), there = moves[0].args, next(f.args[1] for f in moves if f.args[1] != moves[0].args[1])
    page.goto(f"{service.url}/#memory={building}")
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    page.evaluate("window.l3mpDashboard.open('floor:0')")
    page.wait_for_function("(i) => window.l3mpDashboard.cy.getElementById(i).nonempty()", arg=item, timeout=60_000)
    assert page.evaluate("(i) => window.l3mpDashboard.cy.getElementById(i).data('container')", item) == place
    with service.client() as client:
        body = {"remove": [f"(on {item} {place})"], "add": [f"(on {item} {there})"], "input": "moved on floor 0"}
        moved = client.post(f"/v1/memories/{building}/deltas", json=body)
    assert moved.status_code == 200, moved.text
    page.wait_for_function(
        "([i, t]) => window.l3mpDashboard.cy.getElementById(i).data('container') === t",
        arg=[item, there],
        timeout=30_000,
    )
    assert not page.evaluate("window.l3mpDashboard.cy.getElementById('__floor:0').hasClass('collapsed')")
    assert console.errors == []
