"""Building a :class:`~sim.home.Home` from its spec, room by room (see :mod:`sim.household`)."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from types import MappingProxyType

from kg_memory.model import Entity, Fact
from sim._catalogue import (
    APPLIANCE_TYPES,
    BASKET_DIRTY,
    CLOTHES_DIRTY,
    CONTAINER_TYPES,
    CUP_FILLED,
    DISH_DIRTY,
    EXTRA_DOOR,
    FIRST_NAMES,
    FRIDGE_OPEN,
    HALLWAY,
    IN_HAND,
    INITIALS,
    ITEM_KINDS,
    ITEM_TYPES,
    LIQUIDS,
    OPEN,
    PHONE_RINGING,
    PORTABLE,
    QUALIFIERS,
    ROBOT,
    SWITCHED_ON,
    ItemKind,
    RoomKind,
    apportion,
    room_kinds,
)
from sim._floors import connect_floors, make_floors
from sim.home import BuildingSpec, Home, HomeSpec


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


class HomeBuilder:
    """Accumulates entities and facts; used once per home."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.entities: list[Entity] = []
        self.facts: list[Fact] = []
        self.counters: dict[str, int] = {}
        self.labels: set[str] = set()
        self.by_name: dict[str, Entity] = {}
        self.rooms: list[str] = []
        self.kind_of: dict[str, RoomKind] = {}
        self.room_label: dict[str, str] = {}
        self.floor_of: dict[str, int] = {}  # rooms of a building only: a home has no floors
        self.receptacles: list[str] = []
        self.appliances: list[str] = []
        self.people: list[str] = []
        self.items: list[str] = []
        self.room_of: dict[str, str] = {}
        self.faucet_of: dict[str, str] = {}
        self.holds: dict[str, dict[str, float]] = {}  # receptacle -> item type -> weight
        self.numbered: dict[str, int] = {}  # "blue mug" -> the last N of a "blue mug N" label
        self.rename: dict[str, str] = {}

    # -- names and entities --

    def _name(self, stem: str) -> str:
        """``stem_N`` with the next free N for this stem."""
        while True:
            self.counters[stem] = self.counters.get(stem, 0) + 1
            name = f"{stem}_{self.counters[stem]}"
            if name not in self.by_name:
                return name

    def _add(self, entity: Entity) -> str:
        if entity.name in self.by_name:
            raise AssertionError(f"duplicate entity name {entity.name}")
        self.entities.append(entity)
        self.by_name[entity.name] = entity
        self.labels.add(entity.label)
        return entity.name

    def _fact(self, predicate: str, *args: str) -> None:
        self.facts.append(Fact(predicate, args))

    def build(self, spec: HomeSpec) -> None:
        if isinstance(spec, BuildingSpec):
            make_floors(self, spec)
            connect_floors(self)
        else:
            self._make_rooms(spec.rooms)
            self._connect_rooms()
        for room in list(self.rooms):
            self._furnish(room)
        self._make_people(spec.people)
        self._make_items(spec.items)
        self._fact("robot_at", ROBOT, self.rng.choice(self.rooms))
        self._fact("hand_empty", ROBOT)

    # -- rooms --

    def _make_rooms(self, count: int) -> None:
        kinds = room_kinds(count)
        totals = {kind.stem: kinds.count(kind) for kind in kinds}
        seen: dict[str, int] = {}
        for kind in kinds:
            index = seen.get(kind.stem, 0)
            seen[kind.stem] = index + 1
            self.add_room(kind, _room_label(kind.label, index, totals[kind.stem]), {"kind": kind.label})

    def add_room(self, kind: RoomKind, label: str, attrs: dict[str, str | int]) -> str:
        """A room of ``kind``, furnished later by :meth:`_furnish` with the kind's fixtures."""
        name = self._add(Entity(self._name(kind.stem), "room", label, attrs))
        self.rooms.append(name)
        self.kind_of[name] = kind
        self.room_label[name] = label
        return name

    def _connect_rooms(self) -> None:
        """Hallways form a tree (the spine); every other room has a door to one, some a second door."""
        halls = [r for r in self.rooms if self.kind_of[r] is HALLWAY] or self.rooms[:1]
        pairs: list[tuple[str, str]] = []
        for i, hall in enumerate(halls[1:], start=1):
            pairs.append((hall, self.rng.choice(halls[:i])))
        others = [r for r in self.rooms if r not in halls]
        for room in others:
            pairs.append((room, self.rng.choice(halls)))
        for room in others:
            if len(others) > 1 and self.rng.random() < EXTRA_DOOR:
                other = self.rng.choice([o for o in others if o != room])
                pairs.append((room, other))
        self.connect(pairs)

    def connect(self, pairs: Sequence[tuple[str, str]]) -> None:
        """A door for each pair: ``connected`` both ways, once however often a pair comes."""
        seen: set[tuple[str, str]] = set()
        for a, b in pairs:
            for edge in ((a, b), (b, a)):
                if edge not in seen:
                    seen.add(edge)
                    self._fact("connected", *edge)

    def _furnish(self, room: str) -> None:
        room_label = self.room_label[room]
        for fixture in self.kind_of[room].fixtures:
            label = f"{room_label} {fixture.noun}"
            attrs = {"noun": fixture.noun}
            name = self._add(Entity(self._name(fixture.stem), fixture.type, label, attrs))
            self.room_of[name] = room
            if fixture.type in APPLIANCE_TYPES:
                self._make_appliance(name, fixture.type, room)
                continue
            self.receptacles.append(name)
            self.holds[name] = dict(fixture.holds)
            self._fact("in_room", name, room)
            if fixture.type in CONTAINER_TYPES:
                chance = FRIDGE_OPEN if fixture.noun == "fridge" else OPEN
                if self.rng.random() < chance:
                    self._fact("open", name)
            if fixture.type == "sink":
                faucet = self._add(Entity(self._name("faucet"), "faucet", f"{room_label} faucet", {"noun": "faucet"}))
                self.room_of[faucet] = room
                self.faucet_of[name] = faucet
                self._make_appliance(faucet, "faucet", room)
                self._fact("faucet_at", faucet, name)

    def _make_appliance(self, name: str, type_: str, room: str) -> None:
        self.appliances.append(name)
        self._fact("appliance_in", name, room)
        if self.rng.random() < SWITCHED_ON[type_]:
            self._fact("switched_on", name)

    # -- people --

    def _make_people(self, count: int) -> None:
        for label in _person_labels(self.rng, count):
            name = _slug(label)
            if name in self.by_name:
                name = self._name(name)
            self.people.append(self._add(Entity(name, "person", label)))
            self._fact("person_in", name, self.rng.choice(self.rooms))

    # -- items --

    def _make_items(self, count: int) -> None:
        counts = apportion(count, [k.share for k in ITEM_KINDS])
        typed: list[tuple[str, str]] = []
        for kind, n in zip(ITEM_KINDS, counts, strict=True):
            for _ in range(n):
                typed.append((self._make_item(kind), kind.type))
        held = self._hand_out([(i, t) for i, t in typed if t in PORTABLE])
        places = {t: self._places_for(t) for t in ITEM_TYPES}
        for item, type_ in typed:
            if item in held:
                self._fact("in_hand", item, held[item])
                self._set_item_state(item, type_, None)
                continue
            names, cumulative = places[type_]
            receptacle = self.rng.choices(names, cum_weights=cumulative)[0]
            predicate = "inside" if self._type(receptacle) in CONTAINER_TYPES else "on"
            self._fact(predicate, item, receptacle)
            self._set_item_state(item, type_, receptacle)

    def _make_item(self, kind: ItemKind) -> str:
        noun = self.rng.choice(kind.nouns)
        label = _unique_label(self.rng, kind.adjectives, noun, self.labels, self.numbered)
        adjective = label.split(" ")[0]
        name = self._add(Entity(self._name(_slug(noun)), kind.type, label, {"noun": noun, "adjective": adjective}))
        self.items.append(name)
        return name

    def _hand_out(self, portable: list[tuple[str, str]]) -> dict[str, str]:
        """A few portable items go to distinct people's hands (a person holds at most one thing)."""
        total = len(self.items)
        count = min(len(self.people), len(portable), max(1, round(total * IN_HAND)) if total else 0)
        if count == 0:
            return {}
        items = self.rng.sample([i for i, _ in portable], count)
        holders = self.rng.sample(self.people, count)
        return dict(zip(items, holders, strict=True))

    def _places_for(self, item_type: str) -> tuple[list[str], list[float]]:
        """Receptacles an item of this type starts in, with cumulative weights for ``rng.choices``."""
        names = [r for r in self.receptacles if self.holds[r].get(item_type, 0) > 0]
        weights = [self.holds[r][item_type] for r in names]
        if not names:  # a small home without the usual place: any surface, else anything
            names = [r for r in self.receptacles if self._type(r) == "surface"] or list(self.receptacles)
            weights = [1.0] * len(names)
        cumulative: list[float] = []
        running = 0.0
        for weight in weights:
            running += weight
            cumulative.append(running)
        return names, cumulative

    def _type(self, name: str) -> str:
        return self.by_name[name].type

    def _set_item_state(self, item: str, type_: str, receptacle: str | None) -> None:
        """Dirt, wetness, drinks and ringing, as plausible for where the item is."""
        where = self._type(receptacle) if receptacle else "hand"
        stored = where in CONTAINER_TYPES and where not in ("washer", "dryer")
        if type_ in ("dish", "cup"):
            dirty = where == "sink" or (not stored and self.rng.random() < DISH_DIRTY)
            if dirty:
                self._fact("dirty", item)
            elif type_ == "cup" and not stored and where != "sink" and self.rng.random() < CUP_FILLED:
                self._fact("filled", item, self.rng.choice(LIQUIDS))
        elif type_ == "clothes":
            self._set_clothes_state(item, where, receptacle)
        elif type_ == "phone" and self.rng.random() < PHONE_RINGING:
            self._fact("ringing", item)

    def _set_clothes_state(self, item: str, where: str, receptacle: str | None) -> None:
        noun = str(self.by_name[receptacle].attrs.get("noun", "")) if receptacle else ""
        if where == "washer":
            if self.rng.random() < 0.5:
                self._fact("wet", item)
            else:
                self._fact("dirty", item)
        elif where == "dryer":
            if self.rng.random() < 0.3:
                self._fact("wet", item)
        elif where == "basket":
            if self.rng.random() < BASKET_DIRTY:
                self._fact("dirty", item)
        elif noun != "wardrobe" and self.rng.random() < CLOTHES_DIRTY:
            self._fact("dirty", item)

    # -- naming and result --

    def rename_undescriptively(self) -> None:
        """Give every entity an ``object_N`` name, numbered in a shuffled order so numbers carry no meaning."""
        numbers = list(range(1, len(self.entities) + 1))
        self.rng.shuffle(numbers)
        self.rename = {e.name: f"object_{n}" for e, n in zip(self.entities, numbers, strict=True)}

    def _renamed(self, name: str) -> str:
        return self.rename.get(name, name)

    def home(self, spec: HomeSpec) -> Home:
        r = self._renamed
        if self.rename:
            entities = tuple(Entity(r(e.name), e.type, e.label, e.attrs) for e in self.entities)
            facts = frozenset(Fact(f.predicate, tuple(r(a) for a in f.args)) for f in self.facts)
        else:  # already checked when made: checking 50,000 names again took longer than making them
            entities, facts = tuple(self.entities), frozenset(self.facts)
        constants = (Entity(ROBOT, "robot", "robot"), *(Entity(liquid, "liquid", liquid) for liquid in LIQUIDS))
        by_type: dict[str, list[str]] = {}
        for entity in entities:
            by_type.setdefault(entity.type, []).append(entity.name)
        neighbours: dict[str, list[str]] = {r(room): [] for room in self.rooms}
        for fact in self.facts:
            if fact.predicate == "connected":
                neighbours[r(fact.args[0])].append(r(fact.args[1]))
        receptacles_for = {t: tuple(r(x) for x in self.receptacles if self.holds[x].get(t, 0) > 0) for t in ITEM_TYPES}
        return Home(
            spec=spec,
            entities=entities,
            facts=facts,
            rooms=tuple(map(r, self.rooms)),
            receptacles=tuple(map(r, self.receptacles)),
            appliances=tuple(map(r, self.appliances)),
            people=tuple(map(r, self.people)),
            items=tuple(map(r, self.items)),
            constants=constants,
            by_name=MappingProxyType({e.name: e for e in (*entities, *constants)}),
            by_type=MappingProxyType({t: tuple(names) for t, names in by_type.items()}),
            room_of=MappingProxyType({r(k): r(v) for k, v in self.room_of.items()}),
            neighbours=MappingProxyType({k: tuple(sorted(v)) for k, v in neighbours.items()}),
            faucet_of=MappingProxyType({r(k): r(v) for k, v in self.faucet_of.items()}),
            receptacles_for=MappingProxyType(receptacles_for),
            floor_of=MappingProxyType(self._floors()),
        )

    def _floors(self) -> dict[str, int]:
        """Each room's floor, and its fixtures'; a home is all on floor 1."""
        r = self._renamed
        rooms = {r(room): self.floor_of.get(room, 1) for room in self.rooms}
        return {**rooms, **{r(k): rooms[r(v)] for k, v in self.room_of.items()}}


