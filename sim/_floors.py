"""The rooms of a multi-floor building and their doors (see :mod:`sim.building`).

A building is a home whose rooms lie on floors: each floor has an elevator lobby, a stairwell and
corridors, with wards, washrooms, offices, day rooms, kitchenettes, a canteen and sluice rooms off the
corridors. Floors are joined by rooms too, so nothing new enters the domain: the elevator lobbies of all
floors are ``connected`` to each other (one ride from any floor to any other), and each stairwell to the
stairwells of the floors just above and below. Every room carries ``attrs["floor"]``, numbered from 1.

Only :class:`~sim.home.BuildingSpec` takes this path; a :class:`~sim.home.HomeSpec` home is built exactly
as before, draw for draw.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from typing import Protocol

from sim._catalogue import (
    CORRIDOR,
    CORRIDOR_LETTERS,
    ELEVATOR_LOBBY,
    EXTRA_DOOR,
    STAIRWELL,
    RoomKind,
    floor_room_kinds,
)


class HomeBuilder(Protocol):
    """What the floors need of the home builder (``sim._home_builder``, which calls them)."""

    rng: random.Random
    rooms: list[str]
    kind_of: dict[str, RoomKind]
    floor_of: dict[str, int]

    def add_room(self, kind: RoomKind, label: str, attrs: dict[str, str | int]) -> str: ...

    def connect(self, pairs: Sequence[tuple[str, str]]) -> None: ...


class BuildingSpec(Protocol):
    """What the floors need of :class:`sim.home.BuildingSpec`."""

    def rooms_per_floor(self) -> list[int]: ...


CROSS_FLOOR_KINDS = (ELEVATOR_LOBBY.label, STAIRWELL.label)  # the only rooms with doors to other floors


def make_floors(builder: HomeBuilder, spec: BuildingSpec) -> None:
    """Every floor's rooms, the ground floor first; a room's label names its floor."""
    for floor, count in enumerate(spec.rooms_per_floor(), start=1):
        kinds = floor_room_kinds(count)
        totals = Counter(kind.stem for kind in kinds)
        seen: dict[str, int] = {}
        for kind in kinds:
            index = seen.get(kind.stem, 0)
            seen[kind.stem] = index + 1
            label = f"floor {floor} {_room_label(kind, index, totals[kind.stem])}"
            room = builder.add_room(kind, label, {"kind": kind.label, "floor": floor})
            builder.floor_of[room] = floor


def connect_floors(builder: HomeBuilder) -> None:
    """Each floor like a home (a tree of corridors, every other room off one), then the floors joined.

    Extra doors stay within a floor: only lobbies and stairwells lead to other floors.
    """
    floors: dict[int, list[str]] = {}
    for room in builder.rooms:
        floors.setdefault(builder.floor_of[room], []).append(room)
    pairs: list[tuple[str, str]] = []
    lobbies: list[str] = []
    stairwells: list[str] = []
    for floor in sorted(floors):
        rooms = floors[floor]
        lobby, stairwell = _only(builder, rooms, ELEVATOR_LOBBY), _only(builder, rooms, STAIRWELL)
        lobbies.append(lobby)
        stairwells.append(stairwell)
        pairs += _floor_doors(builder, rooms, lobby, stairwell)
    pairs += [(a, b) for i, a in enumerate(lobbies) for b in lobbies[i + 1 :]]
    pairs += list(pairwise(stairwells))
    builder.connect(pairs)


def _floor_doors(builder: HomeBuilder, rooms: list[str], lobby: str, stairwell: str) -> list[tuple[str, str]]:
    """The corridors a tree; the lobby on the first corridor, the stairwell and every other room on one."""
    rng = builder.rng
    corridors = [r for r in rooms if builder.kind_of[r] is CORRIDOR]
    pairs = [(corridor, rng.choice(corridors[:i])) for i, corridor in enumerate(corridors[1:], start=1)]
    pairs.append((lobby, corridors[0]))
    pairs.append((stairwell, rng.choice(corridors)))
    others = [r for r in rooms if builder.kind_of[r] not in (CORRIDOR, ELEVATOR_LOBBY, STAIRWELL)]
    pairs += [(room, rng.choice(corridors)) for room in others]
    for i, room in enumerate(others):
        if len(others) > 1 and rng.random() < EXTRA_DOOR:
            pairs.append((room, rng.choice(others[:i] + others[i + 1 :])))
    return pairs


def _only(builder: HomeBuilder, rooms: list[str], kind: RoomKind) -> str:
    found = [r for r in rooms if builder.kind_of[r] is kind]
    if len(found) != 1:
        raise AssertionError(f"a floor has one {kind.label}, not {len(found)}: {found}")
    return found[0]


def _room_label(kind: RoomKind, index: int, total: int) -> str:
    """A label within its floor ("corridor B", "ward 12"); the kind alone when the floor has one."""
    if total == 1:
        return kind.label
    if kind is CORRIDOR and index < len(CORRIDOR_LETTERS):
        return f"{kind.label} {CORRIDOR_LETTERS[index]}"
    return f"{kind.label} {index + 1}"
