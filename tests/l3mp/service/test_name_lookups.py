"""REST and the CLI normalise names as creation does and share one
length limit (the CLI took 300 characters while REST capped names at 200)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import unique_name
from service_support import Factory, client_factory, surveyed

from kg_memory.model import MAX_NAME_LENGTH
from l3mp.cli import main

KELVIN = "\u212a"


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Factory]:
    yield from client_factory(tmp_path)


def test_rest_finds_a_memory_under_any_spelling_it_was_created_as(make_client: Factory) -> None:
    client = make_client()
    name = surveyed(client)
    shouted = f" {name.upper()} "
    clash = client.post("/v1/memories", json={"name": shouted, "domain": "example_home"})
    assert clash.status_code == 409
    for spelling in (name.upper(), quote(shouted)):
        got = client.get(f"/v1/memories/{spelling}")
        assert got.status_code == 200 and got.json()["name"] == name, (spelling, got.text)
    facts = client.get(f"/v1/memories/{name.upper()}/facts", params={"entity": "MUG_1"}).json()
    assert facts["facts"] == ["(on mug_1 table_1)"]
    kitchen = client.get(f"/v1/memories/{name}/facts", params={"entity": f"{KELVIN}ITCHEN"}).json()["facts"]
    assert "(in_room table_1 kitchen)" in kitchen
    moved = client.post(f"/v1/memories/{name.upper()}/deltas", json={"remove": ["(on mug_1 table_1)"]})
    assert moved.status_code == 422  # found and verified (an item must be somewhere), not a 404
    history = client.get(f"/v1/memories/{name.upper()}/history", params={"entity": "MUG_1"}).json()
    assert history["updates"] and client.get(f"/v1/memories/{name}x").status_code == 404


def test_rest_and_cli_share_one_length_limit(
    make_client: Factory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = make_client()
    longest = unique_name("n").ljust(MAX_NAME_LENGTH, "x")
    too_long = longest + "x"
    assert client.post("/v1/memories", json={"name": longest, "domain": "example_home"}).status_code == 201
    refused = client.post("/v1/memories", json={"name": too_long, "domain": "example_home"})
    assert refused.status_code == 422
    db = tmp_path / "cli.db"
    assert main(["--db", str(db), "init", longest, "--domain", "example_home"]) == 0
    assert "created memory" in capsys.readouterr().out
    assert main(["--db", str(db), "init", too_long, "--domain", "example_home"]) == 1
    out = " ".join(capsys.readouterr().err.split())
    assert "error:" in out and f"at most {MAX_NAME_LENGTH} characters" in out
    assert main(["--db", str(db), "state", f" {longest.upper()} ", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 0
