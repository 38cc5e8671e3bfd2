"""Core value types: immutable, normalized and validated on construction."""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
from datetime import datetime

import pytest

from kg_memory import Delta, Entity, Fact, InvalidName, InvalidValue, Issue, IssueCode, Update, UpdateStatus
from kg_memory.model import MAX_META_DEPTH

F = Fact.parse


def test_fact_normalizes_and_is_hashable() -> None:
    fact = Fact("On", ["Mug_1", "table_2"])
    assert fact == Fact("on", ("mug_1", "table_2")) == F("( on  mug_1 table_2 )")
    assert len({fact, F("(on mug_1 table_2)")}) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        fact.predicate = "in"  # type: ignore[misc]


def test_a_fact_from_another_process_is_the_same_fact_here() -> None:
    """A fact keeps its hash, and a string's hash differs between processes: a fact pickled by a
    process with another hash seed must still be found in this one's sets (worker processes)."""
    made = "import pickle, sys; from kg_memory import Fact; sys.stdout.buffer.write(pickle.dumps("
    made += "[Fact('on', ('mug_1', 'table_2')), Fact.unchecked('light_on', ('lamp_1',)),"
    made += " Fact('distance', ('a', 'b'), 2.5)]))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    pickled = subprocess.run([sys.executable, "-c", made], capture_output=True, check=True, env=env).stdout
    theirs = pickle.loads(pickled)
    ours = {F("(on mug_1 table_2)"), F("(light_on lamp_1)"), F("(= (distance a b) 2.5)")}
    assert set(theirs) == ours and all(fact in ours for fact in theirs)
    assert {hash(f) for f in theirs} == {hash(f) for f in ours}
    assert "_hash" not in repr(theirs[0]) and dataclasses.replace(theirs[0], args=("cup_1", "table_2")) == F(
        "(on cup_1 table_2)"
    )


def test_triple_view_and_n_ary_display() -> None:
    assert F("(on mug_1 table_2)").triple() == ("mug_1", "on", "table_2")
    assert F("(light_on lamp_1)").triple() == ("lamp_1", "light_on", "true")
    assert F("(joined a b c)").triple() is None
    assert F("(joined a b c)").display() == "(joined a b c)"
    assert F("(power_on)").display() == "(power_on)"
    assert F("(on mug_1 table_2)").display() == "(mug_1, on, table_2)"
    assert Fact.from_triple("lamp_1", "light_on", "true") == F("(light_on lamp_1)")
    assert Fact.from_triple("mug_1", "on", "table_2") == F("(on mug_1 table_2)")


@pytest.mark.parametrize("text", ["on mug_1", "()", "(on mug_1", ""])
def test_fact_parse_errors_carry_the_input(text: str) -> None:
    with pytest.raises(InvalidValue) as caught:
        F(text)
    assert caught.value.value == text


@pytest.mark.parametrize("name", ["mug'1", "mug`1", "mug{1}", "a b", "1mug", "x)-[:on]->(y", "", 'mug"1'])
def test_names_that_could_be_code_are_rejected(name: str) -> None:
    with pytest.raises(InvalidName) as caught:
        Entity(name, "dish")
    assert caught.value.name == name
    with pytest.raises(InvalidName):
        Fact("on", (name, "table_1"))
    with pytest.raises(InvalidName):
        Fact(name, ())


def test_fact_args_must_be_a_sequence_of_names() -> None:
    with pytest.raises(InvalidValue):
        Fact("on", "mug_1")  # type: ignore[arg-type]


def test_entity_label_defaults_and_attributes_are_frozen() -> None:
    entity = Entity("kitchen_table", "furniture")
    assert entity.label == "kitchen table"
    mug = Entity("mug_1", "dish", '  Bob\'s "mug" `x` {a:1}  ', {"colour": "blue"})
    assert mug.label == 'Bob\'s "mug" `x` {a:1}'
    with pytest.raises(TypeError):
        mug.attrs["colour"] = "red"  # type: ignore[index]
    with pytest.raises(InvalidValue):
        Entity("mug_2", "dish", attrs={"nested": {"a": 1}})  # type: ignore[dict-item]


def test_delta_normalizes_and_inverts() -> None:
    delta = Delta(
        remove=["(on mug_1 table_1)"],
        add=[F("(held mug_1 robot_1)")],  # type: ignore[arg-type]
        new_entities=[Entity("mug_1", "dish")],
    )  # type: ignore[arg-type]
    assert delta.remove == {F("(on mug_1 table_1)")} and isinstance(delta.new_entities, tuple)
    assert delta.mentioned() == {"mug_1", "table_1", "robot_1"}
    assert delta.size == 2 and not delta.is_empty and Delta().is_empty
    assert delta.inverse() == Delta(remove={F("(held mug_1 robot_1)")}, add={F("(on mug_1 table_1)")})
    assert Delta.from_json(delta.to_json()) == delta
    with pytest.raises(InvalidValue):
        Delta(add="(on mug_1 table_1)")  # type: ignore[arg-type]


