"""The sensor update pipeline on both stores: observations from the simulator, verified and applied."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import unique_name

from kg_memory import (
    Delta,
    Fact,
    GraphStore,
    IssueCode,
    Update,
    UpdateSource,
    UpdateStatus,
    VersionConflict,
    WorldMemory,
)
from kg_memory.unknowns import unplaced
from l3mp.pipelines import SensorResult, SensorUpdater
from perception import Observation, ObservedEntity
from sim.household import CONTAINER_TYPES, HomeSpec, generate_home
from sim.simulator import Simulator

SPEC = HomeSpec(seed=5, rooms=2, items=12, people=2)  # the robot starts in a kitchen with closed cupboards
EVENTS = 6  # enough for a person to come in carrying something, another to leave and an item to move


@pytest.fixture
def world(store: GraphStore) -> tuple[WorldMemory, Simulator]:
    """A memory surveyed from a small home, and the simulator holding that home's truth."""
    home = generate_home(SPEC)
    memory = WorldMemory.create(store, unique_name("sense"), "household")
    survey = memory.add_entities(home.entities, facts=home.facts, input="survey")
    assert survey.status is UpdateStatus.APPLIED, survey.issues
    return memory, Simulator(home, seed=5)


def changed(sim: Simulator, events: int = EVENTS) -> Observation:
    """What the robot sees after ``events`` human events the memory was not told about."""
    for _ in range(events):
        sim.next_event()
    return sim.observe()


def dynamic_about(facts: frozenset[Fact], names: set[str], sim: Simulator) -> frozenset[Fact]:
    static = sim.domain.static_predicates
    return frozenset(f for f in facts if f.args and f.args[0] in names and f.predicate not in static)


def test_an_observation_is_recorded_with_its_input_and_provenance(world: tuple[WorldMemory, Simulator]) -> None:
    memory, sim = world
    observation, version = changed(sim), memory.version
    unplaced_before = {e.name for e in unplaced(memory.domain, memory.entities(), memory.facts())}
    result = SensorUpdater(memory).apply(observation)
    update = result.update
    lost = [e.name for e in unplaced(memory.domain, memory.entities(), memory.facts()) if e.name not in unplaced_before]
    assert isinstance(result, SensorResult) and result.attempts == 1
    assert update.status is UpdateStatus.APPLIED and update.source is UpdateSource.SENSOR
    assert update.input == observation.to_json() and Observation.from_json(update.input) == observation
    assert update.delta == result.delta and update.version == memory.version == version + 1
    expected: dict[str, Any] = {
        "room": observation.room,
        "robot": "robot_1",
        "time_step": 0,
        "observed": len(observation.entities),
        "seen": sorted(observation.names()),
        "created": [],
        "unseen": sorted({f.args[0] for f in result.delta.remove} - set(observation.names())),
        "removed": len(result.delta.remove),
        "added": len(result.delta.add),
        "unknown_location": lost,
        "warnings": [w for w in update.meta["warnings"] if w.split(":")[0] in lost],
    }
    assert len(expected["warnings"]) == len(lost)  # one each: where it was last
    assert dict(update.meta) == expected and expected["unseen"] and expected["removed"]
    (stored,) = memory.history(since_seq=update.seq - 1)
    assert stored.id == update.id and dict(stored.meta) == expected and stored.input == update.input


def test_the_same_observation_twice_is_a_noop(world: tuple[WorldMemory, Simulator]) -> None:
    memory, sim = world
    observation = changed(sim)
    SensorUpdater(memory).apply(observation)
    version, facts = memory.version, memory.facts()
    again = SensorUpdater(memory).apply(observation)
    assert again.update.status is UpdateStatus.NOOP and again.delta.is_empty
    assert memory.version == version and memory.facts() == facts


