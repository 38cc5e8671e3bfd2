"""Fixtures of the pipeline tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_memory import DomainRegistry, WorldMemory
from kg_memory.stores import SQLiteStore
from sim.survey import surveyed_home


@pytest.fixture
def surveyed(tmp_path: Path) -> Iterator[WorldMemory]:
    """A memory of the household domain's surveyed home of seed 31 (the hand-written reports' home)."""
    store = SQLiteStore(tmp_path / "home.db", DomainRegistry())
    world = WorldMemory.create(store, "home", "household")
    entities, facts = surveyed_home(31, world.domain)
    world.add_entities(entities, facts=facts, input="survey")
    yield world
    store.close()
