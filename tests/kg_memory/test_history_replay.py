"""A client replaying a memory's history gets its whole state, the domain's constants included, on
both stores: the first update is the domain's (created with the memory, at version 0), and exports
and imports carry it once."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from conftest import unique_name

from kg_memory import (
    Delta,
    Entity,
    Fact,
    GraphStore,
    ImportMismatch,
    InvalidValue,
    UpdateSource,
    UpdateStatus,
    WorldMemory,
)

F = Fact.parse


def _replayed(history: list[dict[str, Any]]) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """What a client rebuilds from history JSON alone: entities from new_entities, facts from add/remove."""
    entities: dict[str, tuple[str, str]] = {}
    facts: set[str] = set()
    for update in sorted(history, key=lambda u: u["seq"]):
        if update["status"] != "applied":
            continue
        entities.update({e["name"]: (e["type"], e["label"]) for e in update["delta"]["new_entities"]})
        facts.difference_update(update["delta"]["remove"])
        facts.update(update["delta"]["add"])
    return entities, facts


def _as_client_sees(memory: WorldMemory) -> tuple[dict[str, tuple[str, str]], set[str]]:
    return {n: (e.type, e.label) for n, e in memory.entities().items()}, {str(f) for f in memory.facts()}


def _lived(home: WorldMemory) -> None:
    """A few updates from every writing source: applied, rejected, reverted, perception's new entity."""
    move = home.apply(Delta(remove={F("(on book_1 shelf_1)")}, add={F("(on book_1 table_1)")}), source="api")
    assert move.status is UpdateStatus.APPLIED
    assert home.apply(Delta(add={F("(on mug_1 shelf_1)")}), source=UpdateSource.NL).status is UpdateStatus.REJECTED
    assert home.revert(move.id).status is UpdateStatus.APPLIED
    walk = Delta(remove={F("(robot_at robot_1 hall)")}, add={F("(robot_at robot_1 kitchen)")})
    assert home.apply(walk, source=UpdateSource.EXECUTION).status is UpdateStatus.APPLIED
    plate = home.add_entities([Entity("plate_1", "dish", "white plate")], facts=[F("(on plate_1 table_1)")])
    assert plate.status is UpdateStatus.APPLIED


def test_the_first_update_is_the_domains_constants(home: WorldMemory) -> None:
    first, survey = home.history()
    assert (first.source, first.status, first.version, first.seq) == (UpdateSource.DOMAIN, UpdateStatus.APPLIED, 0, 1)
    assert first.delta.new_entities == home.domain.constant_entities() and not (first.delta.add or first.delta.remove)
    assert first.time == home.record.created and survey.version == 1
    assert home.history(limit=1) == [first] and home.query_history(source="domain") == [first]
    assert home.query_history(entity="robot_1", limit=1) == [first]  # indexed under the constants it made


def test_replaying_the_history_gives_the_state_constants_included(home: WorldMemory) -> None:
    _lived(home)
    entities, facts = _replayed([u.to_json() for u in home.history()])
    assert (entities, facts) == _as_client_sees(home)
    assert "robot_1" in entities and set(home.domain.constants) <= set(entities)


def test_the_constants_are_in_every_past_state(home: WorldMemory) -> None:
    _lived(home)
    for version in range(home.version + 1):
        assert set(home.domain.constants) <= set(home.state_at(version).entities)
    assert set(home.state_at(0).entities) == set(home.domain.constants) and not home.state_at(0).facts


def test_export_and_import_carry_the_domains_update_once(store: GraphStore, home: WorldMemory) -> None:
    _lived(home)
    copies = (
        WorldMemory.import_(store, json.loads(json.dumps(home.export())), name=unique_name("doc")),
        WorldMemory.import_lines(store, home.export_lines(), name=unique_name("lines")),
    )
    original = [(u.id, u.seq, u.source, u.version, u.time) for u in home.history()]
    for copy in copies:
        assert [(u.id, u.seq, u.source, u.version, u.time) for u in copy.history()] == original
        assert [u.source for u in copy.history()].count(UpdateSource.DOMAIN) == 1
        assert _replayed([u.to_json() for u in copy.history()]) == _as_client_sees(copy) == _as_client_sees(home)
    again = WorldMemory.import_lines(store, copies[1].export_lines(), name=unique_name("again"))
    assert [u.id for u in again.history()] == [u.id for u in home.history()]


def test_an_export_from_before_the_domains_update_still_imports(store: GraphStore, home: WorldMemory) -> None:
    data = home.export()
    data["history"] = [u for u in data["history"] if u["source"] != "domain"]
    copy = WorldMemory.import_(store, data, name=unique_name("older"))
    assert copy.facts() == home.facts() and [u.id for u in copy.history()] == [u["id"] for u in data["history"]]


def _lines(home: WorldMemory) -> list[dict[str, Any]]:
    return [json.loads(line) for line in home.export_lines()]


def _import(store: GraphStore, lines: list[dict[str, Any]]) -> WorldMemory:
    text = io.StringIO("".join(json.dumps(line) + "\n" for line in lines))
    return WorldMemory.import_lines(store, text, name=unique_name("forged"))


def test_a_forged_domains_update_is_refused(store: GraphStore, home: WorldMemory) -> None:
    lines = _lines(home)
    domain = next(line["update"] for line in lines if "update" in line)
    extra = {**domain, "delta": {**domain["delta"], "new_entities": [Entity("ghost", "item").to_json()]}}
    with pytest.raises(ImportMismatch, match="creates the domain's constants, \\['robot_1'\\], only"):
        _import(store, [line if line.get("update") is not domain else {"update": extra} for line in lines])
    later = {**domain, "id": "again", "seq": 99}
    end = lines.pop()
    with pytest.raises(ImportMismatch, match="the domain's update is the first one"):
        _import(store, [*lines, {"update": later}, {"end": {**end["end"], "updates": end["end"]["updates"] + 1}}])


def test_no_write_may_claim_to_be_the_domain(home: WorldMemory) -> None:
    before = len(home.history())
    with pytest.raises(InvalidValue, match="only a memory's creation"):
        home.apply(Delta(add={F("(light_on lamp_1)")}), source="domain")
    with pytest.raises(InvalidValue, match="only a memory's creation"):
        home.reject(source=UpdateSource.DOMAIN, input="x", issues=())
    assert len(home.history()) == before
