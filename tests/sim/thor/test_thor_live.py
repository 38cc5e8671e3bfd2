"""Against a real AI2-THOR build: run where one is present (``AI2THOR_EXECUTABLE=/path/to/thor-build``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kg_memory import DomainRegistry
from l3mp.pipelines import SensorUpdater
from planning.evaluator import GroundAction
from sim.thor import ThorConfig, ThorEnvironment

pytestmark = [
    pytest.mark.thor_live,
    pytest.mark.skipif(not os.environ.get("AI2THOR_EXECUTABLE"), reason="AI2THOR_EXECUTABLE names no AI2-THOR build"),
]


def test_a_real_build_opens_and_closes_the_fridge(tmp_path: Path) -> None:
    from kg_memory import WorldMemory
    from kg_memory.stores import SQLiteStore

    store = SQLiteStore(tmp_path / "live.db", DomainRegistry())
    memory = WorldMemory.create(store, "live", "thor")
    config = ThorConfig(scene="FloorPlan1", executable=os.environ["AI2THOR_EXECUTABLE"], view="all")
    env = ThorEnvironment.start(config, memory.domain)
    try:
        SensorUpdater(memory).apply(env.observe())
        fridge = next(n for n in memory.entities() if n.startswith("fridge_"))
        assert env.execute(GroundAction("go_to", ("robot_1", fridge))).applicable
        assert env.execute(GroundAction("open", ("robot_1", fridge))).applicable
        SensorUpdater(memory).apply(env.observe())
        assert f"(is_open {fridge})" in {str(f) for f in memory.facts()}
    finally:
        env.close()
