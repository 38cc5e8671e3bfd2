"""Plans served by the operations share one planning world per memory, kept in step with its history:
a later plan reads the updates since the last one, not the whole state."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_memory import WorldMemory
from l3mp.examples import survey_json
from l3mp.operations import Operations, Services
from l3mp.operations.models import DeltaIn, EntitiesIn, MemoryIn, PlanIn
from l3mp.settings import Settings
from l3mp.wiring import open_store

NAME = "home"


@pytest.fixture
def ops(tmp_path: Path) -> Iterator[Operations]:
    settings = Settings(sqlite_path=tmp_path / "plans.db", retriever="full")
    services = Services(settings=settings, store=open_store(settings))
    operations = Operations(services=services)
    operations.create_memory(MemoryIn(name=NAME, domain="example_home"))
    operations.add_entities(NAME, EntitiesIn.model_validate(survey_json()))
    yield operations
    services.close()


def plan(ops: Operations, goal: str) -> dict[str, object]:
    return asyncio.run(ops.plan(NAME, PlanIn(goal=goal))).model_dump()


def test_plans_on_one_memory_sync_one_world_from_its_history(ops: Operations) -> None:
    world = ops.services.planning_world(ops.memory(NAME))
    assert plan(ops, "(on mug_1 shelf_1)")["status"] == "solved"
    assert world.full_reads == 1
    ops.apply_delta(NAME, DeltaIn(add=["(light_on lamp_1)"]))
    second = plan(ops, "(not (light_on lamp_1))")
    assert second["status"] == "solved" and second["plan"]
    assert world.full_reads == 1 and world.synced == 1  # the light came from the history, not a full read


def test_a_memory_made_again_under_its_name_gets_a_new_world(ops: Operations) -> None:
    first = ops.services.planning_world(ops.memory(NAME))
    store = ops.services.store
    store.delete_memory(NAME)
    WorldMemory.create(store, NAME, "example_home")
    again = ops.services.planning_world(ops.memory(NAME))
    assert again is not first and again.memory is ops.memory(NAME)