def _room_label(kind: str, index: int, total: int) -> str:
    """The kind alone when unique, else "upstairs bathroom" style, numbered once the qualifiers run out."""
    if total == 1:
        return kind
    if index < len(QUALIFIERS):
        return f"{QUALIFIERS[index]} {kind}"
    return f"{kind} {index + 1}"


def _person_labels(rng: random.Random, count: int) -> list[str]:
    """First names, unique; past the list, a first name and an initial ("Jessica B.")."""
    first = list(FIRST_NAMES)
    rng.shuffle(first)
    labels = first[:count]
    extra = count - len(labels)
    index = 0
    while extra > 0:
        name, initial = FIRST_NAMES[index % len(FIRST_NAMES)], INITIALS[(index // len(FIRST_NAMES)) % 26]
        repeat = index // (len(FIRST_NAMES) * 26)
        labels.append(f"{name} {initial}." + (f" {repeat + 1}" if repeat else ""))
        index += 1
        extra -= 1
    return labels


def _unique_label(
    rng: random.Random, adjectives: Sequence[str], noun: str, used: set[str], numbered: dict[str, int]
) -> str:
    """An adjective and the noun ("blue mug"), another adjective if taken, numbered once all are taken.

    ``numbered`` remembers the last number given to each adjective and noun: labels only ever get taken,
    so the search for a free number goes on from there instead of from 2 (quadratic in a building).
    """
    start = rng.randrange(len(adjectives))
    for offset in range(len(adjectives)):
        label = f"{adjectives[(start + offset) % len(adjectives)]} {noun}"
        if label not in used:
            return label
    base = f"{adjectives[start]} {noun}"
    number = numbered.get(base, 1) + 1
    while f"{base} {number}" in used:
        number += 1
    numbered[base] = number
    return f"{base} {number}"
