"""Exploration sub-goals (PDDLEGO): where to look for an item whose location the memory does not know.

When a goal needs such an item, the planner falls back to an information-gathering sub-goal: go to
a place, or open a closed container, so that perception sees what is there. Places are tried in this
order: where the item was last seen, then where things of its type are usually found in this home's
history, then the rooms nearest the robot and the closed containers in them. A room the robot stands
in counts as seen (perception reports it), but its closed containers do not.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kg_memory.model import Fact
from planning.world import World

ROOM_PREDICATES = ("in_room", "appliance_in")  # where a fixture is
OPEN = "open"


@dataclass(frozen=True, slots=True)
class Place:
    """A place to look: a room (go there) or a closed container (open it)."""

    name: str
    room: str
    container: bool
    reason: str

    def subgoal(self, robot: str) -> str:
        return f"({OPEN} {self.name})" if self.container else f"(robot_at {robot} {self.room})"

    def to_json(self) -> dict[str, Any]:
        return {"place": self.name, "room": self.room, "container": self.container, "reason": self.reason}


def robot_room(world: World, robot: str) -> str | None:
    return next((f.args[1] for f in sorted(world.facts_about(robot), key=str) if f.predicate == "robot_at"), None)


def room_of(world: World, name: str) -> str | None:
    """The room of a fixture, a person, or the robot; ``None`` for anything else."""
    for fact in sorted(world.facts_about(name), key=str):
        if fact.args[0] == name and fact.predicate in (*ROOM_PREDICATES, "person_in", "robot_at"):
            return fact.args[1]
    return None


def _closed_container(world: World, name: str) -> bool:
    schema = world.domain.predicates.get(OPEN)
    if schema is None or not world.is_a(name, schema.parameters[0].type):
        return False
    return not world.holds(Fact(OPEN, (name,)))


def _rooms_by_distance(world: World, start: str | None) -> list[str]:
    rooms = sorted(world.objects_of("room")) if "room" in world.domain.types else []
    if start is None:
        return rooms
    seen, order, queue = {start}, [start], deque([start])
    while queue:
        here = queue.popleft()
        for fact in sorted(world.facts_about(here), key=str):
            if fact.predicate == "connected" and fact.args[0] == here and fact.args[1] not in seen:
                seen.add(fact.args[1])
                order.append(fact.args[1])
                queue.append(fact.args[1])
    return order + [r for r in rooms if r not in seen]


def _containers_in(world: World, room: str) -> list[str]:
    fixtures = (f.args[0] for f in world.facts_about(room) if f.predicate in ROOM_PREDICATES and f.args[1] == room)
    return sorted(n for n in fixtures if _closed_container(world, n))


def _place(world: World, name: str, reason: str) -> list[Place]:
    """The places to look at ``name``: its container if closed, else its room."""
    if world.type_of(name) == "room":
        return [Place(name, name, False, reason)]
    room = room_of(world, name)
    if room is None:
        return []
    if _closed_container(world, name):
        return [Place(room, room, False, reason), Place(name, room, True, reason)]
    return [Place(room, room, False, reason)]


def search_places(
    world: World,
    *,
    robot: str,
    last_seen: str | None = None,
    usual: Sequence[str] = (),
    explored: Collection[str] = (),
) -> list[Place]:
    """Places to look, in order, without those ``explored`` (names of rooms and containers)."""
    here = robot_room(world, robot)
    done = set(explored) | ({here} if here else set())
    candidates: list[Place] = []
    if last_seen is not None:
        candidates += _place(world, last_seen, "last seen there")
    for name in usual:
        candidates += _place(world, name, "where its kind is usually found")
    for room in _rooms_by_distance(world, here):
        candidates.append(Place(room, room, False, "nearest unexplored room"))
        candidates += [Place(c, room, True, "closed container nearby") for c in _containers_in(world, room)]
    unique: dict[str, Place] = {}
    for place in candidates:
        if place.name not in done and place.name not in unique:
            unique[place.name] = place
    return list(unique.values())


def usual_places(world: World, type_: str, placed: Iterable[Fact]) -> list[str]:
    """Receptacles things of ``type_`` have been on or in (``placed``: facts from history), most often first."""
    counts: dict[str, int] = {}
    for fact in placed:
        if fact.arity == 2 and world.type_of(fact.args[0]) == type_ and room_of(world, fact.args[1]) is not None:
            counts[fact.args[1]] = counts.get(fact.args[1], 0) + 1
    return sorted(counts, key=lambda n: (-counts[n], n))


__all__ = ["Place", "room_of", "robot_room", "search_places", "usual_places"]
