"""A scripted Unity side for whole tasks: scripted state, NOT THOR physics.

It starts from a real scene file (every object's metadata after a reset) and changes that metadata the
way THOR reports the result of an action, by rule: a picked-up object leaves its receptacles and is in
the agent's inventory; a put one rests in the receptacle; open/close and toggle flip their flags. The
agent sees (``visible``) what is within 1.5 m of where it stands, THOR's default visibility distance.
By default nothing falls, slides or collides, and refusals mirror our PDDL preconditions (the object in
view, pickupable, an empty hand, an open receptacle).

``fates`` script where THOR disagrees with that model, as the real one does: each names an ``action``
and applies to its next ``times`` calls (default 1).

* ``refuse``: the action fails with ``errorMessage``, changing nothing, though it could be done;
* ``allow``: the action is done though the rules above would refuse it (the object out of view, the
  receptacle closed, ...); an unknown object or an empty hand still stop it;
* ``land``: the placed object rests in ``receptacle`` (an objectId) instead of where it was put;
* ``fall``: ``objectId`` (default: the object being placed) ends on the floor at ``position``
  (default: the floor's own position), after the action's own effect.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from .protocol import STARTUP, event, startup_answer

VISIBILITY = 1.5  # metres, THOR's default visibilityDistance
LABEL = "scripted, not THOR physics"
FATES = ("refuse", "allow", "land", "fall")
FLAGS = {
    "OpenObject": ("openable", "isOpen", True),
    "CloseObject": ("openable", "isOpen", False),
    "ToggleObjectOn": ("toggleable", "isToggled", True),
    "ToggleObjectOff": ("toggleable", "isToggled", False),
    "CleanObject": ("dirtyable", "isDirty", False),
    "FillObjectWithLiquid": ("canFillWithLiquid", "isFilledWithLiquid", True),
    "EmptyLiquidFromObject": ("canFillWithLiquid", "isFilledWithLiquid", False),
}


class _Refused(Exception):
    """THOR's answer to an action it will not do: ``lastActionSuccess`` false with this message."""


