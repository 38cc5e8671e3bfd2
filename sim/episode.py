"""Episodes: a deterministic stream of steps from a seed, saved as JSONL.

Line 1 is the initial home; then one line per step, either a human event (English text
and ground-truth delta) or a task (English request, ground-truth goal, reference plan).
Every ``task_every``-th step is a task; tasks query the state without changing it. Nothing
time-dependent is written, so the same arguments give a byte-identical file.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sim.building import simulator_for
from sim.errors import EpisodeFormatError
from sim.events import Event
from sim.household import HomeSpec, generate_home
from sim.simulator import PlannedTask, Simulator

FORMAT = "l3mp.episode/1"
_REQUIRED: dict[object, frozenset[str]] = {
    "event": frozenset({"step", "kind", "category", "vagueness", "text", "delta"}),
    "task": frozenset({"step", "kind", "text", "goal", "reference_plan"}),
}


@dataclass(frozen=True, slots=True)
class EpisodeConfig:
    """``spec`` defaults to a paper-scale home generated from the episode's own seed."""

    seed: int = 0
    steps: int = 100
    task_every: int = 5
    spec: HomeSpec | None = None

    @property
    def home_spec(self) -> HomeSpec:
        return self.spec if self.spec is not None else HomeSpec(seed=self.seed)


def _home_record(config: EpisodeConfig, sim: Simulator) -> dict[str, Any]:
    return {
        "type": "home",
        "format": FORMAT,
        "domain": sim.domain.name,
        "seed": config.seed,
        "steps": config.steps,
        "task_every": config.task_every,
        "spec": asdict(config.home_spec),
        "entities": [e.to_json() for e in sim.home.entities],
        "facts": sorted(str(f) for f in sim.home.facts),
    }


def _event_record(step: int, event: Event) -> dict[str, Any]:
    return {
        "type": "event",
        "step": step,
        "kind": event.kind,
        "category": event.category,
        "vagueness": event.vagueness,
        "text": event.text,
        "entities": list(event.entities),
        "delta": event.delta.to_json(),
    }


def _task_record(step: int, planned: PlannedTask) -> dict[str, Any]:
    task = planned.task
    return {
        "type": "task",
        "step": step,
        "kind": task.kind,
        "text": task.text,
        "goal": task.goal_pddl,
        "entities": list(task.entities),
        "reference_plan": [str(a) for a in planned.reference.plan],
    }


def generate_episode(
    config: EpisodeConfig, on_step: Callable[[dict[str, Any]], None] | None = None
) -> Iterator[dict[str, Any]]:
    """The episode's records in order; ``on_step`` sees each step record (for progress)."""
    sim = simulator_for(generate_home(config.home_spec), seed=config.seed)
    yield _home_record(config, sim)
    for step in range(1, config.steps + 1):
        if config.task_every and step % config.task_every == 0:
            record = _task_record(step, sim.new_task())
        else:
            record = _event_record(step, sim.next_event())
        if on_step is not None:
            on_step(record)
        yield record


def write_episode(path: Path, records: Iterator[dict[str, Any]]) -> int:
    """Write records as JSONL (sorted keys, one per line); returns the number of steps."""
    path.parent.mkdir(parents=True, exist_ok=True)
    steps = 0
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")
            steps += record["type"] != "home"
    return steps


@dataclass(frozen=True, slots=True)
class Episode:
    home: dict[str, Any]
    steps: tuple[dict[str, Any], ...]


def read_episode(path: Path) -> Episode:
    lines = path.read_text(encoding="utf-8").splitlines()
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EpisodeFormatError(str(path), number, f"not JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise EpisodeFormatError(str(path), number, f"a record must be a JSON object, not {type(record).__name__}")
        records.append(record)
    if not records or records[0].get("type") != "home" or records[0].get("format") != FORMAT:
        raise EpisodeFormatError(str(path), 1, f"the first line must be the home record of format {FORMAT}")
    for number, record in enumerate(records[1:], start=2):
        required = _REQUIRED.get(record.get("type"))
        if required is None:
            raise EpisodeFormatError(str(path), number, f"unknown record type {record.get('type')!r}")
        missing = sorted(required - record.keys())
        if missing:
            raise EpisodeFormatError(str(path), number, f"a {record['type']} record needs {', '.join(missing)}")
    return Episode(records[0], tuple(records[1:]))


def summarize(episode: Episode) -> dict[str, Any]:
    """Home size, event and task counts by kind, and a few samples of each."""
    events = [s for s in episode.steps if s["type"] == "event"]
    tasks = [s for s in episode.steps if s["type"] == "task"]
    types = Counter(e["type"] for e in episode.home["entities"])
    return {
        "seed": episode.home["seed"],
        "entities": len(episode.home["entities"]),
        "facts": len(episode.home["facts"]),
        "entity_types": dict(sorted(types.items())),
        "events": len(events),
        "events_by_category": dict(sorted(Counter(e["category"] for e in events).items())),
        "events_by_kind": dict(sorted(Counter(e["kind"] for e in events).items())),
        "events_by_vagueness": dict(sorted(Counter(e["vagueness"] for e in events).items())),
        "tasks": len(tasks),
        "tasks_by_kind": dict(sorted(Counter(t["kind"] for t in tasks).items())),
        "mean_plan_length": sum(len(t["reference_plan"]) for t in tasks) / len(tasks) if tasks else 0.0,
        "event_samples": [e["text"] for e in events[:5]],
        "task_samples": [(t["text"], t["goal"], len(t["reference_plan"])) for t in tasks[:3]],
    }
