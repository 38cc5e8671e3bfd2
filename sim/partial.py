"""Partial observability for the open-world experiments.

The robot perceives only its room and the open containers in it (``sim.observe``). Here a memory starts
with a fraction of its items' locations unknown (perception lost track of them: a sensor update drops
their placing facts, so history keeps where each was last seen), and a task set whose target items
were moved since, often into a closed container, so the robot must explore to find them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from kg_memory import Delta, Fact, UpdateSource, WorldMemory
from sim.household import CONTAINER_TYPES
from sim.simulator import Simulator

PLACING = ("on", "inside")


@dataclass(frozen=True, slots=True, kw_only=True)
class HiddenTask:
    item: str
    person: str
    goal: str
    was: Fact  # where the memory last saw it
    now: Fact  # where it truly is
    stale: bool  # the memory still believes ``was`` (else the location is unknown)


def _placed(sim: Simulator, item: str) -> Fact | None:
    return next((f for f in sim.state if f.predicate in PLACING and f.args[0] == item), None)


def hide_target(sim: Simulator, rng: random.Random, *, stale: bool) -> HiddenTask:
    """Move a random placed item to another receptacle in the truth (a closed container when there is one)."""
    items = sorted(i for i in sim.home.of_type("book", "pen", "cup", "dish", "remote", "phone") if _placed(sim, i))
    people = sorted(sim.home.of_type("person"))
    item, person = rng.choice(items), rng.choice(people)
    was = _placed(sim, item)
    assert was is not None
    containers = sorted(sim.home.of_type(*CONTAINER_TYPES))
    surfaces = sorted(r for r in sim.home.of_type("surface") if r != was.args[1])
    target = rng.choice(containers if containers and rng.random() < 0.6 else surfaces)
    now = Fact("inside" if target in containers else "on", (item, target))
    closing = {f for f in sim.state if f == Fact("open", (target,))}
    sim.world.apply(Delta(remove=frozenset({was, *closing}), add=frozenset({now})))
    return HiddenTask(item=item, person=person, goal=f"(in_hand {item} {person})", was=was, now=now, stale=stale)


def lose_track(
    memory: WorldMemory, fraction: float, rng: random.Random, *, must: tuple[str, ...] = (), keep: tuple[str, ...] = ()
) -> int:
    """Drop the placing facts of ``fraction`` of the memory's items (all of ``must``, none of ``keep``)."""
    placed = sorted((f for f in memory.facts() if f.predicate in PLACING), key=str)
    chosen = {f for f in placed if f.args[0] not in keep and (f.args[0] in must or rng.random() < fraction)}
    memory.apply(
        Delta(remove=frozenset(chosen)), source=UpdateSource.SENSOR, input="lost track (partial observability)"
    )
    return len(chosen)


__all__ = ["HiddenTask", "hide_target", "lose_track"]
