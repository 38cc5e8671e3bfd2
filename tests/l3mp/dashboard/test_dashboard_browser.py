"""The dashboard in a real browser (Debian's Chromium through Playwright) against the real service under
uvicorn on 127.0.0.1, with a SQLite store in a temp folder. Screenshots go to a temp folder too."""

# The fixtures come from dashboard_support (a conftest here would shadow the root one), so their names
# are both imported and used as parameters:
# ruff: noqa: F811

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from dashboard_support import (  # noqa: F401  (fixtures)
    READ_KEY,
    WRITE_KEY,
    Console,
    LiveService,
    browser,
    console,
    figures,
    keyed_service,
    page,
    seed,
    service,
)

from kg_memory import Entity, Fact
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS
from sim.survey import surveyed_home

pytestmark = pytest.mark.slow

# How long a live change may take to show, on a machine as busy as CI's may be: a bound, not a target
LIVE_WAIT_MS = 30_000

MOVE = {
    "remove": ["(on mug_1 table_1)"],
    "add": ["(on mug_1 shelf_1)"],
    "input": "Alex moved the blue mug to the hall shelf",
}


def open_dashboard(page: Any, service: LiveService, memory: str) -> None:
    page.goto(f"{service.url}/#memory={memory}")
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)


def small_home(service: LiveService) -> str:
    with service.client() as client:
        return seed(client, SURVEY_ENTITIES, SURVEY_FACTS, "example_home")


def post_delta(service: LiveService, memory: str, body: dict[str, Any], key: str = WRITE_KEY) -> httpx.Response:
    with service.client(key) as client:
        return client.post(f"/v1/memories/{memory}/deltas", json=body)


def parent_in_graph(page: Any, name: str) -> str:
    result: str = page.evaluate("(n) => window.l3mpDashboard.cy.getElementById(n).data('container')", name)
    return result


def settled(page: Any) -> None:
    """Wait until the browser has drawn two more frames: what the page did so far is on screen."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def click_entity(page: Any, name: str) -> None:
    """A real mouse click on the entity's node, after searching for it (which zooms to it)."""
    page.fill("#search", name)
    page.wait_for_function("() => document.querySelector('#search-count').textContent.endsWith('found')")
    # an earlier selection's centring animation may still be moving the view: the node is where it
    # will be clicked only once it has stopped
    page.wait_for_function("() => !window.l3mpDashboard.cy.animated()")
    settled(page)
    point = page.evaluate(
        """(name) => {
            const cy = window.l3mpDashboard.cy;
            const box = cy.getElementById(name).renderedBoundingBox();
            const frame = cy.container().getBoundingClientRect();
            return {x: frame.left + (box.x1 + box.x2) / 2, y: frame.top + (box.y1 + box.y2) / 2};
        }""",
        name,
    )
    page.mouse.click(point["x"], point["y"])


@pytest.fixture(scope="module")
def paper_home(service: LiveService) -> str:
    """The paper-scale simulated home (382 entities besides the domain's constants)."""
    entities, facts = surveyed_home(0)
    with service.client() as client:
        return seed(client, entities, facts, "household", input="first survey of the home", prefix="paper")


def test_the_page_loads_without_console_errors_and_draws_every_entity(
    page: Any, console: Console, service: LiveService, paper_home: str, figures: Path
) -> None:
    open_dashboard(page, service, paper_home)
    with service.client(None) as client:
        entities = client.get(f"/v1/memories/{paper_home}/entities").json()
    assert len(entities) > 382
    drawn = page.evaluate("window.l3mpDashboard.cy.nodes('.entity').length")
    assert drawn == len(entities)
    assert page.text_content("#graph-count").startswith(f"{len(entities)} entities")
    assert page.locator("#memories tbody tr.current td.name").text_content() == paper_home
    settled(page)  # the last frame drawn before looking at the console
    assert console.errors == []
    page.screenshot(path=str(figures / "dashboard-home.png"))


