"""A name is looked up exactly as it was created, on both stores.

Creation strips, lower-cases and folds the Kelvin sign (U+212A) to ``k``; lookups used to take the
name as given, so ``" HOME "`` clashed with ``home`` on create but ``HOME`` was an unknown memory.
"""

from __future__ import annotations

import pytest
from conftest import unique_name

from kg_memory import Fact, GraphStore, HistoryQuery, InvalidName, MemoryExists, WorldMemory, model
from kg_memory.model import MAX_NAME_LENGTH, is_pddl_name, normalise_name, pddl_name

KELVIN = "\u212a"


def test_one_spelling_for_every_name() -> None:
    assert normalise_name(f"  {KELVIN}ITCHEN\t") == "kitchen" == pddl_name(f" {KELVIN}itchen ")
    assert pddl_name("a" * MAX_NAME_LENGTH) == "a" * MAX_NAME_LENGTH
    with pytest.raises(InvalidName, match=r"at most 200 characters") as raised:
        pddl_name("a" * (MAX_NAME_LENGTH + 1), "memory")
    assert "(201 characters)" in str(raised.value) and "a" * 50 not in str(raised.value)
    # is_pddl_name: already in its one spelling (what stores may interpolate as it is)
    assert is_pddl_name("home") and not is_pddl_name(" home") and not is_pddl_name("Home")
    assert not is_pddl_name("home\n") and not is_pddl_name("a" * (MAX_NAME_LENGTH + 1))


def test_a_memory_is_found_under_any_spelling_it_was_created_as(store: GraphStore, home: WorldMemory) -> None:
    shouted = f"  {home.name.upper().replace('K', KELVIN)} "
    with pytest.raises(MemoryExists):
        WorldMemory.create(store, shouted, "example_home")
    found = WorldMemory.open(store, shouted)
    assert found.name == home.name and found.version == home.version == 1
    assert store.get_memory(shouted).name == home.name


def test_entities_and_history_are_found_under_any_spelling(home: WorldMemory) -> None:
    mug = Fact.parse("(on mug_1 table_1)")
    assert home.facts(entity=" MUG_1 ") == home.facts(entity="mug_1") and mug in home.facts(entity="MUG_1")
    assert home.facts(predicate="ON", entity="Mug_1") == {mug}
    assert set(home.entities([f"{KELVIN}ITCHEN", "Hall"])) == {"kitchen", "hall"}
    assert (
        [u.id for u in home.query_history(HistoryQuery(entity=" MUG_1"))]
        == [u.id for u in home.query_history(HistoryQuery(entity="mug_1"))]
        != []
    )


def test_a_memory_is_deleted_under_any_spelling(store: GraphStore) -> None:
    name = unique_name("del")
    WorldMemory.create(store, name, "example_home")
    store.delete_memory(f" {name.upper()} ")
    assert name not in {m.name for m in store.list_memories()}


def test_a_name_checked_once_is_checked_alike_every_time() -> None:
    """Names already checked are remembered as given; a bad name is refused however often it comes,
    and after the remembered names were let go."""
    assert pddl_name(" Mug_7 ") == "mug_7" == pddl_name(" Mug_7 ")
    for _ in range(2):
        with pytest.raises(InvalidName):
            pddl_name("mug 7")
        with pytest.raises(InvalidName, match="at most 200 characters"):
            pddl_name("b" * (MAX_NAME_LENGTH + 1))
        with pytest.raises(InvalidName, match="must be a string"):
            pddl_name(7)
    for i in range(70_000):  # more than are held: the oldest are let go, answers stay the same
        assert pddl_name(f"Item_{i}") == f"item_{i}"
    assert pddl_name(" Mug_7 ") == "mug_7"
    with pytest.raises(InvalidName):
        pddl_name("mug 7")
    padded = " " * 100_000 + "Mug_8"  # valid, and too long to be worth holding
    assert pddl_name(padded) == "mug_8" == pddl_name(padded)
    assert padded not in model._VALID_NAMES
