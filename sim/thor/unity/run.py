"""The double's entry point, run by the executable ``write_executable`` makes."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from .protocol import Backend, FifoPeer, load_json, serve
from .replay import ReplayBackend
from .scripted import ScriptedBackend


def main(config_text: str, argv: Sequence[str]) -> int:
    """Entry point of the executable: ``argv`` is what the controller passes Unity (screen size)."""
    config = json.loads(config_text)
    backend: Backend
    if config["backend"] == "replay":
        scene = config.get("scene_file")
        objects = list(load_json(Path(scene)).values()) if scene else None
        backend = ReplayBackend(load_json(Path(config["trace"])), objects)
    else:
        backend = ScriptedBackend(load_json(Path(config["scene_file"])), config)
    size = (_flag(argv, "-screen-width", 300), _flag(argv, "-screen-height", 300))
    peer = FifoPeer(os.environ["AI2THOR_FIFO_SERVER_PIPE_PATH"], os.environ["AI2THOR_FIFO_CLIENT_PIPE_PATH"])
    log = Path(config["log"]) if config.get("log") else None
    return serve(backend, peer, log, size)


def _flag(argv: Sequence[str], flag: str, default: int) -> int:
    args = list(argv)
    return int(args[args.index(flag) + 1]) if flag in args[:-1] else default
