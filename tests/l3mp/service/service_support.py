"""Helpers for the service tests: a client over a fresh app per test (SQLite in tmp_path by default).

Not a conftest: the root conftest is imported by name (``from conftest import ...``) elsewhere."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from conftest import unique_name
from fastapi.testclient import TestClient

from l3mp.examples import survey_json
from l3mp.llm import LanguageModel
from l3mp.service import create_app
from l3mp.settings import Settings

Factory = Callable[..., TestClient]

SURVEY = survey_json()


def client_factory(tmp_path: Path) -> Iterator[Factory]:
    """For a fixture: ``make(model=..., **settings)`` gives a started client, closed afterwards."""
    clients: list[TestClient] = []

    def make(model: LanguageModel | None = None, **overrides: Any) -> TestClient:
        fields: dict[str, Any] = {"sqlite_path": tmp_path / "service.db", "retriever": "full", **overrides}
        client = TestClient(create_app(Settings(**fields), model=model))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def surveyed(client: TestClient, headers: dict[str, str] | None = None) -> str:
    """A new memory in ``example_home`` with the surveyed home (version 1); its name."""
    name = unique_name("svc")
    created = client.post("/v1/memories", json={"name": name, "domain": "example_home"}, headers=headers)
    assert created.status_code == 201, created.text
    added = client.post(f"/v1/memories/{name}/entities", json=SURVEY, headers=headers)
    assert added.status_code == 200, added.text
    return name


def snapshot(client: TestClient, name: str, headers: dict[str, str] | None = None) -> tuple[int, list[str], int]:
    """Version, facts and history length: what a refused request must leave as it was."""
    facts = client.get(f"/v1/memories/{name}/facts", headers=headers).json()
    updates = client.get(f"/v1/memories/{name}/updates", params={"limit": 1000}, headers=headers).json()
    return facts["version"], facts["facts"], len(updates["updates"])
