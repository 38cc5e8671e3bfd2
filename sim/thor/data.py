"""Reading AI2-THOR recordings: scene files (objectId → object metadata) and traces
(``{"scene", "steps": [{"action", "metadata"}]}``), as ``.json`` or ``.json.gz``, with clear errors."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any

from perception import ThorMetadataError, scene_objects


def read_json(path: Path) -> Any:
    """A ``.json`` or ``.json.gz`` file's content; a file that is neither is a :class:`ThorMetadataError`."""
    try:
        raw = path.read_bytes()
        text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        return json.loads(text)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise ThorMetadataError(str(path), f"not a readable gzip file: {exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ThorMetadataError(str(path), f"not JSON: {exc}") from exc


def read_scene(path: Path) -> dict[str, Any]:
    """A scene file: every object's metadata keyed by objectId (checked like THOR's own metadata)."""
    data = read_json(path)
    objects = scene_objects(data, str(path))
    if isinstance(data, dict) and "objects" in data:
        return {str(o["objectId"]): o for o in objects}
    wrong = [k for k, o in data.items() if o["objectId"] != k]
    if wrong:
        raise ThorMetadataError(str(path), f"keys must be the objects' objectIds; {wrong[0]} is not")
    return dict(data)


def read_trace(path: Path) -> dict[str, Any]:
    """A recorded session: the scene and each step's action dict and the metadata that came back."""
    data = read_json(path)
    steps = data.get("steps") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("scene"), str) or not isinstance(steps, list) or not steps:
        raise ThorMetadataError(str(path), 'a trace is {"scene": ..., "steps": [{"action": {...}, "metadata": {...}}]}')
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("action"), dict) or "action" not in step["action"]:
            raise ThorMetadataError(f"{path} step {index}", 'each step needs an "action" dict naming its action')
        scene_objects(step.get("metadata"), f"{path} step {index}")
    return data


def scene_name(path: Path) -> str:
    """``FloorPlan1_physics.json.gz`` → ``FloorPlan1_physics``."""
    return path.name.split(".")[0]
