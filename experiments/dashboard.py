"""Dashboard benchmark: the size of the graph payload the page loads first, the route's server time, and
the first render in a real browser (Debian's Chromium through Playwright), at the paper's scale and at
2,000 entities; plus a search filter's time, to show the page stays usable.

The service runs under uvicorn on 127.0.0.1 over a SQLite store in a temp folder; each home is posted
through REST. "first render" is measured in the page, from asking for the graph to the second frame
after Cytoscape drew it (fetch + layout + draw); "ready" is from navigation start.

    python -m experiments dashboard [--entities 382,2000] [--loads 3]
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

TARGET_FIRST_RENDER_S = 3.0  # at 2,000 entities, on this 2-core machine's software-rendered Chromium
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


def seed(client: httpx.Client, entities: int) -> tuple[str, int]:
    """A memory holding a generated home of about ``entities`` entities; its name and entity count."""
    home = generate_home(HomeSpec() if entities == 382 else HomeSpec.scaled(entities))
    name = f"home_{entities}"
    client.post("/v1/memories", json={"name": name, "domain": "household"}).raise_for_status()
    body = "".join(to_lines(home.entities, sorted(home.facts, key=str))).encode()
    client.post("/v1/memories/entities.jsonl", params={"memory": name}, content=body).raise_for_status()
    return name, len(client.get(f"/v1/memories/{name}/entities").json())


def browser_figures(url: str, memory: str, loads: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(executable).exists():
        raise SystemExit("Chromium is missing: `make browser` installs Debian's chromium")
    first, ready, search = [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        for _ in range(loads):
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{url}/#memory={memory}")
            page.wait_for_selector("body[data-ready='1']", timeout=120_000)
            metrics = page.evaluate("window.l3mpDashboard.metrics")
            drawn = page.evaluate("window.l3mpDashboard.cy.nodes('.entity').length")
            first.append(metrics["firstRender"] / 1000)
            ready.append(metrics["sinceNavigation"] / 1000)
            search.append(
                page.evaluate(
                    """() => { const g = window.l3mpDashboard.graph; const t = performance.now();
                    g.setFilter('text', 'cup'); const d = performance.now() - t; g.setFilter('text', ''); return d; }"""
                )
                / 1000
            )
            page.close()
        browser.close()
    return {
        "drawn_entities": drawn,
        "first_render_s": statistics.median(first),
        "first_render_all_s": first,
        "ready_s": statistics.median(ready),
        "search_filter_s": statistics.median(search),
    }


def measure(entities: int, loads: int, folder: Path) -> dict[str, Any]:
    with serving(folder / "dash.db") as url, httpx.Client(base_url=url, timeout=120) as client:
        memory, count = seed(client, entities)
        server = []
        for _ in range(5):
            start = time.perf_counter()
            payload = client.get(f"/dashboard/api/memories/{memory}/graph").content
            server.append(time.perf_counter() - start)
        figures = browser_figures(url, memory, loads)
    return {
        "entities": count,
        "facts": len(json.loads(payload)["facts"]["predicate"]),
        "payload_bytes": len(payload),
        "payload_gzip_bytes": len(gzip.compress(payload)),
        "graph_route_s": statistics.median(server),
        **figures,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    parser.add_argument("--entities", default="382,2000", help="home sizes, comma-separated (382 = the paper's home)")
    parser.add_argument("--loads", type=int, default=3, help="fresh page loads per size (the median is reported)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.entities.split(",")]
    runs = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="l3mp-dashboard-bench-") as tmp:
            runs.append(measure(size, args.loads, Path(tmp)))
    largest = runs[-1]
    targets = {
        f"first render at {largest['entities']} entities, s": judged(
            f"<= {TARGET_FIRST_RENDER_S}", largest["first_render_s"], largest["first_render_s"] <= TARGET_FIRST_RENDER_S
        ),
        f"payload at {largest['entities']} entities, bytes": judged(
            f"<= {TARGET_PAYLOAD_BYTES:,}", largest["payload_bytes"], largest["payload_bytes"] <= TARGET_PAYLOAD_BYTES
        ),
    }
    import playwright

    machine = machine_info(playwright=getattr(playwright, "__version__", "?"), chromium=_chromium_version())
    write_results(args.out, {**header("dashboard", args, machine), "runs": runs, "targets": targets})
    console = Console()
    for run in runs:
        console.print(
            measures_table(
                f"dashboard: {run['entities']} entities, {run['facts']} facts",
                [
                    (
                        "graph payload",
                        f"{run['payload_bytes'] / 1000:,.0f} kB ({run['payload_gzip_bytes'] / 1000:,.0f} kB gzipped)",
                    ),
                    ("graph route (server) s", f"{run['graph_route_s']:.3f}"),
                    ("first render s (fetch + layout + draw)", f"{run['first_render_s']:.2f}"),
                    ("page ready from navigation s", f"{run['ready_s']:.2f}"),
                    ("search filter s", f"{run['search_filter_s']:.3f}"),
                    ("entities drawn", f"{run['drawn_entities']:,}"),
                ],
            )
        )
    for label, target in targets.items():
        console.print(f"{label}: {verdict(target)}")
    return 0


def _chromium_version() -> str:
    import subprocess

    found = shutil.which("chromium")
    if not found:
        return "missing"
    done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return done.stdout.strip()


BENCHMARK = Benchmark(name="dashboard", results=RESULTS / "dashboard.json", main=main)
