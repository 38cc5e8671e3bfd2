"""Dashboard benchmark: the size of what the page loads first, the route's server time, and the first
render in a real browser (Debian's Chromium through Playwright), at the paper's scale, 2,000 and 10,000
entities, and with ``--building`` a multi-floor building (50,000 entities in the issue's target); plus a
search filter's time, to show the page stays usable.

A memory over 3,000 entities opens on its outline (floors and rooms collapsed, with counts); the page
then opens a floor or a room when it is clicked. For those the benchmark also opens the fullest floor
(a building) or room (a one-floor home) after the first render: a building's "floor view" is the first
render plus that opening.

The service runs under uvicorn on 127.0.0.1 over a SQLite store in a temp folder; each home is streamed
through REST in one request (``POST /v1/memories/{name}/entities.jsonl``, written in verified pages). "first
render" is measured in the page, from asking for the graph to the second frame after Cytoscape drew it
(fetch + layout + draw); "ready" is from navigation start. The server indexes the state once per
version ("cold": the route's first answer reads the whole state) and brings a cached index up to date
with the updates since; the memory is changed once before the page loads, so the first load finds a
new version, as after any update (reported beside the median, which the targets judge).

    python -m experiments dashboard [--entities 382,2000,10000] [--building 50000] [--loads 3]
"""

from __future__ import annotations

import gzip
import json
import shutil
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from experiments.harness import RESULTS, Benchmark, header, judged, machine_info, measures_table, verdict, write_results
from l3mp.operations.paging import to_lines
from sim import HomeSpec, generate_home
from sim.home import Home

TARGET_FIRST_RENDER_S = 3.0  # at 10,000 entities, on this 2-core machine's software-rendered Chromium
TARGET_FLOOR_VIEW_S = 3.0  # a 50,000-entity building: its outline, then one floor opened
TARGET_PAYLOAD_BYTES = 1_000_000


