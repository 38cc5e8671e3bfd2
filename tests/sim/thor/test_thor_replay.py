"""The 9 recorded AI2-THOR sessions replayed through the real Controller class and the Unity-side double."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import require_thor_data, thor_files

from kg_memory import DomainRegistry
from kg_memory.stores import SQLiteStore
from sim.thor import replay_trace
from sim.thor.data import read_trace


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStore:
    return SQLiteStore(tmp_path_factory.mktemp("replay") / "replay.db", DomainRegistry())


@pytest.mark.parametrize("trace", thor_files("traces"))
def test_every_interaction_is_sent_as_recorded_and_memory_agrees_after_every_step(
    trace: str, store: SQLiteStore, thor_home: Path
) -> None:
    path = require_thor_data() / "traces" / trace
    recorded = read_trace(path)["steps"]
    result = replay_trace(path, store, trace.split(".")[0].lower())
    problems = [(s.index, s.problems) for s in result.steps if not s.agrees or s.matched is False]
    assert result.ok, problems
    interactions = [s for s in result.steps if s.matched is not None]
    assert len(result.steps) == len(recorded) and interactions
    assert all(s.sent == s.recorded for s in interactions)
    assert result.totals["actions_matched"] == result.totals["interactions"] == len(interactions)
    assert (thor_home / ".ai2thor" / "log" / "unity.log").exists()  # the controller really launched the double


def test_an_action_other_than_the_recorded_one_is_refused_and_disagrees(tmp_path: Path, thor_home: Path) -> None:
    from ai2thor.controller import Controller

    from sim.thor.unity import write_executable

    path = require_thor_data() / "traces" / "pickup_mug.json.gz"
    config = {"backend": "replay", "trace": str(path), "log": str(tmp_path / "wire.jsonl")}
    controller = Controller(
        local_executable_path=str(write_executable(tmp_path, config)), scene="FloorPlan1", x_display=":0"
    )
    try:
        event = controller.step(action="PickupObject", objectId="Mug|-01.76|+00.90|-00.62", forceAction=True)
    finally:
        controller.stop()
    assert event.metadata["lastActionSuccess"] is False
    assert "the recording sent" in event.metadata["errorMessage"]
