"""Bodies the streamed and document imports and the streamed entities cannot read or keep: each a 422
with a JSON body naming what is wrong, and the memories as they were (no 500, nothing half written)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import unique_name
from fastapi.testclient import TestClient
from service_support import Factory, client_factory, snapshot, surveyed

LONE = "\\ud800"  # as JSON text writes it: a lone surrogate, no Unicode text


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Factory]:
    yield from client_factory(tmp_path)


@pytest.fixture
def client(make_client: Factory) -> TestClient:
    return make_client()


def _refused(response: object, *words: str) -> None:
    assert response.status_code == 422, response.text[:500]  # type: ignore[attr-defined]
    error = response.json()["error"]  # type: ignore[attr-defined]
    assert error["code"] in {"invalid_value", "import_mismatch"}, error
    assert all(word in error["message"] for word in words), error["message"]


def _export(client: TestClient) -> list[str]:
    name = surveyed(client)
    moved = client.post(
        f"/v1/memories/{name}/deltas", json={"remove": ["(on mug_1 table_1)"], "add": ["(on mug_1 shelf_1)"]}
    )
    assert moved.status_code == 200, moved.text
    return client.get(f"/v1/memories/{name}/export.jsonl").text.splitlines()


def _changed(lines: list[str], index: int, old: str, new: str) -> bytes:
    assert old in lines[index], lines[index]
    changed = [*lines[:index], lines[index].replace(old, new, 1), *lines[index + 1 :]]
    return ("\n".join(changed) + "\n").encode()


def _import_refused(client: TestClient, body: bytes, *words: str) -> None:
    copy = unique_name("copy")
    _refused(client.post("/v1/memories/import.jsonl", params={"name": copy}, content=body), *words)
    assert client.get(f"/v1/memories/{copy}").status_code == 404


def _moved(lines: list[str]) -> int:
    """The index of the line of the applied move (the last update: the fast path reads it)."""
    assert '"input":""' in lines[-2] and '"source":"api"' in lines[-2], lines[-2]
    return len(lines) - 2


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ('"id":"', '"id":[1,2],"x":"', ("update id [1, 2]", "must be a string")),
        ('"id":"', '"id":{"a":1},"x":"', ("update id {'a': 1}", "must be a string")),
        ('"id":"', '"id":"","x":"', ("update id ''", "must not be empty")),
        ('"id":"', f'"id":"{LONE}', ("update id", "lone surrogate")),
        ('"input":""', f'"input":"mo{LONE}ved"', ("update input", "lone surrogate")),
        ('"meta":{}', '"meta":{"x":NaN}', ("update meta", "NaN or Infinity")),
        ('"meta":{}', '"meta":{"x":[Infinity]}', ("update meta", "NaN or Infinity")),
    ],
)
def test_an_update_line_that_could_not_be_kept_is_422(
    client: TestClient, old: str, new: str, words: tuple[str, ...]
) -> None:
    lines = _export(client)
    _import_refused(client, _changed(lines, _moved(lines), old, new), *words)


def test_an_end_line_that_holds_no_object_is_422(client: TestClient) -> None:
    lines = _export(client)
    body = ("\n".join([*lines[:-1], '{"end":[1]}']) + "\n").encode()
    _import_refused(client, body, f"end line {len(lines)}", "must hold an object")


@pytest.mark.parametrize("how", ["not utf-8", "deep line", "gzip cut short", "gzip magic only", "gzip corrupted"])
def test_an_import_stream_that_cannot_be_read_is_422(client: TestClient, how: str) -> None:
    lines = _export(client)
    body = ("\n".join(lines) + "\n").encode()
    packed = gzip.compress(body)
    sent = {
        "not utf-8": body.replace(b'"input":""', b'"input":"\xff"'),
        "deep line": ("\n".join([*lines[:-1], "[" * 100_000 + "]" * 100_000, lines[-1]]) + "\n").encode(),
        "gzip cut short": packed[: len(packed) // 2],
        "gzip magic only": b"\x1f\x8b",
        "gzip corrupted": packed[:10] + b"\x00" * 20 + packed[30:],
    }[how]
    words = ("nested too deeply",) if how == "deep line" else ("not UTF-8 JSON Lines",)
    _import_refused(client, sent, *words)


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [("history", 5, ("history", "must be an array")), ("facts", [5], ("fact 5", "must be a string"))],
)
def test_a_document_import_with_a_malformed_part_is_422(
    client: TestClient, key: str, value: object, words: tuple[str, ...]
) -> None:
    name = surveyed(client)
    document = client.get(f"/v1/memories/{name}/export").json()
    document[key] = value
    copy = unique_name("copy")
    _refused(client.post("/v1/memories/import", params={"name": copy}, json=document), *words)
    assert client.get(f"/v1/memories/{copy}").status_code == 404


PLATE = b'{"fact":"(on plate_1 table_1)"}\n'


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            b'{"entity":{"name":"plate_1","type":"dish","label":"x\\ud800"}}\n' + PLATE,
            ("entities line 1", "label: Input should be a valid string, unable to parse raw data as a unicode string"),
        ),
        (b'{"entity":{"name":"plate_1","type":"dish","attrs":{"k\\udc00":"v"}}}\n' + PLATE, ("surrogate",)),
        (b'{"entity":{"name":"plate_1","type":"dish","attrs":{"k":"v\\udc00"}}}\n' + PLATE, ("surrogate",)),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", ("entities line 1", "nested too deeply")),
        (b"gzip cut short", ("near line 1", "not UTF-8 JSON Lines")),
        (b"gzip corrupted", ("near line 1", "not UTF-8 JSON Lines")),
    ],
)
def test_streamed_entities_that_cannot_be_read_or_kept_are_422(
    client: TestClient, body: bytes, words: tuple[str, ...]
) -> None:
    name = surveyed(client)
    if body.startswith(b"gzip"):
        packed = gzip.compress(b'{"entity":{"name":"plate_1","type":"dish"}}\n' + PLATE)
        body = packed[: len(packed) // 2] if body.endswith(b"short") else packed[:10] + b"\x00" * 20 + packed[30:]
    before = snapshot(client, name)
    _refused(client.post(f"/v1/memories/{name}/entities.jsonl", content=body), *words)
    assert snapshot(client, name) == before
    exported = client.get(f"/v1/memories/{name}/export")
    assert exported.status_code == 200 and "plate_1" not in json.dumps(exported.json())
