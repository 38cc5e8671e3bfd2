"""The dashboard benchmark seeds a large home over REST in pages, each a verified update within the
service's body limit (one body of 10,000 entities was refused with 413)."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from experiments.dashboard import entity_pages
from l3mp.service import create_app
from l3mp.settings import Settings
from sim import HomeSpec, generate_home


def test_a_large_home_arrives_in_pages_each_a_verified_update_under_the_limit(tmp_path: Path) -> None:
    home = generate_home(HomeSpec.scaled(3_000))
    pages = entity_pages(home.entities, home.facts, size=500)
    assert len(pages) > 3
    assert sum(len(p["entities"]) for p in pages) == len(home.entities)
    assert sum(len(p["facts"]) for p in pages) == len(home.facts)
    settings = Settings(sqlite_path=tmp_path / "seed.db", retriever="full")
    with TestClient(create_app(settings)) as client:
        assert client.post("/v1/memories", json={"name": "big", "domain": "household"}).status_code == 201
        for page in pages:
            assert len(json.dumps(page)) < settings.max_request_bytes
            answer = client.post("/v1/memories/big/entities", json=page)
            assert answer.status_code == 200 and answer.json()["status"] == "applied", answer.text[:500]
        state = client.get("/v1/memories/big/state").json()
    assert sorted(state["facts"]) == sorted(str(f) for f in home.facts)
    assert {e.name for e in home.entities} <= {e["name"] for e in state["entities"]}
    assert state["unknown_location"] == []
