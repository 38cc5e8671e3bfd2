"""What home to build (:class:`HomeSpec`) and the home built (:class:`Home`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from kg_memory.model import Entity, Fact
from sim._catalogue import (
    ROBOT,
    apportion,
    fixture_count,
    floor_room_kinds,
    room_kinds,
)
from sim.errors import InvalidHomeSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class HomeSpec:
    """What home to build; the defaults are the paper's scale (30-40 rooms, 140-160 items, 20-30 people).

    Furniture and appliances are not counted here: each room gets those of its kind.
    ``undescriptive_names`` gives every entity an ``object_17`` style PDDL name (types and labels stay
    descriptive), to test that nothing relies on names carrying meaning.
    """

    seed: int = 0
    rooms: int = 35
    items: int = 150
    people: int = 25
    undescriptive_names: bool = False

    def __post_init__(self) -> None:
        if self.rooms < 1:
            raise InvalidHomeSpec("rooms", self.rooms, f"a home needs at least one room, not {self.rooms}")
        if self.items < 0 or self.people < 0:
            counts = (self.items, self.people)
            raise InvalidHomeSpec(
                "items" if self.items < 0 else "people",
                counts,
                f"counts cannot be negative (items={self.items}, people={self.people})",
            )

    @classmethod
    def scaled(cls, total_entities: int, seed: int = 0, *, undescriptive_names: bool = False) -> HomeSpec:
        """A spec of about ``total_entities`` entities with the paper-scale home's proportions."""
        if total_entities < 1:
            raise InvalidHomeSpec(
                "total_entities", total_entities, f"total_entities must be positive, not {total_entities}"
            )
        base = cls()
        factor = total_entities / base.entity_count()
        return cls(
            seed=seed,
            rooms=max(1, round(base.rooms * factor)),
            items=round(base.items * factor),
            people=round(base.people * factor),
            undescriptive_names=undescriptive_names,
        )

    @classmethod
    def building(
        cls,
        total_entities: int,
        seed: int = 0,
        floors: int | None = None,
        *,
        undescriptive_names: bool = False,
    ) -> BuildingSpec:
        """A multi-floor building of exactly ``total_entities`` entities (see :class:`BuildingSpec`).

        Rooms, items and people keep the paper-scale home's proportions; ``floors`` defaults to one per
        :data:`ROOMS_PER_FLOOR` rooms. Items take up the last few entities, so the total is exact.
        """
        if total_entities < 1:
            raise InvalidHomeSpec(
                "total_entities", total_entities, f"total_entities must be positive, not {total_entities}"
            )
        if floors is not None and floors < 1:
            raise InvalidHomeSpec("floors", floors, f"a building needs at least one floor, not {floors}")
        base = cls()
        per_room = base.entity_count() / base.rooms
        low = FLOOR_MIN_ROOMS * (floors or 1)
        high = max(low, math.ceil(total_entities / per_room) * 2)
        best: BuildingSpec | None = None
        while low <= high:  # the most rooms whose building, items and people at scale, still fits
            rooms = (low + high) // 2
            spec = _building_of(rooms, floors, base, seed=seed, undescriptive_names=undescriptive_names)
            if spec.entity_count() <= total_entities:
                best, low = spec, rooms + 1
            else:
                high = rooms - 1
        if best is None:
            raise InvalidHomeSpec(
                "total_entities", total_entities, f"{total_entities} entities are too few for a building"
            )
        return BuildingSpec(
            seed=seed,
            rooms=best.rooms,
            items=best.items + total_entities - best.entity_count(),
            people=best.people,
            floors=best.floors,
            undescriptive_names=undescriptive_names,
        )

    def entity_count(self) -> int:
        """The exact number of entities :func:`generate_home` makes (the domain's constants excluded)."""
        fixtures = sum(fixture_count(kind) for kind in room_kinds(self.rooms))
        return self.rooms + fixtures + self.items + self.people


