"""A floor plan for a generated home: where its rooms lie and how far it is through each door.

The household domain only knows which rooms connect; ``household-travel`` also knows how far the robot
walks through each door (the static numeric facts ``(= (distance a b) 4.3)``). The plan is laid out
from the home's doors, so a home of the unit-cost domain is unchanged, and it draws from its own random
stream, so a seed gives the same plan in every process.

Rooms are squares of :data:`CELL` metres on a grid, each placed beside the room it was first reached
from (breadth first from a hallway). A door between rooms side by side is in their shared wall, up to
:data:`DOOR_SPREAD` from its middle: the walk between the centres is 4-5 m. A door between rooms that
are not side by side opens onto a corridor that runs round the rooms between them: the walk is the
Manhattan distance between the centres plus a cell to get out and round the corners. So two short hops
through a room between can be cheaper than one long corridor: the cheapest route may take more steps.

A building (:mod:`sim.building`) has a grid per floor, each laid out from its elevator lobby, so
``positions`` are within a room's floor. Between floors, a ride in the elevator costs a wait and a
little per floor, and a flight of stairs a fixed climb: one floor is cheaper by the stairs, several
by the elevator.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

from kg_memory import Domain
from kg_memory.model import Fact
from sim._catalogue import ELEVATOR_LOBBY
from sim.home import BuildingSpec, Home

CELL = 4.0  # metres: a room's side
DOOR_SPREAD = 1.5  # metres: how far from the middle of its wall a door may stand
DISTANCE = "distance"  # the static numeric function household-travel's move costs
ELEVATOR_WAIT = 15.0  # metres of walking that waiting for and boarding the elevator is worth
ELEVATOR_PER_FLOOR = 1.5  # metres of walking each floor the car travels is worth
STAIR_FLIGHT = 9.0  # metres of walking one flight of stairs is worth

Cell = tuple[int, int]


@dataclass(frozen=True, slots=True)
class FloorPlan:
    """Room centres in metres and the walk between the centres of each pair of connected rooms."""

    positions: Mapping[str, tuple[float, float]]  # within the room's floor
    walks: Mapping[tuple[str, str], float]  # both directions, metres, one decimal

    def distance(self, a: str, b: str) -> float:
        return self.walks[(a, b)]

    def facts(self) -> frozenset[Fact]:
        """``(= (distance a b) metres)`` for every door, both ways."""
        return frozenset(Fact(DISTANCE, pair, value) for pair, value in self.walks.items())


def lay_out(home: Home) -> FloorPlan:
    """The home's floor plan; the same home always gives the same plan."""
    rng = random.Random(f"floor plan {home.spec.seed}")
    cells = _place(home, rng)
    walks: dict[tuple[str, str], float] = {}
    for a in home.rooms:
        for b in home.neighbours[a]:
            if (b, a) in walks:
                walks[(a, b)] = walks[(b, a)]
            elif home.floor_of[a] != home.floor_of[b]:
                walks[(a, b)] = _between_floors(home, a, b)
            else:
                walks[(a, b)] = round(_walk(cells[a], cells[b], rng), 1)
    positions = {room: ((x + 0.5) * CELL, (y + 0.5) * CELL) for room, (x, y) in cells.items()}
    return FloorPlan(MappingProxyType(positions), MappingProxyType(walks))


def home_facts(home: Home, domain: Domain) -> frozenset[Fact]:
    """The home's facts as ``domain`` states them: with the distances when it has the function."""
    if DISTANCE in domain.functions:
        return home.facts | lay_out(home).facts()
    return home.facts


def _place(home: Home, rng: random.Random) -> dict[str, Cell]:
    """Each room on a grid cell: a home's from its first hallway, a building's floor by floor."""
    if isinstance(home.spec, BuildingSpec):
        return _place_floors(home, rng)
    halls = [r for r in home.rooms if home.by_name[r].attrs.get("kind") == "hallway"]
    start = (halls or list(home.rooms))[0]
    return _place_rooms(home.rooms, start, home.neighbours.__getitem__, rng)


def _place_floors(home: Home, rng: random.Random) -> dict[str, Cell]:
    """A grid per floor from its elevator lobby, through the doors within the floor."""
    floors: dict[int, list[str]] = {}
    for room in home.rooms:
        floors.setdefault(home.floor_of[room], []).append(room)
    cells: dict[str, Cell] = {}
    for floor in sorted(floors):
        rooms = floors[floor]
        lobbies = [r for r in rooms if home.by_name[r].attrs.get("kind") == ELEVATOR_LOBBY.label]
        cells |= _place_rooms(rooms, (lobbies or rooms)[0], partial(_same_floor, home, floor), rng)
    return cells