def test_a_round_trip_makes_what_is_in_view_true_and_touches_nothing_else(
    world: tuple[WorldMemory, Simulator],
) -> None:
    memory, sim = world
    before, entities = memory.facts(), memory.entities()
    observation = changed(sim)
    truth, seen = sim.state, set(observation.names())
    closed = {n for n in seen if sim.home.by_name[n].type in CONTAINER_TYPES and Fact("open", (n,)) not in truth}
    assert closed and set(observation.opaque) == closed  # the simulator reports closed containers as opaque
    assert dynamic_about(before, seen, sim) != dynamic_about(truth, seen, sim)  # the events changed the view

    result = SensorUpdater(memory).apply(observation)
    assert result.update.status is UpdateStatus.APPLIED, result.update.issues
    after = memory.facts()
    assert dynamic_about(after, seen, sim) == dynamic_about(truth, seen, sim)
    # outside the view's first arguments, facts only went, and only ones false now that pointed into view
    outside_before = frozenset(f for f in before if f.args[0] not in seen)
    outside_after = frozenset(f for f in after if f.args[0] not in seen)
    gone = outside_before - outside_after
    assert outside_after <= outside_before and gone
    assert all(f not in truth and f.args[1] in seen and f.args[1] not in closed for f in gone)
    static = sim.domain.static_predicates
    assert {f for f in after if f.predicate in static} == {f for f in before if f.predicate in static}
    assert memory.entities() == entities


def test_an_unknown_entity_type_is_rejected_with_the_state_untouched(world: tuple[WorldMemory, Simulator]) -> None:
    memory, sim = world
    observation = sim.observe()
    surface = next(e.name for e in observation.entities if e.type == "surface")
    gizmo = ObservedEntity(name="gizmo_1", type="gizmo", relations=(("on", surface),))
    odd = observation.model_copy(update={"entities": (*observation.entities, gizmo)})
    version, facts = memory.version, memory.facts()
    result = SensorUpdater(memory).apply(odd)
    assert result.update.status is UpdateStatus.REJECTED and result.attempts == 1
    assert IssueCode.UNKNOWN_TYPE in {i.code for i in result.update.issues}
    assert memory.version == version and memory.facts() == facts and "gizmo_1" not in memory.entities()
    assert memory.history()[-1].id == result.update.id and memory.history()[-1].input == odd.to_json()


def interfering(memory: WorldMemory, monkeypatch: pytest.MonkeyPatch, write: Delta, times: int) -> None:
    """Another writer commits ``write`` (or its inverse) between the updater's snapshot and its commit."""
    real = memory.try_apply
    done = [0]

    def try_apply(delta: Delta, **kwargs: Any) -> Any:
        if done[0] < times:
            other = write if done[0] % 2 == 0 else write.inverse()
            update = real(other, source=UpdateSource.EXECUTION, input="another writer")
            assert isinstance(update, Update) and update.status is UpdateStatus.APPLIED, update
            done[0] += 1
        return real(delta, **kwargs)

    monkeypatch.setattr(memory, "try_apply", try_apply)


def test_a_version_conflict_recomputes_the_delta(
    world: tuple[WorldMemory, Simulator], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, sim = world
    observation = sim.observe()
    lamp = next(e for e in observation.entities if e.type == "light")
    switched = Fact("switched_on", (lamp.name,))
    flip = Delta(remove={switched}) if "switched_on" in lamp.properties else Delta(add={switched})
    interfering(memory, monkeypatch, flip, times=1)
    result = SensorUpdater(memory).apply(observation)
    # the first delta was empty; after the other writer flipped the lamp, perception flips it back
    assert result.attempts == 2 and result.update.status is UpdateStatus.APPLIED
    assert result.delta == flip.inverse()
    assert (switched in memory.facts()) == ("switched_on" in lamp.properties)


def test_conflicts_on_every_attempt_are_raised(
    world: tuple[WorldMemory, Simulator], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, sim = world
    lamp = next(e for e in sim.observe().entities if e.type == "light")
    switched = Fact("switched_on", (lamp.name,))
    flip = Delta(remove={switched}) if "switched_on" in lamp.properties else Delta(add={switched})
    interfering(memory, monkeypatch, flip, times=3)
    with pytest.raises(VersionConflict):
        SensorUpdater(memory, attempts=3).apply(sim.observe())
