"""``l3mp thor import-scene | replay``: AI2-THOR scenes into memories, recorded sessions replayed.

l3mp thor import-scene ../shared/thor/scenes/FloorPlan1_physics.json.gz --memory kitchen --json
l3mp thor import-scene ../shared/thor/scenes/FloorPlan1_physics.json.gz --memory walks --domain thor-travel
l3mp thor replay ../shared/thor/traces/pickup_mug.json.gz --json
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import click

from l3mp.cli import CliState, json_option, pass_state


@click.group()
def thor() -> None:
    """AI2-THOR: import scenes, replay recorded sessions through the real Controller."""


@thor.command("import-scene")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--memory", required=True, help="the thor memory to create")
@click.option(
    "--domain",
    type=click.Choice(["thor", "thor-travel"]),
    default="thor",
    show_default=True,
    help="thor-travel: going to an object costs the distance walked, measured between the objects",
)
@json_option
@pass_state
def import_scene(state: CliState, file: Path, memory: str, domain: str, as_json: bool) -> int:
    """Create a thor memory from a scene file (objectId → object metadata; .json or .json.gz)."""
    from kg_memory import WorldMemory
    from l3mp.pipelines import SensorUpdater
    from perception import ThorNames, thor_observation
    from sim.thor.data import read_scene, scene_name

    objects = read_scene(file)  # a malformed file stops here, before anything is written
    with state.opened_store() as store:
        world = WorldMemory.create(store, memory, domain)
        observation = thor_observation(objects, ThorNames(objects), world.domain, scene=scene_name(file))
        update = SensorUpdater(world).apply(observation).update
        if update.status.value == "rejected":
            store.delete_memory(memory)  # nothing half-made is left behind
        result = {
            "memory": memory,
            "scene": scene_name(file),
            "status": update.status.value,
            "objects": len(objects),
            "entities": len(world.entities()) if update.status.value != "rejected" else 0,
            "facts": len(world.facts()) if update.status.value != "rejected" else 0,
            "domain": domain,
            "issues": [i.message for i in update.issues],
        }
    _print(state, result, as_json, f"{result['scene']}: {result['entities']} entities, {result['facts']} facts")
    return 0 if update.status.value != "rejected" else 2


@thor.command()
@click.argument("trace", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--memory", help="keep the replayed memory under this name in the store (default: a temporary store)")
@click.option("--scene-file", type=click.Path(path_type=Path, dir_okay=False, exists=True), help="the reset scene")
@json_option
@pass_state
def replay(state: CliState, trace: Path, memory: str | None, scene_file: Path | None, as_json: bool) -> int:
    """Replay a recorded session through the real ai2thor Controller and a Unity-side double."""
    from kg_memory import DomainRegistry
    from kg_memory.stores import SQLiteStore
    from sim.thor.replay import replay_trace

    if memory is not None:
        with state.opened_store() as store:
            result = replay_trace(trace, store, memory, scene_file=scene_file)
    else:
        with tempfile.TemporaryDirectory(prefix="l3mp-replay-") as folder:
            temporary = SQLiteStore(Path(folder) / "replay.db", DomainRegistry())
            try:
                result = replay_trace(trace, temporary, "replay", scene_file=scene_file)
            finally:
                temporary.close()
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        for step in result.steps:
            sent = "as recorded" if step.sent is None else f"{step.pddl} as {json.dumps(step.sent)}"
            same = "" if step.matched is None else (" (equal)" if step.matched else " (DIFFERENT)")
            agrees = "agrees" if step.agrees else "DISAGREES: " + "; ".join(step.problems[:2])
            state.console.print(
                f"{step.index:>3} recorded {json.dumps(step.recorded)}; sent {sent}{same}; memory {agrees}",
                highlight=False,
                soft_wrap=True,
            )
        state.console.print(json.dumps(result.totals))
    return 0 if result.ok else 1


def _print(state: CliState, result: dict[str, Any], as_json: bool, line: str) -> None:
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        state.console.print(line)
        for issue in result["issues"]:
            state.console.print(f"  issue: {issue}")
