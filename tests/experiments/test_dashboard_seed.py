"""A large home seeds over REST in pages of whole rooms, each a verified update within the service's
body limit (one body of 10,000 entities was refused with 413); the benchmark streams it in one request."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from l3mp.operations.paging import entity_pages
from l3mp.service import create_app
from l3mp.settings import Settings
from sim import HomeSpec, generate_home


def test_a_large_home_arrives_in_pages_each_a_verified_update_under_the_limit(tmp_path: Path) -> None:
    home = generate_home(HomeSpec.scaled(3_000))
    pages = entity_pages(home.entities, home.facts, size=500)
    assert len(pages) > 3
    assert sum(len(p.entities) for p in pages) == len(home.entities)
    assert sum(len(p.facts) for p in pages) == len(home.facts)
    settings = Settings(sqlite_path=tmp_path / "seed.db", retriever="full")
    with TestClient(create_app(settings)) as client:
        assert client.post("/v1/memories", json={"name": "big", "domain": "household"}).status_code == 201
        for page in pages:
            body = page.to_json()
            assert len(json.dumps(body)) < settings.max_request_bytes
            answer = client.post("/v1/memories/big/entities", json=body)
            assert answer.status_code == 200 and answer.json()["status"] == "applied", answer.text[:500]
        state = client.get("/v1/memories/big/state").json()
    assert sorted(state["facts"]) == sorted(str(f) for f in home.facts)
    assert {e.name for e in home.entities} <= {e["name"] for e in state["entities"]}
    assert state["unknown_location"] == []
