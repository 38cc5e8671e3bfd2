"""The real service under uvicorn on 127.0.0.1 (a SQLite store in a temp folder) and Debian's Chromium
driven by Playwright, for the dashboard's browser tests and its benchmark.

Playwright's own browser download is not reachable here, so it launches the system browser. Outside CI a
missing Chromium skips the browser tests with the reason; in CI (``CI=true``) it fails them.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from conftest import unique_name

from kg_memory import Entity, Fact
from l3mp.service import create_app
from l3mp.settings import Settings

WRITE_KEY = "dash-write-secret"
READ_KEY = "dash-read-secret"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def chromium() -> str | None:
    found = next((p for p in CHROMIUM_CANDIDATES if Path(p).exists()), None)
    return found or shutil.which("chromium")


def require_chromium() -> str:
    path = chromium()
    if path:
        return path
    message = "Chromium is not installed (`make test` installs Debian's chromium where apt-get is available)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " — in CI the browser tests must run, not skip", pytrace=False)
    pytest.skip(message)


class LiveService:
    """``create_app(settings)`` served by uvicorn in a thread, on a socket bound before it starts."""

    def __init__(self, settings: Settings, *, root_path: str = "") -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        config = uvicorn.Config(
            create_app(settings), log_level="warning", access_log=False, lifespan="on", root_path=root_path
        )
        config.timeout_graceful_shutdown = 2
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def start(self) -> LiveService:
        self.thread.start()
        deadline = time.monotonic() + 120
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the service did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()

    def client(self, key: str | None = WRITE_KEY) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"X-API-Key": key} if key else {}, timeout=30)


@contextmanager
def live_service(tmp: Path, *, root_path: str = "", **overrides: Any) -> Iterator[LiveService]:
    fields: dict[str, Any] = {"sqlite_path": tmp / "dashboard.db", "retriever": "full", **overrides}
    service = LiveService(Settings(**fields), root_path=root_path).start()
    try:
        yield service
    finally:
        service.stop()


def seed(
    client: httpx.Client,
    entities: tuple[Entity, ...],
    facts: frozenset[Fact] | tuple[Fact, ...],
    domain: str,
    input: str = "survey",
    prefix: str = "dash",
) -> str:
    """A new memory holding ``entities`` and ``facts`` (one sensor update, version 1); its name."""
    name = unique_name(prefix)
    created = client.post("/v1/memories", json={"name": name, "domain": domain})
    assert created.status_code == 201, created.text
    body = {"entities": [e.to_json() for e in entities], "facts": sorted(str(f) for f in facts), "input": input}
    added = client.post(f"/v1/memories/{name}/entities", json=body)
    assert added.status_code == 200, added.text
    return name


# -- fixtures (imported by the test modules: a conftest here would shadow the root one) --


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """Writes need the key; reads are open (the dashboard is read-only without a key)."""
    with live_service(tmp_path_factory.mktemp("open"), api_key=WRITE_KEY) as live:
        yield live


@pytest.fixture(scope="module")
def keyed_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """Reads need the read-only key (or the write key); writes need the write key."""
    with live_service(tmp_path_factory.mktemp("keyed"), api_key=WRITE_KEY, read_only_api_key=READ_KEY) as live:
        yield live


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, for one module at a time: Playwright's sync API keeps an event loop running on this
    thread while it lives, and the asyncio tests a worker runs after the browser's need it gone."""
    executable = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


class Console:
    def __init__(self) -> None:
        self.errors: list[str] = []


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def page(browser: Any, console: Console) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1600, "height": 1000}, device_scale_factor=1)
    opened = context.new_page()
    opened.on("console", lambda m: console.errors.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda e: console.errors.append(f"uncaught: {e}"))
    yield opened
    context.close()


@pytest.fixture(scope="session")
def figures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests' screenshots go: a temporary folder (the documentation's pictures are made by
    `make figures`, never by the tests)."""
    return tmp_path_factory.mktemp("figures")