@contextmanager
def serving(database: Path) -> Iterator[str]:
    """The service over the SQLite store ``database``, under uvicorn on a free 127.0.0.1 port; its base URL."""
    import uvicorn

    from l3mp.service import create_app
    from l3mp.settings import Settings

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(create_app(Settings(sqlite_path=database)), log_level="warning", access_log=False)
    config.timeout_graceful_shutdown = 2
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise SystemExit("the service did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def seed(client: httpx.Client, home: Home, name: str) -> tuple[str, int]:
    """A memory holding ``home``, streamed in one request (written in verified pages); its name and size."""
    client.post("/v1/memories", json={"name": name, "domain": "household"}).raise_for_status()
    body = "".join(to_lines(home.entities, sorted(home.facts, key=str))).encode()
    client.post(f"/v1/memories/{name}/entities.jsonl", content=body, timeout=1_800).raise_for_status()
    return name, len(client.get(f"/v1/memories/{name}/entities").json())


def home_of(entities: int) -> Home:
    return generate_home(HomeSpec() if entities == 382 else HomeSpec.scaled(entities))


def browser_figures(url: str, memory: str, loads: int, open_part: str | None = None) -> dict[str, Any]:
    """Medians over fresh page loads: the first render, the page ready, a search filter, and with
    ``open_part`` ("floor:F" or "room:R") the time to open it after the first render."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(executable).exists():
        raise SystemExit("Chromium is missing: `make browser` installs Debian's chromium")
    first, ready, search, opened, drawn_open = [], [], [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        for _ in range(loads):
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{url}/#memory={memory}")
            page.wait_for_selector("body[data-ready='1']", timeout=600_000)
            metrics = page.evaluate("window.l3mpDashboard.metrics")
            drawn = page.evaluate("window.l3mpDashboard.cy.nodes().length")
            first.append(metrics["firstRender"] / 1000)
            ready.append(metrics["sinceNavigation"] / 1000)
            search.append(
                page.evaluate(
                    """() => { const g = window.l3mpDashboard.graph; const t = performance.now();
                    g.setFilter('text', 'cup'); const d = performance.now() - t; g.setFilter('text', ''); return d; }"""
                )
                / 1000
            )
            if open_part is not None:
                opened.append(page.evaluate("(key) => window.l3mpDashboard.open(key)", open_part) / 1000)
                drawn_open.append(page.evaluate("window.l3mpDashboard.cy.nodes('.entity').length"))
            page.close()
        browser.close()
    figures: dict[str, Any] = {
        "drawn_nodes": drawn,
        "first_render_changed_s": first[0],  # the first after a change: the server brings its index up to date
        "first_render_s": statistics.median(first),
        "first_render_all_s": first,
        "ready_s": statistics.median(ready),
        "search_filter_s": statistics.median(search),
    }
    if open_part is not None:
        figures |= {"opened": open_part, "open_s": statistics.median(opened), "open_all_s": opened}
        figures["drawn_after_open"] = drawn_open[-1]
    return figures


def measure(home: Home, name: str, loads: int, folder: Path) -> dict[str, Any]:
    """Seed ``home``, time the route the page loads first (cold, then warm), change the memory once
    (so the page's first load finds a new version, as after any update), then the page."""
    with serving(folder / "dash.db") as url, httpx.Client(base_url=url, timeout=600) as client:
        start = time.perf_counter()
        memory, count = seed(client, home, name)
        seeded = time.perf_counter() - start
        row = next(r for r in client.get("/dashboard/api/memories").json() if r["name"] == memory)
        route = f"/dashboard/api/memories/{memory}/{'graph' if row['detail'] == 'full' else 'outline'}"
        server = []
        for _ in range(5):  # the first reads and indexes the state; the next find it indexed
            start = time.perf_counter()
            payload = client.get(route).content
            server.append(time.perf_counter() - start)
        annex = b'{"entity": {"name": "bench_annex", "type": "room", "label": "annex"}}\n'
        client.post(f"/v1/memories/{memory}/entities.jsonl", content=annex).raise_for_status()
        figures = browser_figures(url, memory, loads, _part_to_open(json.loads(payload), row["detail"]))
    return {
        "entities": count,
        "facts": row["facts"],
        "detail": row["detail"],
        "seed_s": seeded,
        "payload_bytes": len(payload),
        "payload_gzip_bytes": len(gzip.compress(payload)),
        "route_cold_s": server[0],
        "graph_route_s": statistics.median(server[1:]),
        **figures,
    }


def _part_to_open(first: dict[str, Any], detail: str) -> str | None:
    """What a person opens first in an outline: the fullest floor of a building, else the fullest room."""
    if detail == "full":
        return None
    if len(first["floors"]) > 1:
        return "floor:" + str(max(first["floors"], key=lambda f: f["entities"])["name"])
    rooms = first["rooms"]
    return "room:" + str(max(zip(rooms["entities"], rooms["name"], strict=True))[1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument(
        "--entities", default="382,2000,10000", help="home sizes, comma-separated (382 = the paper's home)"
    )
    parser.add_argument("--building", type=int, default=0, help="also a multi-floor building of this many entities")
    parser.add_argument("--loads", type=int, default=3, help="fresh page loads per size (the median is reported)")
    args = parser.parse_args(argv)
    homes = [(f"home_{n}", home_of(n)) for n in (int(s) for s in args.entities.split(",") if s)]
    if args.building:
        homes.append((f"building_{args.building}", generate_home(HomeSpec.building(args.building, 0))))
    runs = []
    for name, home in homes:
        with tempfile.TemporaryDirectory(prefix="l3mp-dashboard-bench-") as tmp:
            runs.append({"memory": name, **measure(home, name, args.loads, Path(tmp))})
    targets = _targets(runs)
    import playwright

    machine = machine_info(playwright=getattr(playwright, "__version__", "?"), chromium=_chromium_version())
    write_results(args.out, {**header("dashboard", args, machine), "runs": runs, "targets": targets})
    console = Console()
    for run in runs:
        console.print(measures_table(f"dashboard: {run['memory']}, {run['entities']} entities", _rows(run)))
    for label, target in targets.items():
        console.print(f"{label}: {verdict(target)}")
    return 0


def _targets(runs: list[dict[str, Any]]) -> dict[str, Any]:
    homes = [r for r in runs if r["memory"].startswith("home_")]
    targets: dict[str, Any] = {}
    if homes:
        largest = homes[-1]
        n = f"{largest['entities']:,}"
        targets[f"first render at {n} entities, s"] = judged(
            f"<= {TARGET_FIRST_RENDER_S}", largest["first_render_s"], largest["first_render_s"] <= TARGET_FIRST_RENDER_S
        )
        targets[f"first payload at {n} entities, bytes"] = judged(
            f"<= {TARGET_PAYLOAD_BYTES:,}", largest["payload_bytes"], largest["payload_bytes"] <= TARGET_PAYLOAD_BYTES
        )
    for run in runs:
        if run["memory"].startswith("building_") and "open_s" in run:
            view = run["first_render_s"] + run["open_s"]
            run["floor_view_s"] = view
            targets[f"floor view of a {run['entities']:,}-entity building (outline + one floor), s"] = judged(
                f"<= {TARGET_FLOOR_VIEW_S}", view, view <= TARGET_FLOOR_VIEW_S
            )
    return targets


def _rows(run: dict[str, Any]) -> list[tuple[str, str]]:
    first = "graph" if run["detail"] == "full" else "outline"
    rows = [
        ("facts", f"{run['facts']:,}"),
        ("seeded over REST (one stream, verified pages) s", f"{run['seed_s']:.1f}"),
        (
            f"first payload ({first})",
            f"{run['payload_bytes'] / 1000:,.0f} kB ({run['payload_gzip_bytes'] / 1000:,.0f} kB gzipped)",
        ),
        (f"{first} route (server) s, cold / warm", f"{run['route_cold_s']:.3f} / {run['graph_route_s']:.3f}"),
        ("first render s (fetch + layout + draw), median", f"{run['first_render_s']:.2f}"),
        ("first render s, first load after a change", f"{run['first_render_changed_s']:.2f}"),
        ("page ready from navigation s", f"{run['ready_s']:.2f}"),
        ("search filter s", f"{run['search_filter_s']:.3f}"),
        ("nodes drawn first", f"{run['drawn_nodes']:,}"),
    ]
    if "open_s" in run:
        rows += [
            (f"open {run['opened']} s (fetch + layout + draw)", f"{run['open_s']:.2f}"),
            ("entities drawn after opening", f"{run['drawn_after_open']:,}"),
        ]
    if "floor_view_s" in run:
        rows.append(("floor view s (first render + open)", f"{run['floor_view_s']:.2f}"))
    return rows


def _chromium_version() -> str:
    import subprocess

    found = shutil.which("chromium")
    if not found:
        return "missing"
    done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return done.stdout.strip()


BENCHMARK = Benchmark(name="dashboard", results=RESULTS / "dashboard.json", main=main)