def test_update_json_round_trip_and_validation() -> None:
    issue = Issue(IssueCode.FUNCTIONAL, F("(on mug_1 sofa)"), "mug_1 can be in only one place; remove one")
    update = Update(
        memory="home",
        source="nl",
        delta=Delta(add={F("(on mug_1 sofa)")}),
        status="rejected",
        input="on the sofa",  # type: ignore[arg-type]
        issues=(issue,),
        meta={"retries": 2},
    )
    assert Update.from_json(update.to_json()) == update
    assert Update.from_json(update.to_json()).meta == {"retries": 2}
    with pytest.raises(InvalidValue, match="must carry its reasons"):
        Update(memory="home", source="nl", delta=Delta(), status=UpdateStatus.REJECTED)  # type: ignore[arg-type]
    with pytest.raises(InvalidValue, match="timezone"):
        Update(memory="home", source="nl", delta=Delta(), status=UpdateStatus.NOOP, time=datetime(2026, 1, 1))  # type: ignore[arg-type]
    with pytest.raises(InvalidValue, match="JSON"):
        Update(memory="home", source="nl", delta=Delta(), status=UpdateStatus.NOOP, meta={"x": object()})  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Update(memory="home", source="gossip", delta=Delta(), status=UpdateStatus.NOOP)  # type: ignore[arg-type]


def test_unchecked_facts_equal_checked_ones() -> None:
    checked = F("(on mug_1 table_2)")
    unchecked = Fact.unchecked("on", ("mug_1", "table_2"))
    assert unchecked == checked and hash(unchecked) == hash(checked) and {unchecked} == {checked}


# A lone surrogate ("\ud800" in JSON text) is a Python str but no Unicode text: no store can keep it.
LONE = "mo\ud800ved"


@pytest.mark.parametrize(("label", "attrs"), [(LONE, {}), ("", {LONE: "v"}), ("", {"k": LONE})])
def test_entity_text_that_is_not_unicode_is_refused(label: str, attrs: dict[str, str]) -> None:
    with pytest.raises(InvalidValue, match="surrogate") as caught:
        Entity("cup_1", "dish", label, attrs)
    assert caught.value.value == (label or attrs)


def test_entity_text_beyond_ascii_is_kept() -> None:
    entity = Entity("cup_1", "dish", "tasse \u00e0 caf\u00e9 \U0001f375", {"\u00e9t\u00e9": "s\u00fc\u00df", "n": 1})
    assert entity.label == "tasse \u00e0 caf\u00e9 \U0001f375" and entity.attrs == {
        "\u00e9t\u00e9": "s\u00fc\u00df",
        "n": 1,
    }


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("id", "", "empty"),
        ("id", [1, 2], "string"),
        ("id", {"a": 1}, "string"),
        ("id", LONE, "surrogate"),
        ("input", LONE, "surrogate"),
        ("input", {"a": 1}, "string"),
        ("meta", {"x": float("nan")}, "NaN"),
        ("meta", {"x": [float("inf")]}, "Infinity"),
    ],
)
def test_update_fields_that_no_store_or_export_could_keep_are_refused(field: str, value: object, problem: str) -> None:
    data = Update(memory="home", source="api", delta=Delta(), status=UpdateStatus.NOOP).to_json()  # type: ignore[arg-type]
    data[field] = value
    with pytest.raises(InvalidValue, match=problem) as caught:
        Update.from_json(data)
    assert caught.value.value == value
    with pytest.raises(InvalidValue, match=problem):  # a live update likewise
        Update(memory="home", source="api", delta=Delta(), status=UpdateStatus.NOOP, **{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [5, None, ["(on mug_1 table_1)"]])
def test_a_fact_that_is_not_text_is_an_invalid_value(text: object) -> None:
    with pytest.raises(InvalidValue, match="string") as caught:
        Fact.parse(text)  # type: ignore[arg-type]
    assert caught.value.value == text


def test_update_meta_nested_too_deeply_to_write_back_is_refused() -> None:
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(MAX_META_DEPTH):
        deep = {"a": deep}
    with pytest.raises(InvalidValue, match=f"nested at most {MAX_META_DEPTH} deep") as caught:
        Update(memory="home", source="api", delta=Delta(), status=UpdateStatus.NOOP, meta=deep)  # type: ignore[arg-type]
    assert caught.value.value == "with keys ['a']"  # named, not printed: it may be too deep to print
    within = deep["a"]
    assert Update(memory="home", source="api", delta=Delta(), status=UpdateStatus.NOOP, meta=within).meta == within  # type: ignore[arg-type]
    brackets = {"note": "[" * 500}  # brackets in text are no nesting
    assert Update(memory="home", source="api", delta=Delta(), status=UpdateStatus.NOOP, meta=brackets).meta == brackets  # type: ignore[arg-type]
