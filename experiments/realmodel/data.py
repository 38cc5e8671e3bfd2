"""The hand-written data (tests/fixtures/realmodel/): reports with their exact deltas, task requests
with their goals, two sets each, all about the household home surveyed with seed 31."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kg_memory import Delta, Fact

FIXTURES = Path(__file__).parents[2] / "tests" / "fixtures" / "realmodel"
SEED = 31  # the surveyed home the data is true to
SETS: dict[str, tuple[str, str]] = {  # set name → (reports file, tasks file)
    "reports": ("reports.jsonl", "tasks.jsonl"),
    "heldout": ("heldout_reports.jsonl", "heldout_tasks.jsonl"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    id: str
    set: str
    kind: str
    text: str
    remove: frozenset[Fact]
    add: frozenset[Fact]

    @property
    def delta(self) -> Delta:
        return Delta(remove=self.remove, add=self.add)


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    id: str
    set: str
    request: str
    goal: frozenset[str]  # ground literals, "(pred a b)" or "(not (pred a b))"


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number} is not JSON: {line!r}") from exc


def load_reports(set_name: str, *, folder: Path = FIXTURES) -> list[Report]:
    return [
        Report(
            id=r["id"],
            set=set_name,
            kind=r["kind"],
            text=r["report"],
            remove=frozenset(Fact.parse(f) for f in r["remove"]),
            add=frozenset(Fact.parse(f) for f in r["add"]),
        )
        for r in _lines(folder / SETS[set_name][0])
    ]


def load_tasks(set_name: str, *, folder: Path = FIXTURES) -> list[Task]:
    return [
        Task(id=t["id"], set=set_name, request=t["request"], goal=frozenset(" ".join(g.split()) for g in t["goal"]))
        for t in _lines(folder / SETS[set_name][1])
    ]
