"""Replaying a recorded AI2-THOR session through the real ``Controller`` and the Unity-side double.

For each recorded step: an interaction (pick up, put, open, close, toggle, drop) is turned into the
PDDL action it corresponds to, and :class:`ThorEnvironment` sends its own action dict for it, which must
equal the recorded one; any other step (navigation) is sent as recorded. After every step the memory is
updated from THOR's metadata through the sensor pipeline and must agree with the recorded metadata:
every fact the recording states is in the memory, and the memory holds no other dynamic fact.

That agreement is perception's reading of a recorded event against a memory filled from the same
event: it shows the wire, the pipeline and the store lose nothing, not that perception reads THOR
right. Each step's ``version`` (the memory's version after it) lets a test compare the memory with
facts written by hand from the recording instead (``tests/sim/thor/test_thor_replay.py``).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kg_memory import GraphStore, WorldMemory
from l3mp.pipelines import SensorUpdater
from perception import ThorNames, thor_facts
from planning.evaluator import GroundAction
from sim.thor.data import read_trace
from sim.thor.environment import INTERACTIONS, ThorEnvironment
from sim.thor.unity import wire, write_executable

_BY_THOR = {thor: pddl for pddl, (thor, _) in INTERACTIONS.items()}


@dataclass(frozen=True, slots=True, kw_only=True)
class StepCheck:
    index: int
    recorded: dict[str, Any]
    sent: dict[str, Any] | None  # what l3mp sent for an interaction (None: sent as recorded)
    pddl: str | None  # the PDDL action it corresponds to
    matched: bool | None  # sent == recorded, and that is what reached the Unity side (None: not an interaction)
    agrees: bool
    problems: tuple[str, ...] = ()
    version: int = 0  # the memory's version after the step

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.index,
            "version": self.version,
            "recorded": self.recorded,
            "pddl": self.pddl,
            "sent": self.sent,
            "matched": self.matched,
            "agrees": self.agrees,
            "problems": list(self.problems),
        }


@dataclass(frozen=True, slots=True)
class ReplayResult:
    trace: str
    scene: str
    steps: tuple[StepCheck, ...]

    @property
    def totals(self) -> dict[str, int]:
        interactions = [s for s in self.steps if s.matched is not None]
        return {
            "steps": len(self.steps),
            "interactions": len(interactions),
            "actions_matched": sum(bool(s.matched) for s in interactions),
            "steps_agreeing": sum(s.agrees for s in self.steps),
        }

    @property
    def ok(self) -> bool:
        totals = self.totals
        return totals["actions_matched"] == totals["interactions"] and totals["steps_agreeing"] == totals["steps"]

    def to_json(self) -> dict[str, Any]:
        return {"trace": self.trace, "scene": self.scene, "per_step": [s.to_json() for s in self.steps], **self.totals}


def replay_trace(path: Path, store: GraphStore, memory: str, *, scene_file: Path | None = None) -> ReplayResult:
    """Replay the trace at ``path`` into a new ``thor`` memory named ``memory`` in ``store``."""
    from ai2thor.controller import Controller

    trace = read_trace(path)
    steps = trace["steps"]
    initialize = steps[0]["action"] if steps[0]["action"]["action"] == "Initialize" else None
    params = {k: v for k, v in (initialize or {}).items() if k != "action"}
    world = WorldMemory.create(store, memory, "thor")
    with tempfile.TemporaryDirectory(prefix="l3mp-thor-") as folder:
        log = Path(folder) / "wire.jsonl"
        config = {"backend": "replay", "trace": str(path.resolve()), "log": str(log)}
        if scene_file is not None:
            config["scene_file"] = str(scene_file.resolve())
        executable = write_executable(Path(folder), config)
        controller = Controller(local_executable_path=str(executable), scene=trace["scene"], x_display=":0", **params)
        try:
            env = ThorEnvironment(controller, world.domain, force_action=True, view="all")
            checks = _run(env, world, steps, initialize)
        finally:
            controller.stop()
        received = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return ReplayResult(str(path), str(trace["scene"]), _confirm(checks, received, initialize is not None))


def _run(
    env: ThorEnvironment, memory: WorldMemory, steps: list[dict[str, Any]], initialize: Mapping[str, Any] | None
) -> list[StepCheck]:
    sensor = SensorUpdater(memory)
    checks: list[StepCheck] = []
    start = 0
    if initialize is not None:  # the controller's own Initialize answered with the recorded event
        sensor.apply(env.observe())
        problems = agreement(memory, steps[0]["metadata"], env.names)
        checks.append(
            StepCheck(
                index=0,
                recorded=dict(initialize),
                sent=None,
                pddl=None,
                matched=None,
                agrees=not problems,
                problems=problems,
                version=memory.version,
            )
        )
        start = 1
    else:
        sensor.apply(env.observe())
    for index in range(start, len(steps)):
        recorded = dict(steps[index]["action"])
        action = corresponding_action(recorded, memory, env.names)
        if action is None:
            env.step(recorded)
            sent = None
        else:
            env.execute(action)
            sent = env.log[-1]["sent"]
        result = sensor.apply(env.observe())
        problems = agreement(memory, steps[index]["metadata"], env.names)
        if result.update.status.value == "rejected":
            problems = (*problems, *(i.message for i in result.update.issues))
        matched = None if action is None else sent == recorded
        pddl = str(action) if action else None
        checks.append(
            StepCheck(
                index=index,
                recorded=recorded,
                sent=sent,
                pddl=pddl,
                matched=matched,
                agrees=not problems,
                problems=problems,
                version=memory.version,
            )
        )
    return checks


def corresponding_action(recorded: Mapping[str, Any], memory: WorldMemory, names: ThorNames) -> GroundAction | None:
    """The PDDL action a recorded interaction performs (``None`` for navigation and other steps)."""
    name = _BY_THOR.get(str(recorded["action"]))
    if name is None:
        return None
    held = sorted(f.args[1] for f in memory.facts() if f.predicate == "holding")
    if name == "put":
        return GroundAction(name, ("robot_1", held[0] if held else "nothing", names.name(recorded["objectId"])))
    if name == "drop":
        return GroundAction(name, ("robot_1", held[0] if held else "nothing"))
    return GroundAction(name, ("robot_1", names.name(recorded["objectId"])))


def agreement(memory: WorldMemory, metadata: Mapping[str, Any], names: ThorNames) -> tuple[str, ...]:
    """How the memory disagrees with THOR's metadata (empty when it agrees)."""
    expected = thor_facts(metadata, names, memory.domain)
    stored = memory.facts()
    static = memory.domain.static_predicates
    missing = sorted(str(f) for f in expected - stored)
    extra = sorted(str(f) for f in stored - expected if f.predicate not in static)
    return (*(f"memory lacks {f}" for f in missing[:5]), *(f"memory wrongly holds {f}" for f in extra[:5]))


def _confirm(checks: list[StepCheck], received: list[dict[str, Any]], recorded_init: bool) -> tuple[StepCheck, ...]:
    """What reached the Unity side, in order, must be the recorded actions too (one per step)."""
    reached = [wire(a) for a in received if a["action"] not in ("GetScenesInBuild", "Reset")]
    offset = 0 if recorded_init else 1  # an unrecorded Initialize came first
    confirmed = []
    for check in checks:
        position = check.index + offset
        arrived = reached[position] if position < len(reached) else None
        if arrived == check.recorded:
            confirmed.append(check)
            continue
        problem = f"the Unity side received {json.dumps(arrived)}, not the recorded action"
        matched = None if check.matched is None else False
        confirmed.append(replace(check, matched=matched, agrees=False, problems=(*check.problems, problem)))
    return tuple(confirmed)
