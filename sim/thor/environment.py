"""AI2-THOR as the runtime's :class:`~l3mp.runtime.Environment`, on a real ``ai2thor.controller.Controller``.

Each PDDL action of the ``thor`` domain becomes the exact ai2thor 5.0.0 action dict (``PutObject`` with
the receptacle's ``objectId``; ``go_to`` is ``GetInteractablePoses`` then ``TeleportFull`` to the first
pose; in ``thor-travel`` it is ``go_to(agent, from, to)``). Success is THOR's ``lastActionSuccess``; a
refusal carries THOR's ``errorMessage`` into the step outcome, so the runtime replans. ``forceAction``
is sent only when configured, and every executed step records whether it was forced.

Nothing is predicted here. THOR answers every step with the metadata of every object and of the agent,
so the observation after a step is that whole picture (the ``all`` view), whatever the configured view:
where an object really landed, what physics moved meanwhile, and (``thor-travel``) where the agent
stands, read from its position against the poses THOR offered, not from where it was sent. The runtime
writes an action's predicted effects before it looks; this observation then replaces, as a sensor
update, every one THOR contradicts. Between steps (nothing sent since the last look) the robot sees the
configured view.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kg_memory.domain import Domain
from kg_memory.model import Delta, Fact
from l3mp.runtime import TaskRequest
from perception import Observation, ThorMetadataError, ThorNames, scene_objects, thor_facts, thor_observation
from perception.thor import View
from planning.evaluator import ActionEvaluator, GroundAction, StepOutcome
from planning.goal_reader import parse_goal
from planning.world import World
from sim.errors import SimulationError

# PDDL action → (THOR action, index of the argument whose objectId is sent, or None).
INTERACTIONS: dict[str, tuple[str, int | None]] = {
    "pick_up": ("PickupObject", 1),
    "put": ("PutObject", 2),
    "drop": ("DropHandObject", None),
    "open": ("OpenObject", 1),
    "close": ("CloseObject", 1),
    "toggle_on": ("ToggleObjectOn", 1),
    "toggle_off": ("ToggleObjectOff", 1),
    "clean": ("CleanObject", 1),
    "fill": ("FillObjectWithLiquid", 1),
    "empty": ("EmptyLiquidFromObject", 1),
    "slice": ("SliceObject", 1),
}


def observed_world(observation: Observation, domain: Domain) -> World:
    """What an observation of everything (THOR's ``all`` view) says, as a world to plan or judge in."""
    entities = [e for e in observation.to_entities() if e.name not in domain.constants]
    return World(domain, entities, observation.facts())


class ThorActionError(SimulationError):
    """A PDDL action the thor domain does not have, or one naming unknown objects."""


def _object_id(names: ThorNames, action: GroundAction, name: str) -> str:
    try:
        return names.object_id(name)
    except ThorMetadataError as exc:  # the memory may name more than THOR has: a refusal, not a crash
        raise ThorActionError(f"{action}: {exc}") from exc


def action_dicts(action: GroundAction, names: ThorNames, *, force: bool = False) -> dict[str, Any]:
    """The ai2thor 5.0.0 action dict for an interaction (``go_to`` takes two steps: see ``ThorEnvironment``)."""
    if action.name not in INTERACTIONS:
        raise ThorActionError(f"{action}: the thor domain has no interaction named {action.name}")
    thor_action, target = INTERACTIONS[action.name]
    sent: dict[str, Any] = {"action": thor_action}
    if target is not None:
        if len(action.args) <= target:
            raise ThorActionError(f"{action}: {action.name} needs {target + 1} arguments")
        sent["objectId"] = _object_id(names, action, action.args[target])
    if action.name == "fill":
        sent["fillLiquid"] = "water"
    if force:
        sent["forceAction"] = True
    return sent


@dataclass(frozen=True, slots=True, kw_only=True)
class ThorConfig:
    """How to start THOR: ``executable`` is a local build (ai2thor's ``local_executable_path``)."""

    scene: str = "FloorPlan1"
    executable: str | None = None
    force_action: bool = False
    view: View = "visible"
    x_display: str | None = None
    width: int = 300
    height: int = 300
    init: Mapping[str, Any] = field(default_factory=dict)  # Initialize parameters, e.g. gridSize


class ThorEnvironment:
    """:class:`Environment` over a running ``Controller``; ``log`` records every step sent to THOR."""

    def __init__(self, controller: Any, domain: Domain, *, force_action: bool = False, view: View = "visible") -> None:
        self.controller = controller
        self.domain = domain
        self.force_action = force_action
        self.view = view
        self.names = ThorNames(str(o["objectId"]) for o in scene_objects(self.metadata))
        self.log: list[dict[str, Any]] = []
        self.time_step = 0
        self.poses: dict[str, list[dict[str, Any]]] = {}  # objectId → THOR's interactable poses, latest asked last
        self._stepped = False  # THOR answered a step since the last observation
        self._reports: deque[str] = deque()
        self._tasks: deque[TaskRequest] = deque()
        self._evaluator = ActionEvaluator(domain)

    @classmethod
    def start(cls, config: ThorConfig, domain: Domain) -> ThorEnvironment:
        """Start THOR through ai2thor's Controller (a local build, or the build it downloads)."""
        from ai2thor.controller import Controller

        controller = Controller(
            local_executable_path=config.executable,
            scene=config.scene,
            x_display=config.x_display,
            width=config.width,
            height=config.height,
            **dict(config.init),
        )
        return cls(controller, domain, force_action=config.force_action, view=config.view)

    @property
    def metadata(self) -> Mapping[str, Any]:
        return self.controller.last_event.metadata  # type: ignore[no-any-return]

    def close(self) -> None:
        self.controller.stop()

    # -- feeding it --------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        self._reports.append(text)

    def add_task(self, text: str, goal: str | None = None) -> TaskRequest:
        request = TaskRequest(text, goal)
        self._tasks.append(request)
        return request

    # -- Environment -------------------------------------------------------------------------------

    def observe(self) -> Observation:
        """After a step, everything THOR's answer reports; otherwise the configured view."""
        self.time_step += 1
        view: View = "all" if self._stepped else self.view
        self._stepped = False
        return thor_observation(
            self.metadata, self.names, self.domain, view=view, time_step=self.time_step, poses=self.poses
        )

    def execute(self, action: GroundAction) -> StepOutcome:
        try:
            if action.name == "go_to":
                return self._go_to(action)
            return self._send(action, action_dicts(action, self.names, force=self.force_action))
        except ThorActionError as exc:
            return StepOutcome(action, False, Delta(), (str(exc),))

    def step(self, sent: Mapping[str, Any]) -> Mapping[str, Any]:
        """Send one action dict as it is (e.g. a recorded navigation step); the metadata that came back."""
        event = self.controller.step(action=dict(sent))
        metadata: Mapping[str, Any] = event.metadata
        self._stepped = True
        self.log.append(
            {
                "sent": dict(sent),
                "success": bool(metadata["lastActionSuccess"]),
                "error": metadata.get("errorMessage") or "",
                "forced": bool(sent.get("forceAction")),
            }
        )
        return metadata

    def next_report(self) -> str | None:
        return self._reports.popleft() if self._reports else None

    def next_task(self) -> TaskRequest | None:
        return self._tasks.popleft() if self._tasks else None

    def advance(self) -> None:
        """THOR's physics runs on its own; the next observation reads what it did."""

    def truth(self) -> frozenset[Fact] | None:
        return thor_facts(self.metadata, self.names, self.domain, self.poses)

    def judge(self, task: TaskRequest, goal: str | None) -> bool | None:
        """Whether the goal holds in what THOR reports now (not in the memory)."""
        if not goal:
            return None
        observation = thor_observation(self.metadata, self.names, self.domain, poses=self.poses)
        return self._evaluator.evaluate(parse_goal(goal), observed_world(observation, self.domain))

    # -- helpers -----------------------------------------------------------------------------------

    def _send(self, action: GroundAction, sent: Mapping[str, Any]) -> StepOutcome:
        metadata = self.step(sent)
        if metadata["lastActionSuccess"]:
            return StepOutcome(action, True, Delta())
        error = metadata.get("errorMessage") or "no reason given"
        return StepOutcome(action, False, Delta(), (f"{action}: THOR refused {sent['action']}: {error}",))

    def _go_to(self, action: GroundAction) -> StepOutcome:
        """``go_to(agent, to)``, or thor-travel's ``go_to(agent, from, to)``."""
        if len(action.args) not in (2, 3):
            why = f"{action}: go_to takes an agent, maybe where it starts, and an object"
            return StepOutcome(action, False, Delta(), (why,))
        target = _object_id(self.names, action, action.args[-1])
        metadata = self.step({"action": "GetInteractablePoses", "objectId": target})
        poses = metadata.get("actionReturn") if metadata["lastActionSuccess"] else None
        if not poses:
            error = metadata.get("errorMessage") or "THOR found no pose from which it can be reached"
            return StepOutcome(action, False, Delta(), (f"{action}: {error}",))
        self.poses.pop(target, None)  # re-inserted: the latest asked wins where poses coincide
        self.poses[target] = [dict(p) for p in poses]
        pose = poses[0]
        teleport: dict[str, Any] = {
            "action": "TeleportFull",
            "position": {k: pose[k] for k in ("x", "y", "z")},
            "rotation": {"x": 0.0, "y": pose["rotation"], "z": 0.0},
            "horizon": pose["horizon"],
            "standing": pose["standing"],
        }
        if self.force_action:
            teleport["forceAction"] = True
        return self._send(action, teleport)
