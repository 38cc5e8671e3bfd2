"""A memory's planning world kept in step with its history: always the memory's state at its
version, read whole only once, a snapshot handed out never changed by later updates, and plans
from a reused planner the same as from a fresh one."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_memory import Delta, DomainRegistry, Entity, Fact, UpdateSource, WorldMemory
from kg_memory.errors import InvalidValue
from kg_memory.stores import SQLiteStore
from l3mp.pipelines.plans import PlanConfig, TaskPlanner
from planning.memory_world import MemoryWorld, WorldSnapshot
from sim import HomeSpec, Simulator, generate_home


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "w.db", DomainRegistry())
    yield opened
    opened.close()


@pytest.fixture
def sim() -> Simulator:
    return Simulator(generate_home(HomeSpec(seed=2, rooms=4, items=10, people=2)), seed=2)


def _memory(store: SQLiteStore, sim: Simulator) -> WorldMemory:
    memory = WorldMemory.create(store, f"w_{uuid.uuid4().hex[:8]}", "household")
    memory.add_entities(sim.home.entities, facts=sim.home.facts, input="survey")
    return memory


def _snapshot(worlds: MemoryWorld) -> WorldSnapshot:
    with worlds.reading() as snapshot:
        return snapshot


def _same_as_state(snapshot: WorldSnapshot, memory: WorldMemory) -> None:
    state = memory.state()
    constants = memory.domain.constants
    assert snapshot.version == state.version
    assert snapshot.world.facts == state.facts
    assert dict(snapshot.entities) == dict(state.entities)
    expected = {n: e for n, e in state.entities.items() if n not in constants}
    assert {n: e for n, e in snapshot.world.entities.items() if n not in constants} == expected
    for name in list(expected)[:20]:  # the lazily built index agrees with the facts
        assert snapshot.world.facts_about(name) == frozenset(f for f in state.facts if name in f.args)


def _follow_events(memory: WorldMemory, sim: Simulator, count: int) -> None:
    for _ in range(count):
        before = sim.state
        event = sim.next_event()
        delta = Delta(remove=before - sim.state, add=sim.state - before)
        memory.apply(delta, source=UpdateSource.SENSOR, input=event.text, verify=False)


def test_updates_are_synced_from_the_history_not_read_whole(store: SQLiteStore, sim: Simulator) -> None:
    memory = _memory(store, sim)
    worlds = MemoryWorld(memory)
    _same_as_state(_snapshot(worlds), memory)
    _follow_events(memory, sim, 6)
    lamp = Entity(name="lamp_new", type="light", label="new lamp")
    room = next(e.name for e in sim.home.entities if e.type == "room")
    memory.apply(Delta(add={Fact("appliance_in", (lamp.name, room))}, new_entities=(lamp,)), source=UpdateSource.SENSOR)
    synced = _snapshot(worlds)
    _same_as_state(synced, memory)
    assert worlds.full_reads == 1 and worlds.synced >= 2
    assert _snapshot(worlds) is synced  # nothing new: the same snapshot


def test_a_snapshot_being_read_does_not_change(store: SQLiteStore, sim: Simulator) -> None:
    memory = _memory(store, sim)
    worlds = MemoryWorld(memory)
    with worlds.reading() as first:
        facts, version = first.world.facts, first.version
        _follow_events(memory, sim, 4)
        later = _snapshot(worlds)  # another request, while the first still reads
        assert first.world.facts == facts and first.version == version
        assert later.world is not first.world and later.version > version
    _same_as_state(later, memory)
    assert worlds.copies == 1
    _follow_events(memory, sim, 2)
    latest = _snapshot(worlds)  # nobody reads ``later`` any more: synced in place, no copy
    assert latest.world is later.world and worlds.copies == 1
    _same_as_state(latest, memory)


def test_a_history_that_does_not_add_up_is_read_whole(store: SQLiteStore, sim: Simulator) -> None:
    memory = _memory(store, sim)
    worlds = MemoryWorld(memory)
    _snapshot(worlds)
    _follow_events(memory, sim, 3)
    kept = worlds._kept
    assert kept is not None
    # the snapshot claims an older version than its facts: the history's deltas then do not apply
    stale = WorldSnapshot(world=kept.snapshot.world, entities=kept.snapshot.entities, version=kept.snapshot.version - 1)
    worlds._kept = type(kept)(snapshot=stale, entities=kept.entities, cursor=kept.cursor)
    _same_as_state(_snapshot(worlds), memory)
    assert worlds.full_reads == 2


def test_a_reused_planner_plans_as_a_fresh_one(store: SQLiteStore, sim: Simulator) -> None:
    memory = _memory(store, sim)
    reused = TaskPlanner(memory, config=PlanConfig(retriever="full", timeout=120.0))
    for _ in range(3):
        _follow_events(memory, sim, 3)
        goal = sim.new_task().task.goal_pddl
        mine = reused.plan(goal=goal)
        fresh = TaskPlanner(memory, config=PlanConfig(retriever="full", timeout=120.0)).plan(goal=goal)
        assert (mine.status, mine.plan, mine.tier, mine.version) == (
            fresh.status,
            fresh.plan,
            fresh.tier,
            fresh.version,
        )
        assert mine.explanation == fresh.explanation and mine.version == memory.version
        assert [a.problem for a in mine.tiers.attempts] == [a.problem for a in fresh.tiers.attempts]  # type: ignore[union-attr]
    assert reused.worlds.full_reads == 1


def test_planners_made_per_request_share_one_kept_world(store: SQLiteStore, sim: Simulator) -> None:
    memory = _memory(store, sim)
    worlds = MemoryWorld(memory)
    for _ in range(2):
        _follow_events(memory, sim, 2)
        goal = sim.new_task().task.goal_pddl
        report = TaskPlanner(memory, config=PlanConfig(retriever="full"), worlds=worlds).plan(goal=goal)
        assert report.version == memory.version
    assert worlds.full_reads == 1 and worlds.synced >= 2
    other = _memory(store, sim)
    with pytest.raises(InvalidValue, match="another memory"):
        TaskPlanner(other, worlds=worlds)