def test_an_update_posted_through_rest_appears_in_the_timeline_without_a_reload(
    page: Any, service: LiveService
) -> None:
    memory = small_home(service)
    open_dashboard(page, service, memory)
    page.evaluate("window.__sameDocument = true")  # gone if the page reloads
    assert parent_in_graph(page, "mug_1") == "table_1"
    posted = post_delta(service, memory, MOVE)
    assert posted.status_code == 200, posted.text
    card = page.locator(f"#timeline li[data-id='{posted.json()['id']}']")
    card.wait_for(state="visible", timeout=LIVE_WAIT_MS)
    assert "(on mug_1 shelf_1)" in card.text_content()
    assert "Alex moved the blue mug" in card.locator(".input").text_content()
    page.wait_for_function(
        "() => window.l3mpDashboard.cy.getElementById('mug_1').data('container') === 'shelf_1'", timeout=LIVE_WAIT_MS
    )
    assert page.evaluate("window.__sameDocument") is True


def test_a_rejected_update_shows_its_reason(page: Any, service: LiveService) -> None:
    memory = small_home(service)
    open_dashboard(page, service, memory)
    refused = post_delta(service, memory, {"add": ["(on mug_1 shelf_1)"], "input": "the mug is also on the shelf"})
    assert refused.status_code == 422
    error = refused.json()["error"]
    reason = error["issues"][0]["message"]
    card = page.locator(f"#timeline li[data-id='{error['update']['id']}']")
    card.wait_for(state="visible", timeout=LIVE_WAIT_MS)
    assert "rejected" in (card.get_attribute("class") or "")
    assert card.locator(".reason").first.text_content() == reason
    page.select_option("#status-filter", "rejected")
    assert page.locator("#timeline > li:visible").count() == 1


def test_time_travel_shows_an_older_state_and_the_difference_from_now(page: Any, service: LiveService) -> None:
    memory = small_home(service)
    assert post_delta(service, memory, MOVE).status_code == 200
    open_dashboard(page, service, memory)
    assert parent_in_graph(page, "mug_1") == "shelf_1"
    page.fill("#version", "1")  # a range input: fill sets it and fires input and change
    page.wait_for_selector("#travel-banner:not([hidden])")
    assert "Viewing version 1 of 2" in page.text_content("#travel-banner")
    assert "+ (on mug_1 shelf_1)" in page.text_content("#travel-banner")
    assert parent_in_graph(page, "mug_1") == "table_1"
    assert page.evaluate("window.l3mpDashboard.cy.getElementById('mug_1').hasClass('changed')")
    page.click("#now")
    page.wait_for_selector("#travel-banner", state="hidden")
    assert parent_in_graph(page, "mug_1") == "shelf_1"


def test_clicking_an_entity_shows_its_facts_and_history(
    page: Any, service: LiveService, paper_home: str, figures: Path
) -> None:
    open_dashboard(page, service, paper_home)
    with service.client(None) as client:
        facts = client.get(f"/v1/memories/{paper_home}/facts", params={"entity": "cookbook_1"}).json()["facts"]
    click_entity(page, "cookbook_1")
    page.wait_for_selector("#details-body .facts li")
    shown = page.locator("#details-body .facts code").all_text_contents()
    assert shown == facts and facts
    assert page.text_content("#details-body .entity-name code") == "cookbook_1"
    assert "first survey of the home" in page.text_content("#details-body .entity-history")
    settled(page)
    page.screenshot(path=str(figures / "dashboard-entity.png"))


def test_nothing_from_the_memory_can_inject_script(page: Any, console: Console, service: LiveService) -> None:
    script = "<script>window.__pwned = 'script'</script>"
    image = "<img src=x onerror=\"window.__pwned = 'onerror'\">"
    entities = (*SURVEY_ENTITIES, Entity("vase_1", "item", f"vase {script}"), Entity("plate_1", "dish", image))
    with service.client() as client:
        placed = (*SURVEY_FACTS, Fact.parse("(on vase_1 shelf_1)"), Fact.parse("(on plate_1 table_1)"))
        memory = seed(client, entities, placed, "example_home", input=f"survey {image}")
        moved = {"remove": ["(on vase_1 shelf_1)"], "add": ["(on vase_1 table_1)"], "input": f"moved {script}"}
        assert client.post(f"/v1/memories/{memory}/deltas", json=moved).status_code == 200
    open_dashboard(page, service, memory)
    loads = page.evaluate("window.l3mpDashboard.metrics.graphLoads")
    live = {"remove": ["(on plate_1 table_1)"], "add": ["(on plate_1 shelf_1)"], "input": f"live {image}"}
    assert post_delta(service, memory, live).status_code == 200
    page.locator("#timeline li .input", has_text="live <img").wait_for(timeout=LIVE_WAIT_MS)
    # the live update redraws the graph a moment later: the clicks wait for that, or a redraw under way
    # may take the node from under the pointer
    page.wait_for_function(
        "(n) => window.l3mpDashboard.metrics.graphLoads > n"
        " && window.l3mpDashboard.cy.getElementById('plate_1').data('container') === 'shelf_1'",
        arg=loads,
        timeout=LIVE_WAIT_MS,
    )
    click_entity(page, "plate_1")
    page.wait_for_selector("#details-body .entity-label")
    assert page.text_content("#details-body .entity-label") == image  # shown as text, character for character
    click_entity(page, "vase_1")
    page.wait_for_function("() => document.querySelector('#details-body .entity-label').textContent.startsWith('vase')")
    assert page.text_content("#details-body .entity-label") == f"vase {script}"
    settled(page)
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('main img, main script').length") == 0
    assert console.errors == []