ROOMS_PER_FLOOR = 80  # a building's default: about a hospital ward floor
FLOOR_MIN_ROOMS = 3  # an elevator lobby, a stairwell and a corridor


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildingSpec(HomeSpec):
    """A building of ``floors`` floors over which ``rooms`` are shared evenly (see :mod:`sim.building`).

    Each floor has an elevator lobby, a stairwell and corridors; its other rooms are wards, washrooms,
    offices, day rooms, kitchenettes, a canteen and sluice rooms, furnished like a home's rooms.
    Items and people are spread over the whole building.
    """

    floors: int = 1

    def __post_init__(self) -> None:
        HomeSpec.__post_init__(self)  # zero-argument super() fails in a slots dataclass
        if self.floors < 1:
            raise InvalidHomeSpec("floors", self.floors, f"a building needs at least one floor, not {self.floors}")
        if self.rooms < FLOOR_MIN_ROOMS * self.floors:
            raise InvalidHomeSpec(
                "rooms",
                (self.rooms, self.floors),
                f"{self.floors} floors need at least {FLOOR_MIN_ROOMS * self.floors} rooms, not {self.rooms}",
            )

    def rooms_per_floor(self) -> list[int]:
        """How many rooms each floor has, the ground floor first; they differ by one at most."""
        return apportion(self.rooms, [1.0] * self.floors)

    def entity_count(self) -> int:
        fixtures = sum(fixture_count(kind) for n in self.rooms_per_floor() for kind in floor_room_kinds(n))
        return self.rooms + fixtures + self.items + self.people


def _building_of(
    rooms: int, floors: int | None, base: HomeSpec, *, seed: int, undescriptive_names: bool
) -> BuildingSpec:
    """``rooms`` rooms with items and people in ``base``'s proportions."""
    return BuildingSpec(
        seed=seed,
        rooms=rooms,
        items=round(base.items * rooms / base.rooms),
        people=round(base.people * rooms / base.rooms),
        floors=floors or max(1, math.ceil(rooms / ROOMS_PER_FLOOR)),
        undescriptive_names=undescriptive_names,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Home:
    """A generated home: its entities, its initial state and lookups over what never changes.

    ``entities`` excludes the domain's constants (``robot_1`` and the liquids), which every memory of the
    domain already knows; ``constants`` labels them and ``by_name`` covers both. The lookups hold static
    structure only (where furniture stands, which rooms connect); where items and people are is state,
    read from the facts.
    """

    spec: HomeSpec
    entities: tuple[Entity, ...]  # rooms, receptacles, appliances, people, items
    facts: frozenset[Fact]
    rooms: tuple[str, ...]
    receptacles: tuple[str, ...]
    appliances: tuple[str, ...]
    people: tuple[str, ...]
    items: tuple[str, ...]
    constants: tuple[Entity, ...]
    by_name: Mapping[str, Entity] = field(compare=False, repr=False)
    by_type: Mapping[str, tuple[str, ...]] = field(compare=False, repr=False)  # concrete type -> names
    room_of: Mapping[str, str] = field(compare=False, repr=False)  # receptacle or appliance -> its room
    neighbours: Mapping[str, tuple[str, ...]] = field(compare=False, repr=False)  # room -> connected rooms
    faucet_of: Mapping[str, str] = field(compare=False, repr=False)  # sink -> its faucet
    receptacles_for: Mapping[str, tuple[str, ...]] = field(compare=False, repr=False)  # item type -> homes
    floor_of: Mapping[str, int] = field(compare=False, repr=False)  # room, receptacle or appliance -> floor
    robot: str = ROBOT

    def label(self, name: str) -> str:
        entity = self.by_name.get(name)
        return entity.label if entity else name

    def of_type(self, *types: str) -> tuple[str, ...]:
        """Names of the entities of these concrete types, in generation order."""
        return tuple(name for type_ in types for name in self.by_type.get(type_, ()))

    def in_room(self, room: str) -> tuple[str, ...]:
        """The receptacles and appliances standing in ``room``."""
        return tuple(n for n in (*self.receptacles, *self.appliances) if self.room_of[n] == room)
