"""The dashboard where a reverse proxy serves the service under a path prefix (the proxy takes the prefix
off; uvicorn is told it with ``root_path``, as ``l3mp serve --root-path`` tells it): the page, its files,
its data, its live stream and a write all go through the proxy, in a real browser."""

# ruff: noqa: F811  (fixtures imported from dashboard_support and used as parameters)

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from dashboard_support import WRITE_KEY, Console, LiveService, browser, console, live_service, page, seed  # noqa: F401
from prefix_proxy import PrefixProxy

from experiments.service.server import Server
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS

pytestmark = pytest.mark.slow

PREFIX = "/robots/home"
LIVE_WAIT_MS = 30_000  # a bound for a busy machine, not a target


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveService, PrefixProxy]]:
    with (
        live_service(tmp_path_factory.mktemp("prefixed"), root_path=PREFIX, api_key=WRITE_KEY) as service,
        PrefixProxy(PREFIX, service.url) as proxy,
    ):
        yield service, proxy


def through_proxy(proxy: PrefixProxy, key: str | None = WRITE_KEY) -> httpx.Client:
    headers = {"X-API-Key": key} if key else {}
    return httpx.Client(base_url=proxy.url + PREFIX, headers=headers, timeout=30)


def test_the_page_its_files_and_its_data_load_under_the_prefix(
    page: Any, console: Console, served: tuple[LiveService, PrefixProxy]
) -> None:
    _, proxy = served
    with through_proxy(proxy) as client:
        memory = seed(client, SURVEY_ENTITIES, SURVEY_FACTS, "example_home")
    answered: list[tuple[int, str]] = []
    page.on("response", lambda r: answered.append((r.status, r.url)))
    page.goto(f"{proxy.url}{PREFIX}/#memory={memory}")
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    assert page.locator("#memories tbody tr.current td.name").text_content() == memory
    drawn = page.evaluate("window.l3mpDashboard.cy.nodes('.entity').length")
    assert drawn >= len(SURVEY_ENTITIES)
    assert console.errors == []
    assert answered and all(status < 400 for status, _ in answered), answered
    assert all(url.startswith(f"{proxy.url}{PREFIX}/") for _, url in answered), answered
    assert {"/dashboard/static/js/api.js", "/dashboard/api/memories"} <= set(proxy.forwarded)


def test_an_update_posted_under_the_prefix_reaches_the_page_live(
    page: Any, served: tuple[LiveService, PrefixProxy]
) -> None:
    _, proxy = served
    with through_proxy(proxy) as client:
        memory = seed(client, SURVEY_ENTITIES, SURVEY_FACTS, "example_home")
        page.goto(f"{proxy.url}{PREFIX}/#memory={memory}")
        page.wait_for_selector("body[data-ready='1']", timeout=30_000)
        page.wait_for_selector("#live.live", timeout=LIVE_WAIT_MS)
        move = {"remove": ["(on mug_1 table_1)"], "add": ["(on mug_1 shelf_1)"], "input": "the mug to the shelf"}
        posted = client.post(f"/v1/memories/{memory}/deltas", json=move)
    assert posted.status_code == 200, posted.text
    card = page.locator(f"#timeline li[data-id='{posted.json()['id']}']")
    card.wait_for(state="visible", timeout=LIVE_WAIT_MS)
    page.wait_for_function(
        "() => window.l3mpDashboard.cy.getElementById('mug_1').data('container') === 'shelf_1'", timeout=LIVE_WAIT_MS
    )


def test_the_prefix_without_its_slash_is_sent_to_the_page(served: tuple[LiveService, PrefixProxy]) -> None:
    _, proxy = served
    with httpx.Client(base_url=proxy.url, timeout=30, follow_redirects=True) as client:
        answer = client.get(PREFIX)
    assert answer.status_code == 200 and str(answer.url) == f"{proxy.url}{PREFIX}/"
    assert f'src="{PREFIX}/dashboard/static/js/main.js"' in answer.text  # named from the root path


def test_the_page_opened_at_the_prefix_without_its_slash_loads(
    page: Any, console: Console, served: tuple[LiveService, PrefixProxy]
) -> None:
    """Where the proxy forwards the bare prefix as ``/`` instead of redirecting (Traefik's StripPrefix),
    the page's URL has no slash after the prefix: its files and data are still found."""
    service, _ = served
    with PrefixProxy(PREFIX, service.url, redirect_bare=False) as bare, through_proxy(bare) as client:
        memory = seed(client, SURVEY_ENTITIES, SURVEY_FACTS, "example_home")
        page.goto(f"{bare.url}{PREFIX}#memory={memory}")
        page.wait_for_selector("body[data-ready='1']", timeout=30_000)
        assert page.locator("#memories tbody tr.current td.name").text_content() == memory
        assert page.evaluate("window.l3mpDashboard.cy.nodes('.entity').length") >= len(SURVEY_ENTITIES)
    assert console.errors == []


def test_the_openapi_page_asks_for_its_schema_under_the_prefix(served: tuple[LiveService, PrefixProxy]) -> None:
    _, proxy = served
    with through_proxy(proxy, None) as client:
        docs = client.get("/docs")
        schema = client.get("/openapi.json")
    assert docs.status_code == 200 and f"'{PREFIX}/openapi.json'" in docs.text
    assert schema.status_code == 200 and "/v1/memories/{memory}/observations" in schema.json()["paths"]


def test_l3mp_serve_with_a_root_path_answers_under_the_proxys_prefix(tmp_path: Path) -> None:
    """The command itself (not the app in a thread): ``l3mp serve --root-path`` behind the proxy."""
    with (
        Server(tmp_path / "served.db", tmp_path / "served.log", serve_args=["--root-path", PREFIX]) as server,
        PrefixProxy(PREFIX, server.url) as proxy,
        through_proxy(proxy, None) as client,
    ):
        page = client.get("/")
        created = client.post("/v1/memories", json={"name": "home", "domain": "example_home"})
        docs = client.get("/docs")
        listed = client.get("/v1/memories")
    assert page.status_code == 200 and f'src="{PREFIX}/dashboard/static/js/main.js"' in page.text
    assert created.status_code == 201, created.text
    assert docs.status_code == 200 and f"'{PREFIX}/openapi.json'" in docs.text
    assert [m["name"] for m in listed.json()] == ["home"]
