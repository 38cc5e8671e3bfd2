"""A scripted Unity side for whole tasks: scripted state, NOT THOR physics.

It starts from a real scene file (every object's metadata after a reset) and changes that metadata the
way THOR reports the result of an action, by rule: a picked-up object leaves its receptacles and is in
the agent's inventory; a put one rests in the receptacle; open/close and toggle flip their flags. The
agent sees (``visible``) what is within 1.5 m of where it stands, THOR's default visibility distance.
Nothing falls, slides or collides. ``refuse`` scripts refusals: the first ``times`` calls of an action
fail with ``lastActionSuccess: false`` and the given ``errorMessage``, changing nothing.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from .protocol import STARTUP, event, startup_answer

VISIBILITY = 1.5  # metres, THOR's default visibilityDistance
LABEL = "scripted, not THOR physics"
FLAGS = {
    "OpenObject": ("openable", "isOpen", True),
    "CloseObject": ("openable", "isOpen", False),
    "ToggleObjectOn": ("toggleable", "isToggled", True),
    "ToggleObjectOff": ("toggleable", "isToggled", False),
    "CleanObject": ("dirtyable", "isDirty", False),
    "FillObjectWithLiquid": ("canFillWithLiquid", "isFilledWithLiquid", True),
    "EmptyLiquidFromObject": ("canFillWithLiquid", "isFilledWithLiquid", False),
}


class ScriptedBackend:
    def __init__(self, scene: Mapping[str, Any], config: Mapping[str, Any]) -> None:
        self.scene_name = str(config.get("scene", "FloorPlan1_physics"))
        self.objects: dict[str, dict[str, Any]] = {k: copy.deepcopy(dict(v)) for k, v in scene.items()}
        start = config.get("agent", {"x": 0.0, "y": 0.9, "z": 0.0})
        self.agent: dict[str, Any] = {"position": dict(start), "rotation": {"x": 0.0, "y": 0.0, "z": 0.0}}
        self.refusals = [dict(r) for r in config.get("refuse", ())]
        self.inventory: list[dict[str, str]] = [
            {"objectId": k, "objectType": o["objectType"]} for k, o in self.objects.items() if o["isPickedUp"]
        ]
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
        refusal = self._refusal(name)
        if refusal is not None:
            return self._event(name, success=False, error=refusal)
        handler = getattr(self, f"_{name}", None)
        if handler is None and name in FLAGS:
            return self._flag(action, *FLAGS[name])
        if handler is None:
            return self._event(name, success=False, error=f"{name} is not scripted in this double ({LABEL})")
        result: dict[str, Any] = handler(action)
        return result

    # -- actions -----------------------------------------------------------------------------------

    def _GetInteractablePoses(self, action: Mapping[str, Any]) -> dict[str, Any]:
        target = self.objects.get(str(action.get("objectId")))
        if target is None:
            return self._event(
                "GetInteractablePoses", success=False, error=f"objectId {action.get('objectId')} not found"
            )
        centre = target["position"]
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
        obj, problem = self._reachable(action)
        if obj is None or problem:
            return self._event("PickupObject", success=False, error=problem)
        if not obj["pickupable"]:
            return self._event("PickupObject", success=False, error=f"{obj['objectId']} must have the trait CanPickup")
        if self.inventory:
            return self._event("PickupObject", success=False, error="Agent's hand is not empty")
        self._take_out(obj)
        obj["isPickedUp"] = True
        self.inventory = [{"objectId": obj["objectId"], "objectType": obj["objectType"]}]
        return self._event("PickupObject", action_return=obj["objectId"])

    def _PutObject(self, action: Mapping[str, Any]) -> dict[str, Any]:
        target, problem = self._reachable(action)
        if target is None or problem:
            return self._event("PutObject", success=False, error=problem)
        if not self.inventory:
            return self._event("PutObject", success=False, error="No object held to place")
        if not target["receptacle"] or (target["openable"] and not target["isOpen"]):
            return self._event("PutObject", success=False, error=f"{target['objectId']} is not an open receptacle")
        held = self.objects[self.inventory[0]["objectId"]]
        held.update(isPickedUp=False, parentReceptacles=[target["objectId"]], position=dict(target["position"]))
        target["receptacleObjectIds"] = [*(target.get("receptacleObjectIds") or ()), held["objectId"]]
        self.inventory = []
        self._see()
        return self._event("PutObject")

    def _DropHandObject(self, action: Mapping[str, Any]) -> dict[str, Any]:
        if not self.inventory:
            return self._event("DropHandObject", success=False, error="nothing in hand to drop")
        held = self.objects[self.inventory[0]["objectId"]]
        floor = next((k for k, o in self.objects.items() if o["objectType"] == "Floor"), None)
        held.update(isPickedUp=False, parentReceptacles=[floor] if floor else None)
        self.inventory = []
        self._see()
        return self._event("DropHandObject")

    def _flag(self, action: Mapping[str, Any], capability: str, flag: str, value: bool) -> dict[str, Any]:
        name = str(action["action"])
        obj, problem = self._reachable(action)
        if obj is None or problem:
            return self._event(name, success=False, error=problem)
        if not obj[capability]:
            return self._event(name, success=False, error=f"{obj['objectId']} cannot do {name}")
        obj[flag] = value
        if flag == "isOpen":
            obj["openness"] = 1.0 if value else 0.0
        return self._event(name)

    # -- state -------------------------------------------------------------------------------------

    def _reachable(self, action: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
        object_id = str(action.get("objectId"))
        obj = self.objects.get(object_id)
        if obj is None:
            return None, f"Object ID appears to be invalid: {object_id}"
        if not obj["visible"] and not action.get("forceAction"):
            return obj, f"{object_id} is not interactable and (perhaps it is occluded by something)."
        return obj, ""

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

    def _refusal(self, name: str) -> str | None:
        for refusal in self.refusals:
            if refusal["action"] == name and refusal.get("times", 1) > 0:
                refusal["times"] = refusal.get("times", 1) - 1
                return str(refusal["errorMessage"])
        return None

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