def test_a_read_only_key_cannot_revert_and_the_write_key_can(page: Any, keyed_service: LiveService) -> None:
    with keyed_service.client() as client:
        memory = seed(client, SURVEY_ENTITIES, SURVEY_FACTS, "example_home")
    moved = post_delta(keyed_service, memory, MOVE).json()
    page.goto(keyed_service.url)
    page.fill("#api-key", READ_KEY)
    page.click("#key-form button")
    page.goto(f"{keyed_service.url}/#memory={memory}")
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    card = page.locator(f"#timeline li[data-id='{moved['id']}']")
    card.locator("button.revert").click()
    error = card.locator(".error")
    error.wait_for(state="visible")
    assert "403" in error.text_content() and "not valid for writes" in error.text_content()
    with keyed_service.client() as client:
        history = client.get(f"/v1/memories/{memory}/updates").json()["updates"]
        assert [u["source"] for u in history] == ["domain", "sensor", "api"]  # nothing was written

    page.fill("#api-key", WRITE_KEY)
    page.click("#key-form button")
    page.wait_for_selector(f"#timeline li[data-id='{moved['id']}'] button.revert")
    page.locator(f"#timeline li[data-id='{moved['id']}'] button.revert").click()
    page.locator("#timeline li.source-revert").wait_for(timeout=LIVE_WAIT_MS)
    with keyed_service.client() as client:
        assert client.get(f"/v1/memories/{memory}/facts", params={"entity": "mug_1"}).json()["facts"] == [
            "(on mug_1 table_1)"
        ]


def test_a_pddl_goal_is_planned_and_explained(page: Any, service: LiveService) -> None:
    memory = small_home(service)
    page.goto(service.url)
    page.fill("#api-key", WRITE_KEY)  # plans spend planner time (and model calls): they need the write key
    page.click("#key-form button")
    open_dashboard(page, service, memory)
    page.click(".tab[data-tab='plans']")
    page.fill("#plan-goal", "(on mug_1 shelf_1)")
    page.click("#plan-form button")
    page.wait_for_selector("#plan-result .plan-steps li", timeout=60_000)
    steps = page.locator("#plan-result .plan-steps code").all_text_contents()
    assert any(s.startswith("(pick robot_1 mug_1 table_1") for s in steps)
    assert steps[-1].startswith("(place robot_1 mug_1 shelf_1")
    assert page.locator("#plan-result .plan-steps .english").first.text_content()
    assert "solved" in page.text_content("#plan-result .plan-head")


def test_screenshot_of_a_lived_in_home(page: Any, service: LiveService, paper_home: str, figures: Path) -> None:
    """The timeline with applied and rejected updates, photographed (`make figures` takes the same picture
    for the documentation)."""
    moves = [
        (
            {"remove": ["(on cookbook_1 bookshelf_3)"], "add": ["(on cookbook_1 nightstand_1)"]},
            "Rosa took the cookbook to bed",
        ),
        ({"add": ["(on cookbook_1 bookshelf_4)"]}, "the cookbook is back on the shelf"),  # rejected: it is elsewhere
    ]
    for body, text in moves:
        post_delta(service, paper_home, {**body, "input": text})
    open_dashboard(page, service, paper_home)
    click_entity(page, "cookbook_1")
    page.wait_for_selector("#details-body .facts li")
    page.fill("#search", "")
    page.select_option("#room-filter", "bedroom_1") if page.locator(
        "#room-filter option[value='bedroom_1']"
    ).count() else None
    settled(page)
    page.screenshot(path=str(figures / "dashboard-timeline.png"))
    assert page.locator("#timeline li.rejected").count() >= 1
