"""Serving a recorded AI2-THOR session to the real Controller (see ``protocol``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .protocol import STARTUP, event, startup_answer, wire


class ReplayBackend:
    """Serves a recorded session: its events in order, answering each action with the recorded event.

    A trace that starts with ``Initialize`` answers the controller's own ``Initialize`` with it; one that
    does not answers it with the scene's reset state (``scene_objects``), in the recording's format. An
    action other than the recorded one is refused (``lastActionSuccess: false``), never served.
    """

    def __init__(self, trace: Mapping[str, Any], scene_objects: Sequence[Mapping[str, Any]] | None = None) -> None:
        self.scene = str(trace["scene"])
        steps = list(trace["steps"])
        self.steps = steps[1:] if steps and steps[0]["action"]["action"] == "Initialize" else steps
        if self.steps is not steps:
            self.initialize = dict(steps[0]["metadata"])
        else:
            base = event(steps[0]["metadata"], "Initialize")
            self.initialize = {**base, "objects": list(scene_objects or base["objects"]), "inventoryObjects": []}
        self.position = 0

    def first(self) -> dict[str, Any]:
        return event(self.initialize, "")

    def answer(self, action: Mapping[str, Any]) -> dict[str, Any]:
        name = action.get("action")
        if name in STARTUP:
            return startup_answer(self.initialize, action, [self.scene])
        if name == "Initialize":
            return dict(self.initialize)
        if self.position >= len(self.steps):
            return event(self.initialize, str(name), success=False, error="the recording has no further step")
        step = self.steps[self.position]
        self.position += 1
        if wire(action) != step["action"]:
            message = f"the recording sent {json.dumps(step['action'])} here, not {json.dumps(wire(action))}"
            return event(step["metadata"], str(name), success=False, error=message)
        return dict(step["metadata"])