def _same_floor(home: Home, floor: int, room: str) -> list[str]:
    return [other for other in home.neighbours[room] if home.floor_of[other] == floor]


def _place_rooms(
    rooms: Iterable[str], start: str, neighbours: Callable[[str], Iterable[str]], rng: random.Random
) -> dict[str, Cell]:
    """Breadth first from ``start``, each room on a free cell nearest the room it was reached from."""
    cells: dict[str, Cell] = {start: (0, 0)}
    taken = {(0, 0)}
    queue = deque([start])
    while queue:
        room = queue.popleft()
        for other in neighbours(room):
            if other not in cells:
                cells[other] = _free_cell_near(cells[room], taken, rng)
                taken.add(cells[other])
                queue.append(other)
    for room in rooms:  # a room no door reaches (none in a generated home) still gets a place
        if room not in cells:
            cells[room] = _free_cell_near((0, 0), taken, rng)
            taken.add(cells[room])
    return cells


def _free_cell_near(origin: Cell, taken: set[Cell], rng: random.Random) -> Cell:
    """A random free cell among those nearest ``origin`` (Manhattan rings outwards)."""
    ring = 1
    while True:
        x0, y0 = origin
        free = [
            (x0 + dx, y0 + dy)
            for dx in range(-ring, ring + 1)
            for dy in (ring - abs(dx), -(ring - abs(dx)))
            if (x0 + dx, y0 + dy) not in taken
        ]
        if free:
            return rng.choice(sorted(set(free)))
        ring += 1


def _between_floors(home: Home, a: str, b: str) -> float:
    """The elevator's wait and travel between two lobbies, or one flight between stairwells."""
    floors = abs(home.floor_of[a] - home.floor_of[b])
    if home.by_name[a].attrs.get("kind") == ELEVATOR_LOBBY.label:
        return round(ELEVATOR_WAIT + ELEVATOR_PER_FLOOR * floors, 1)
    return STAIR_FLIGHT * floors


def _walk(a: Cell, b: Cell, rng: random.Random) -> float:
    """Metres from the centre of ``a`` to the centre of ``b`` through their door."""
    manhattan = abs(a[0] - b[0]) + abs(a[1] - b[1])
    if manhattan == 1:  # side by side: the door is in the shared wall
        offset = rng.uniform(-DOOR_SPREAD, DOOR_SPREAD)
        return 2 * math.hypot(CELL / 2, offset)
    return manhattan * CELL + CELL  # a corridor round the rooms between


@dataclass(frozen=True, slots=True)
class Detour:
    """A room the robot reaches cheapest by more steps than the fewest it needs."""

    room: str
    metres: float  # the cheapest walk
    steps: int  # its moves (the fewest among equally cheap walks)
    fewest: int  # the fewest moves of any walk


def detours(home: Home, start: str | None = None) -> tuple[Detour, ...]:
    """Every room where cheapest and shortest differ, from ``start`` (default: where the robot is).

    Worked out by hand (Dijkstra and breadth first), never by a planner, so tests and benchmarks can
    hold the planners to it."""
    start = start or next(f.args[1] for f in home.facts if f.predicate == "robot_at")
    plan = lay_out(home)
    best, fewest = _cheapest(home, plan, start), _fewest_steps(home, start)
    return tuple(Detour(r, *best[r], fewest[r]) for r in home.rooms if r in best and best[r][1] > fewest[r])


def _cheapest(home: Home, plan: FloorPlan, start: str) -> dict[str, tuple[float, int]]:
    best = {start: (0.0, 0)}
    queue = [(0.0, 0, start)]
    while queue:
        metres, steps, room = heapq.heappop(queue)
        if best[room] < (metres, steps):
            continue
        for other in home.neighbours[room]:
            found = (metres + plan.distance(room, other), steps + 1)
            if other not in best or found < best[other]:
                best[other] = found
                heapq.heappush(queue, (*found, other))
    return best


def _fewest_steps(home: Home, start: str) -> dict[str, int]:
    steps = {start: 0}
    queue = deque([start])
    while queue:
        room = queue.popleft()
        for other in home.neighbours[room]:
            if other not in steps:
                steps[other] = steps[room] + 1
                queue.append(other)
    return steps
