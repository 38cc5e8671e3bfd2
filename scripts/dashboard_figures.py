#!/usr/bin/env python3
"""The dashboard's pictures in the documentation (``docs/figures/dashboard-*.png``), made on demand,
never by the tests:

    make figures                                        # = .venv/bin/python scripts/dashboard_figures.py
    .venv/bin/python scripts/dashboard_figures.py --out /tmp/figures

A fresh paper-scale simulated home (seed 0) in a SQLite store in a temporary folder, served by the real
service under uvicorn on 127.0.0.1 and photographed in Debian's Chromium through Playwright after the
steps of the dashboard's browser tests: the whole home; an entity's facts and history; the timeline
after an applied and a rejected update, one room shown.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MEMORY = "home"
ENTITY = "cookbook_1"
ROOM = "bedroom_1"
# an applied move, then a claim the verifier refuses (the cookbook is elsewhere by then)
MOVES = (
    (
        {"remove": ["(on cookbook_1 bookshelf_3)"], "add": ["(on cookbook_1 nightstand_1)"]},
        "Rosa took the cookbook to bed",
    ),
    ({"add": ["(on cookbook_1 bookshelf_4)"]}, "the cookbook is back on the shelf"),
)


def surveyed_store(path: Path) -> None:
    """The paper-scale home of seed 0, surveyed into a new memory (version 1)."""
    from kg_memory import WorldMemory
    from kg_memory.stores import SQLiteStore
    from sim.survey import surveyed_home

    entities, facts = surveyed_home(0)
    store = SQLiteStore(path)
    try:
        home = WorldMemory.create(store, MEMORY, "household")
        home.add_entities(entities, facts=facts, input="first survey of the home")
    finally:
        store.close()


def settled(page: Any) -> None:
    """Wait until the browser has drawn two more frames: what the page did so far is on screen."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def opened(browser: Any, url: str) -> Any:
    """A fresh page on the memory, once the dashboard says it is ready."""
    page = browser.new_context(viewport={"width": 1600, "height": 1000}, device_scale_factor=1).new_page()
    page.goto(f"{url}/#memory={MEMORY}")
    page.wait_for_selector("body[data-ready='1']", timeout=120_000)
    return page


def click_entity(page: Any, name: str) -> None:
    """A real mouse click on the entity's node, after searching for it (which zooms to it)."""
    page.fill("#search", name)
    page.wait_for_function("() => document.querySelector('#search-count').textContent.endsWith('found')")
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
    page.wait_for_selector("#details-body .facts li")


def photograph(url: str, out: Path) -> list[Path]:
    import httpx
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("Chromium is missing: `make browser` installs Debian's chromium")
    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = opened(browser, url)
        settled(page)
        page.screenshot(path=str(out / "dashboard-home.png"))
        written.append(out / "dashboard-home.png")

        page = opened(browser, url)
        click_entity(page, ENTITY)
        settled(page)
        page.screenshot(path=str(out / "dashboard-entity.png"))
        written.append(out / "dashboard-entity.png")

        with httpx.Client(base_url=url, timeout=60) as client:
            for body, text in MOVES:
                client.post(f"/v1/memories/{MEMORY}/deltas", json={**body, "input": text})
        page = opened(browser, url)
        click_entity(page, ENTITY)
        page.fill("#search", "")
        page.select_option("#room-filter", ROOM)
        settled(page)
        page.screenshot(path=str(out / "dashboard-timeline.png"))
        written.append(out / "dashboard-timeline.png")
        browser.close()
    return written


def main() -> int:
    from experiments.dashboard import serving

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures", help="where the PNG files go")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="l3mp-figures-") as tmp:
        store = Path(tmp) / "dashboard.db"
        surveyed_store(store)
        with serving(store) as url:
            for path in photograph(url, args.out):
                print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
