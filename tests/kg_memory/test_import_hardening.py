"""Hardening of imports and recorded data on both stores, and
opt-in compaction."""

from __future__ import annotations

import gzip
import io
import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from conftest import unique_name

from kg_memory import (
    Delta,
    Entity,
    Fact,
    GraphStore,
    ImportMismatch,
    InvalidName,
    InvalidValue,
    KgMemoryError,
    UpdateSource,
    UpdateStatus,
    WorldMemory,
)
from kg_memory.history import HistoryCompacted
from kg_memory.jsonl_stream import text_lines

F = Fact.parse


def _lines(home: WorldMemory) -> list[dict[str, Any]]:
    return [json.loads(line) for line in home.export_lines()]


def _refused(store: GraphStore, lines: list[dict[str, Any]], match: str) -> ImportMismatch:
    name = unique_name("forged")
    text = io.StringIO("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ImportMismatch, match=match) as caught:
        WorldMemory.import_lines(store, text, name=name)
    assert name not in {m.name for m in store.list_memories()}, "a refused import left a memory behind"
    return caught.value


def _updates(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The exported updates after the domain's (the first, which creates the constants)."""
    return [line["update"] for line in lines if "update" in line and line["update"]["source"] != "domain"]


def _applied(home: WorldMemory, delta: Delta, source: UpdateSource = UpdateSource.API) -> str:
    update = home.apply(delta, source=source)
    assert update.status is UpdateStatus.APPLIED, update.issues
    return update.id


# -- case 8: the history creates an entity with another type than the entity list ---------------


def test_import_whose_history_retypes_an_entity_is_refused(store: GraphStore, home: WorldMemory) -> None:
    lines = _lines(home)
    survey = _updates(lines)[0]
    for entity in survey["delta"]["new_entities"]:
        if entity["name"] == "mug_1":
            entity["type"] = "light"
    error = _refused(store, lines, "creates mug_1 as a light, but the entity list says dish")
    assert survey["id"] in str(error)


# -- case 9: duplicate update ids --------------------------------------------------------------


def test_import_with_a_duplicate_update_id_is_a_clear_error(store: GraphStore, home: WorldMemory) -> None:
    first = _applied(home, Delta(add={F("(light_on lamp_1)")}))
    _applied(home, Delta(remove={F("(light_on lamp_1)")}))
    lines = _lines(home)
    _updates(lines)[2]["id"] = first
    _refused(store, lines, f"{first}.*repeated")


def test_a_refused_batch_is_named_before_a_later_offender(
    store: GraphStore, home: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches are written while the next is verified: a duplicate id the store refuses in an
    earlier batch is still the error named, not a later update's forged time."""
    from kg_memory import _replay

    monkeypatch.setattr(_replay, "BATCH", 2)
    for _ in range(2):
        _applied(home, Delta(add={F("(light_on lamp_1)")}))
        _applied(home, Delta(remove={F("(light_on lamp_1)")}))
    lines = _lines(home)
    updates = _updates(lines)
    updates[2]["id"] = updates[1]["id"]  # in the second batch, repeating the first batch's
    updates[4]["time"] = (datetime.fromisoformat(updates[4]["time"]) + timedelta(days=365 * 70)).isoformat()
    _refused(store, lines, f"{updates[1]['id']}.*repeated")


def test_neo4j_refuses_two_updates_with_one_id(store: GraphStore, home: WorldMemory) -> None:
    """The store itself holds ids unique (a uniqueness constraint in Neo4j), whatever the caller."""
    from dataclasses import replace

    from kg_memory import NotApplicable

    original = home.history()[0]
    clash = replace(home.reject(source=UpdateSource.API, input="x", issues=original.issues or _an_issue()), seq=0)
    with pytest.raises(NotApplicable):
        store.record(replace(clash, id=original.id))
    assert [u.id for u in home.history()].count(original.id) == 1


def _an_issue() -> tuple[Any, ...]:
    from kg_memory import Issue, IssueCode

    return (Issue(IssueCode.INVALID_INPUT, None, "test"),)


# -- case 10: forged histories ------------------------------------------------------------------


def test_import_of_an_nl_update_creating_an_entity_is_refused(store: GraphStore, home: WorldMemory) -> None:
    lines = _lines(home)
    _updates(lines)[0]["source"] = "nl"
    _refused(store, lines, "only perception adds entities")


def test_import_of_an_nl_update_changing_a_static_fact_is_refused(store: GraphStore, home: WorldMemory) -> None:
    moved = Delta(remove={F("(in_room shelf_1 hall)")}, add={F("(in_room shelf_1 kitchen)")})
    _applied(home, moved, UpdateSource.SENSOR)
    lines = _lines(home)
    _updates(lines)[1]["source"] = "nl"
    _refused(store, lines, r"\(nl\)")


def test_import_with_an_item_in_two_places_midway_is_refused(store: GraphStore, home: WorldMemory) -> None:
    _applied(home, Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")}))
    _applied(home, Delta(remove={F("(on mug_1 shelf_1)")}, add={F("(on mug_1 sink_1)")}))
    lines = _lines(home)
    first, second = _updates(lines)[1:3]
    first["delta"]["remove"] = []  # mug on the table AND the shelf at version 2
    second["delta"]["remove"] = ["(on mug_1 shelf_1)", "(on mug_1 table_1)"]  # ends where it should
    error = _refused(store, lines, "only one place")
    assert first["id"] in str(error)


@pytest.mark.parametrize("when", ["future", "backwards"])
def test_import_with_forged_times_is_refused(store: GraphStore, home: WorldMemory, when: str) -> None:
    _applied(home, Delta(add={F("(light_on lamp_1)")}))
    lines = _lines(home)
    update = _updates(lines)[1]
    shift = timedelta(days=365 * 70) if when == "future" else -timedelta(days=1)
    update["time"] = (datetime.fromisoformat(update["time"]) + shift).isoformat()
    if when == "backwards":
        _refused(store, lines, "before the previous update")
    else:
        _refused(store, lines, "in the future")


# -- case 11: Infinity and NaN ------------------------------------------------------------------


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_attributes_are_refused(store: GraphStore, home: WorldMemory, value: float) -> None:
    with pytest.raises(InvalidValue, match="finite"):
        Entity("vase_1", "item", attrs={"weight": value})
    lines = _lines(home)
    text = "".join(json.dumps(line) + "\n" for line in lines).replace('"colour": "blue"', '"colour": Infinity')
    assert "Infinity" in text
    name = unique_name("nan")
    with pytest.raises(ImportMismatch, match="finite"):
        WorldMemory.import_lines(store, io.StringIO(text), name=name)
    assert name not in {m.name for m in store.list_memories()}


# -- lines no store or export could keep: refused where they are read ----------------------------

LONE = "mo\ud800ved"  # JSON's "\ud800": a Python str, but no UTF-8 text


@pytest.mark.parametrize("which", ["survey", "common"])  # Update.from_json, and the replay's fast path
@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("id", [1, 2], "update id"),
        ("id", {"a": 1}, "update id"),
        ("id", "", "update id '': must not be empty"),
        ("id", LONE, "surrogate"),
        ("input", LONE, "surrogate"),
        ("input", {"a": 1}, "update input"),
        ("meta", {"x": float("nan")}, "meta.*NaN or Infinity"),
        ("meta", {"x": [float("-inf")]}, "meta.*NaN or Infinity"),
        ("meta", json.loads('{"a": ' * 300 + "1" + "}" * 300), "meta.*nested at most"),
    ],
)
def test_an_update_no_store_or_export_could_keep_is_refused(
    store: GraphStore, home: WorldMemory, which: str, field: str, value: object, problem: str
) -> None:
    _applied(home, Delta(add={F("(light_on lamp_1)")}))
    lines = _lines(home)
    update = _updates(lines)[0 if which == "survey" else 1]
    update[field] = value
    error = _refused(store, lines, problem)
    assert f"line {lines.index({'update': update}) + 1}" in str(error)


@pytest.mark.parametrize("end", [[1], "done", 4, None])
def test_an_end_line_that_holds_no_object_is_refused(store: GraphStore, home: WorldMemory, end: object) -> None:
    lines = _lines(home)
    lines[-1] = {"end": end}
    _refused(store, lines, f"end line {len(lines)}: it must hold an object")


def _long_export(home: WorldMemory) -> bytes:
    """An export of many blocks (text is decoded, and gzip read, a block at a time)."""
    for _ in range(100):
        _applied(home, Delta(add={F("(light_on lamp_1)")}))
        _applied(home, Delta(remove={F("(light_on lamp_1)")}))
    body = "".join(home.export_lines()).encode()
    assert len(body) > 4 * 8192
    return body


def _unreadable(store: GraphStore, body: bytes, match: str) -> InvalidValue:
    name = unique_name("unreadable")
    with text_lines(io.BytesIO(body)) as lines, pytest.raises(InvalidValue, match=match) as caught:
        WorldMemory.import_lines(store, lines, name=name)
    assert name not in {m.name for m in store.list_memories()}, "a refused import left a memory behind"
    return caught.value


def _corrupted(packed: bytes) -> bytes:
    return packed[:10] + b"\x00" * 20 + packed[30:]


@pytest.mark.parametrize(
    ("how", "where"),
    [
        ("not utf-8", "near line [1-9][0-9]+"),  # late in the stream: after the import began
        ("gzip cut short", "near line [1-9][0-9]+"),
        ("gzip corrupted", "near line 1"),
        ("gzip magic only", "near line 1"),
        ("gzip of another method", "near line 1"),
    ],
)
def test_a_stream_that_cannot_be_read_is_an_invalid_value(
    store: GraphStore, home: WorldMemory, how: str, where: str
) -> None:
    body = _long_export(home)
    sent = {
        "not utf-8": body[: -len(body) // 4] + b"\xff" + body[-len(body) // 4 :],
        "gzip cut short": gzip.compress(body)[: -len(body) // 50],
        "gzip corrupted": _corrupted(gzip.compress(body)),
        "gzip magic only": b"\x1f\x8b",
        "gzip of another method": b"\x1f\x8b\x07" + bytes(20),
    }[how]
    error = _unreadable(store, sent, f"the stream {where}.*not UTF-8 JSON Lines, plain or gzipped")
    assert type(error.__cause__).__name__ in {"UnicodeDecodeError", "EOFError", "error", "BadGzipFile"}


def test_a_line_nested_too_deeply_is_an_invalid_value(store: GraphStore, home: WorldMemory) -> None:
    lines = _long_export(home).splitlines()
    lines.insert(-1, b"[" * 100_000 + b"]" * 100_000)  # before the end line: the import has begun
    _unreadable(store, b"\n".join(lines), f"line {len(lines) - 1}.*nested too deeply")


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("history", 5, "history.*must be an array, not a int"),
        ("history", "abc", "history.*must be an array, not a str"),
        ("entities", {"a": 1}, "entities.*must be an array, not a dict"),
        ("facts", 5, "facts.*must be an array"),
        ("facts", [5], "fact 5: must be a string"),
    ],
)
def test_a_malformed_document_is_refused(
    store: GraphStore, home: WorldMemory, key: str, value: object, problem: str
) -> None:
    data = json.loads(json.dumps(home.export()))
    data[key] = value
    _document_refused(store, data, problem)


def test_a_document_without_history_whose_facts_are_not_text_is_refused(store: GraphStore, home: WorldMemory) -> None:
    data = json.loads(json.dumps(home.export()))
    del data["history"]
    data["facts"] = [*data["facts"], 5]
    _document_refused(store, data, "fact 5: must be a string")


def test_a_document_whose_entity_text_is_not_unicode_is_refused(store: GraphStore, home: WorldMemory) -> None:
    text = json.dumps(home.export())
    assert '"colour": "blue"' in text
    _document_refused(store, json.loads(text.replace('"colour": "blue"', '"col\\udc00our": "blue"')), "surrogate")
    _document_refused(store, json.loads(text.replace('"colour": "blue"', '"colour": "bl\\ud800ue"')), "surrogate")


def _document_refused(store: GraphStore, data: dict[str, Any], problem: str) -> KgMemoryError:
    name = unique_name("document")
    with pytest.raises((InvalidValue, ImportMismatch), match=problem) as caught:
        WorldMemory.import_(store, data, name=name)
    assert name not in {m.name for m in store.list_memories()}, "a refused import left a memory behind"
    return caught.value


# -- case 12: an oversize rejected delta -----------------------------------------------------------


def test_a_rejected_oversize_delta_is_recorded_truncated_and_the_export_reimports(
    store: GraphStore, home: WorldMemory
) -> None:
    huge = Delta(add={F(f"(on mug_1 shelf_{n})") for n in range(20_000)})  # about 0.5 MB, all unknown
    rejected = home.apply(huge, source=UpdateSource.NL, input="x" * 200_000)
    assert rejected.status is UpdateStatus.REJECTED
    cut = rejected.meta["truncated"]
    assert cut["delta"]["changes"] == 20_000 and cut["delta"]["kept"] < 2_000 and len(cut["delta"]["sha256"]) == 64
    assert cut["input"]["chars"] == 200_000 and len(rejected.input) < 100_000
    assert len(rejected.issues) <= 100 and cut["issues"]["count"] > 100
    stored = store.get_update(home.name, rejected.id)
    assert len(json.dumps(stored.to_json())) < 200_000
    copy = WorldMemory.import_lines(store, home.export_lines(), name=unique_name("copy"))
    assert copy.get_update(rejected.id).meta["truncated"] == cut if hasattr(copy, "get_update") else True
    assert len(copy.history()) == len(home.history())


# -- case 18: reverting twice ------------------------------------------------------------------


def test_reverting_an_update_a_second_time_is_refused(home: WorldMemory) -> None:
    moved = _applied(home, Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")}))
    undo = home.revert(moved)
    assert undo.status is UpdateStatus.APPLIED
    _applied(home, Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")}))  # restored by hand
    with pytest.raises(InvalidValue, match=f"already reverted by update {undo.id}"):
        home.revert(moved)
    assert F("(on mug_1 shelf_1)") in home.facts()


# -- compaction ---------------------------------------------------------------------


def test_compaction_is_opt_in_recorded_and_guards_the_past(store: GraphStore, home: WorldMemory) -> None:
    for place in ("shelf_1", "sink_1", "table_1", "shelf_1"):
        (now,) = home.facts("on", "mug_1")
        _applied(home, Delta(remove={now}, add={F(f"(on mug_1 {place})")}))
    assert store.horizon(home.name) is None  # never by default
    at_three = home.state_at(3).facts
    note = home.compact(3)
    assert note.status is UpdateStatus.NOOP and note.meta["compaction"]["horizon"] == 3
    assert note.meta["compaction"]["updates_removed"] == 4  # the domain's (version 0) and versions 1..3
    with pytest.raises(HistoryCompacted, match="compacted") as caught:
        home.state_at(2)
    assert caught.value.horizon == 3
    assert home.state_at(3).facts == at_three and home.state_at(5).facts == home.facts()
    assert [u.version for u in home.history()] == [4, 5, 5]
    summary = store.horizon(home.name)
    assert summary is not None and summary[2]["mug_1"][2] == 3  # three updates touched the mug
    spans = home.fact_intervals(F("(on mug_1 table_1)"))
    assert [(s.start_version, s.end_version) for s in spans] == [(0, 5)] or spans[-1].start_version == 4
    copy = WorldMemory.import_lines(store, home.export_lines(), name=unique_name("compacted"))
    assert copy.facts() == home.facts() and copy.state_at(5).facts == home.facts()


@pytest.mark.parametrize("version", [7, 0, "2", True, 2.0])
def test_an_end_line_whose_version_the_history_does_not_give_is_refused(
    store: GraphStore, home: WorldMemory, version: object
) -> None:
    _applied(home, Delta(add={F("(light_on lamp_1)")}))  # the history gives version 2
    lines = _lines(home)
    lines[-1]["end"]["version"] = version
    _refused(store, lines, f"end line: it says version {version!r}; the history gives version 2")


def test_a_document_says_its_version_as_a_number_or_not_at_all(store: GraphStore, home: WorldMemory) -> None:
    data = json.loads(json.dumps(home.export()))
    data["memory"]["version"] = "x"
    _document_refused(store, data, "it says version 'x'; the history gives version 1")
    del data["memory"]["version"]  # an old export that does not say: the history tells
    assert WorldMemory.import_(store, data, name=unique_name("unsaid")).version == 1


@pytest.mark.parametrize("name", ["", "  "])
def test_an_import_under_an_empty_name_is_refused(store: GraphStore, home: WorldMemory, name: str) -> None:
    before = {m.name for m in store.list_memories()}
    with pytest.raises(InvalidName):
        WorldMemory.import_lines(store, home.export_lines(), name=name)
    assert {m.name for m in store.list_memories()} == before