class ScriptedBackend:
    def __init__(self, scene: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.scene_name = str(config.get("scene", "FloorPlan1_physics"))
        self.objects: dict[str, dict[str, Any]] = {k: copy.deepcopy(dict(v)) for k, v in scene.items()}
        start = config.get("agent", {"x": 0.0, "y": 0.9, "z": 0.0})
        self.agent: dict[str, Any] = {"position": dict(start), "rotation": {"x": 0.0, "y": 0.0, "z": 0.0}}
        self.fates = [dict(f) for f in config.get("fates", ())]
        self.inventory: list[dict[str, str]] = [
            {"objectId": k, "objectType": o["objectType"]} for k, o in self.objects.items() if o["isPickedUp"]
        ]
        self._fate: dict[str, Any] = {}  # the fate of the action being answered
        self._see()

    # -- the protocol ------------------------------------------------------------------------------

    def first(self) -> dict[str, Any]:
        return self._event("")

    def answer(self, action: Mapping[str, Any]) -> dict[str, Any]:
        name = str(action.get("action"))
        if name in STARTUP:
            return startup_answer(self._event(name), action, [self.scene_name])
        if name == "Initialize":
            return self._event(name)
        self._fate = self._next_fate(name)
        try:
            if self._fate and self._fate.get("fate") not in FATES:  # a test's typo must not pass silently
                raise _Refused(f"the double has no fate {self._fate.get('fate')!r}: use {', '.join(FATES)}")
            if self._fate.get("fate") == "refuse":
                raise _Refused(str(self._fate.get("errorMessage", f"{name} failed")))
            result = self._do(name, action)
            if self._fate.get("fate") == "fall" and "objectId" in self._fate:
                self._fall(self._object(str(self._fate["objectId"])))
                result = self._event(name, action_return=result.get("actionReturn"))
            return result
        except _Refused as refused:
            return self._event(name, success=False, error=str(refused))
        finally:
            self._fate = {}

    def _do(self, name: str, action: Mapping[str, Any]) -> dict[str, Any]:
        handler = getattr(self, f"_{name}", None)
        if handler is None and name in FLAGS:
            return self._flag(action, *FLAGS[name])
        if handler is None:
            raise _Refused(f"{name} is not scripted in this double ({LABEL})")
        result: dict[str, Any] = handler(action)
        return result

    # -- actions -----------------------------------------------------------------------------------

    def _GetInteractablePoses(self, action: Mapping[str, Any]) -> dict[str, Any]:
        centre = self._object(str(action.get("objectId")))["position"]
        pose = {
            "x": centre["x"] + 0.5,
            "y": 0.9,
            "z": centre["z"],
            "rotation": 270.0,
            "horizon": 30.0,
            "standing": True,
        }
        return self._event("GetInteractablePoses", action_return=[pose])

    def _TeleportFull(self, action: Mapping[str, Any]) -> dict[str, Any]:
        self.agent["position"] = dict(action["position"])
        self.agent["rotation"] = dict(action["rotation"])
        self.agent["cameraHorizon"] = float(action.get("horizon", 0.0))
        self._see()
        return self._event("TeleportFull")

    def _PickupObject(self, action: Mapping[str, Any]) -> dict[str, Any]:
        obj = self._reachable(action)
        self._unless_allowed(obj["pickupable"], f"{obj['objectId']} must have the trait CanPickup")
        if self.inventory:
            raise _Refused("Agent's hand is not empty")
        self._take_out(obj)
        obj["isPickedUp"] = True
        self.inventory = [{"objectId": obj["objectId"], "objectType": obj["objectType"]}]
        self._see()
        return self._event("PickupObject", action_return=obj["objectId"])

    def _PutObject(self, action: Mapping[str, Any]) -> dict[str, Any]:
        target = self._reachable(action)
        if not self.inventory:
            raise _Refused("No object held to place")
        open_receptacle = target["receptacle"] and (not target["openable"] or target["isOpen"])
        self._unless_allowed(open_receptacle, f"{target['objectId']} is not an open receptacle")
        self._land(self.objects[self.inventory[0]["objectId"]], target)
        return self._event("PutObject")

    def _DropHandObject(self, action: Mapping[str, Any]) -> dict[str, Any]:
        if not self.inventory:
            raise _Refused("nothing in hand to drop")
        self._land(self.objects[self.inventory[0]["objectId"]], self._floor())
        return self._event("DropHandObject")

    def _flag(self, action: Mapping[str, Any], capability: str, flag: str, value: bool) -> dict[str, Any]:
        name = str(action["action"])
        obj = self._reachable(action)
        self._unless_allowed(obj[capability], f"{obj['objectId']} cannot do {name}")
        obj[flag] = value
        if flag == "isOpen":
            obj["openness"] = 1.0 if value else 0.0
        return self._event(name)

    # -- fates -------------------------------------------------------------------------------------

    def _next_fate(self, name: str) -> dict[str, Any]:
        for fate in self.fates:
            if fate["action"] == name and fate.get("times", 1) > 0:
                fate["times"] = fate.get("times", 1) - 1
                return fate
        return {}

    def _unless_allowed(self, ok: object, problem: str) -> None:
        """Our model's rule for the action: broken, THOR refuses, unless the fate is to allow it."""
        if not ok and self._fate.get("fate") != "allow":
            raise _Refused(problem)

    def _land(self, held: dict[str, Any], target: dict[str, Any]) -> None:
        """``held`` leaves the hand for ``target``, or wherever its fate takes it."""
        self.inventory = []
        held["isPickedUp"] = False
        if self._fate.get("fate") == "fall" and "objectId" not in self._fate:
            self._fall(held)
            return
        if self._fate.get("fate") == "land":
            target = self._object(str(self._fate["receptacle"]))
        self._rest(held, target, target["position"])

    def _fall(self, obj: dict[str, Any]) -> None:
        floor = self._floor()
        self._rest(obj, floor, self._fate.get("position", floor["position"]))

    def _rest(self, obj: dict[str, Any], receptacle: dict[str, Any], position: Mapping[str, Any]) -> None:
        self._take_out(obj)
        obj.update(parentReceptacles=[receptacle["objectId"]], position=dict(position))
        receptacle["receptacleObjectIds"] = [*(receptacle.get("receptacleObjectIds") or ()), obj["objectId"]]
        self._see()

    # -- state -------------------------------------------------------------------------------------

    def _object(self, object_id: str) -> dict[str, Any]:
        obj = self.objects.get(object_id)
        if obj is None:
            raise _Refused(f"Object ID appears to be invalid: {object_id}")
        return obj

    def _reachable(self, action: Mapping[str, Any]) -> dict[str, Any]:
        obj = self._object(str(action.get("objectId")))
        problem = f"{obj['objectId']} is not interactable and (perhaps it is occluded by something)."
        self._unless_allowed(obj["visible"] or action.get("forceAction"), problem)
        return obj

    def _floor(self) -> dict[str, Any]:
        floor = next((o for o in self.objects.values() if o["objectType"] == "Floor"), None)
        if floor is None:
            raise _Refused(f"this scene has no Floor to land on ({LABEL})")
        return floor

    def _take_out(self, obj: dict[str, Any]) -> None:
        for parent in obj.get("parentReceptacles") or ():
            holder = self.objects.get(parent)
            if holder is not None and holder.get("receptacleObjectIds"):
                holder["receptacleObjectIds"] = [i for i in holder["receptacleObjectIds"] if i != obj["objectId"]]
        obj["parentReceptacles"] = None

    def _see(self) -> None:
        """THOR's ``visible``, by rule: within the visibility distance of the agent (no occlusion)."""
        here: dict[str, float] = self.agent["position"]
        for obj in self.objects.values():
            where = obj["position"]
            distance = math.dist((here["x"], here["z"]), (where["x"], where["z"]))
            obj["distance"] = distance
            obj["visible"] = obj["isInteractable"] = distance <= VISIBILITY or obj["isPickedUp"]

    def _event(self, name: str, *, success: bool = True, error: str = "", action_return: Any = None) -> dict[str, Any]:
        template = {
            "objects": list(self.objects.values()),
            "agent": dict(self.agent, name="agent", isStanding=True, inHighFrictionArea=False),
            "inventoryObjects": list(self.inventory),
            "sceneName": self.scene_name,
            "errorCode": None,
            "collided": False,
            "collidedObjects": [],
            "thirdPartyCameras": [],
            "fov": 90.0,
        }
        return event(template, name, success=success, error=error, action_return=action_return)
