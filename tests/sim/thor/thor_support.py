"""Shared by the AI2-THOR tests: a real Controller against the scripted Unity-side double."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from ai2thor.controller import Controller
from conftest import require_thor_data

from kg_memory import GraphStore, WorldMemory
from l3mp.pipelines import SensorUpdater
from perception import ThorNames, thor_observation
from sim.thor import ThorEnvironment
from sim.thor.unity import write_executable

KITCHEN = "FloorPlan1_physics.json.gz"
FAR_CORNER = {"x": 1.5, "y": 0.9, "z": 1.5}  # more than 1.5 m from the mug and the sink


def scene(name: str = KITCHEN) -> dict[str, Any]:
    return dict(json.loads(gzip.decompress((require_thor_data() / "scenes" / name).read_bytes())))


def scripted_env(
    folder: Path,
    domain: Any,
    *,
    fates: list[dict[str, Any]] | None = None,
    agent: dict[str, float] = FAR_CORNER,
    scene_file: Path | None = None,
) -> ThorEnvironment:
    """ThorEnvironment on the real Controller, the Unity side scripted (scripted, not THOR physics);
    ``fates`` are where that side disagrees with our model (see ``sim/thor/unity/scripted.py``)."""
    config = {
        "backend": "scripted",
        "scene_file": str(scene_file or require_thor_data() / "scenes" / KITCHEN),
        "scene": "FloorPlan1_physics",
        "agent": agent,
        "fates": fates or [],
        "log": str(folder / "wire.jsonl"),
    }
    controller = Controller(
        local_executable_path=str(write_executable(folder, config)), scene="FloorPlan1", x_display=":0"
    )
    return ThorEnvironment(controller, domain, view="visible")


def disagreement(memory: WorldMemory, env: ThorEnvironment) -> tuple[set[str], set[str]]:
    """What THOR's metadata states that the memory lacks, and the dynamic facts the memory holds that
    THOR does not state (both empty: the memory equals what THOR reports)."""
    truth, stored = env.truth() or frozenset(), memory.facts()
    static = memory.domain.static_predicates
    return {str(f) for f in truth - stored}, {str(f) for f in stored - truth if f.predicate not in static}


def kitchen_memory(store: GraphStore, name: str, domain: str = "thor") -> tuple[WorldMemory, ThorNames]:
    """FloorPlan1 as THOR reports it after a reset, imported through a sensor update."""
    objects = scene()
    memory = WorldMemory.create(store, name, domain)
    names = ThorNames(objects)
    update = SensorUpdater(memory).apply(thor_observation(objects, names, memory.domain)).update
    assert update.status.value == "applied", update.issues
    return memory, names


def wire(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "wire.jsonl").read_text().splitlines()]
