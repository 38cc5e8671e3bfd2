"""A stand-in for AI2-THOR's Unity side, speaking ai2thor 5.0.0's FIFO protocol, for tests without a build.

The real :class:`ai2thor.controller.Controller` launches it as its ``local_executable_path``: the
controller makes two named pipes and passes their paths in ``AI2THOR_FIFO_SERVER_PIPE_PATH`` (we write
events there) and ``AI2THOR_FIFO_CLIENT_PIPE_PATH`` (actions arrive there). A message is a sequence of
fields, each a ``!BI`` header (field type, length) and its body, closed by an end-of-message header
(type 255, length 0). Events are msgpack metadata (type 1) in the multi-agent form ``{"agents": [...],
"sequenceId", "activeAgentId", "thirdPartyCameras"}``; actions arrive as JSON (type 2). The first event
is sent unasked; every later one echoes the action's ``sequenceId``. The controller's start-up asks
``GetScenesInBuild``, ``Reset(sceneName=...)`` and ``Initialize(...)``, then every ``step``.

What the events say comes from a :class:`Backend`: recorded metadata (``replay.ReplayBackend``) or
scripted state (``scripted.ScriptedBackend``: scripted, not THOR physics). Every action received is
appended to a JSON-lines log, so tests can check what went over the wire.
"""

from __future__ import annotations

import copy
import gzip
import json
import struct
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import msgpack

HEADER = struct.Struct("!BI")
METADATA, ACTION, END = 1, 2, 255
STARTUP = ("GetScenesInBuild", "Reset")


class Backend(Protocol):
    def first(self) -> dict[str, Any]:
        """The agent metadata of the event sent before any action."""
        ...

    def answer(self, action: Mapping[str, Any]) -> dict[str, Any]:
        """The agent metadata answering ``action`` (start-up actions included)."""
        ...


class FifoPeer:
    """Unity's end of the two pipes."""

    def __init__(self, server_pipe: str, client_pipe: str) -> None:
        self._server_path, self._client_path = server_pipe, client_pipe
        self._out: BinaryIO | None = None
        self._in: BinaryIO | None = None

    def send(self, agent: Mapping[str, Any], sequence_id: int) -> None:
        if self._out is None:
            self._out = open(self._server_path, "wb")  # noqa: SIM115 - held open for the session
        body = msgpack.dumps(
            {"agents": [dict(agent)], "sequenceId": sequence_id, "activeAgentId": 0, "thirdPartyCameras": []}
        )
        self._out.write(HEADER.pack(METADATA, len(body)) + body + HEADER.pack(END, 0))
        self._out.flush()

    def receive(self) -> dict[str, Any] | None:
        """The next action, or ``None`` once the controller has closed its pipe."""
        if self._in is None:
            self._in = open(self._client_path, "rb")  # noqa: SIM115 - held open for the session
        action: dict[str, Any] | None = None
        while True:
            header = self._in.read(HEADER.size)
            if len(header) < HEADER.size:
                return None
            kind, length = HEADER.unpack(header)
            if kind == END:
                return action
            body = self._in.read(length)
            if kind == ACTION:
                action = json.loads(body)


def serve(backend: Backend, peer: FifoPeer, log: Path | None, size: tuple[int, int]) -> int:
    """Answer actions until the controller goes away."""
    peer.send(_sized(backend.first(), size), 0)
    while (action := peer.receive()) is not None:
        if log is not None:
            with log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(action) + "\n")
        peer.send(_sized(backend.answer(action), size), int(action.get("sequenceId", 0)))
    return 0


def _sized(agent: dict[str, Any], size: tuple[int, int]) -> dict[str, Any]:
    """THOR reports the screen size it was started with; the controller checks it."""
    return {**agent, "screenWidth": size[0], "screenHeight": size[1]}


def startup_answer(template: Mapping[str, Any], action: Mapping[str, Any], scenes: Sequence[str]) -> dict[str, Any]:
    """``GetScenesInBuild`` (the scene names, ``_physics`` ones included) and ``Reset``."""
    if action["action"] == "GetScenesInBuild":
        names = sorted({*scenes, *(s.removesuffix("_physics") for s in scenes)})
        return event(template, "GetScenesInBuild", action_return=names)
    return event(template, "Reset")


def event(
    template: Mapping[str, Any], action: str, *, success: bool = True, error: str = "", action_return: Any = None
) -> dict[str, Any]:
    """Agent metadata like ``template`` after ``action``."""
    agent = copy.deepcopy(dict(template))
    agent.update(lastAction=action, lastActionSuccess=success, errorMessage=error, actionReturn=action_return)
    agent["errorCode"] = None
    return agent


def wire(action: Mapping[str, Any]) -> dict[str, Any]:
    """An action as sent, without the ``sequenceId`` the controller's server adds."""
    return {k: v for k, v in action.items() if k != "sequenceId"}


def write_executable(folder: Path, config: Mapping[str, Any]) -> Path:
    """An executable for ``Controller(local_executable_path=...)`` that runs this double with ``config``.

    It imports this package alone (as ``unity``), not ``sim``: a start-up as quick as Unity's matters.
    """
    script = folder / "thor-double"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})\n"
        "from unity.run import main\n"
        f"sys.exit(main({json.dumps(dict(config))!r}, sys.argv[1:]))\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def load_json(path: Path) -> Any:
    """A ``.json`` or ``.json.gz`` file the lab has already checked (see ``sim.thor.data``)."""
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
