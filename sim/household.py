"""A seeded home for the text household simulation of L3M+P (paper Sec. V.A), in the ``household`` domain.

The paper's home has 30-40 rooms, 140-160 items and 20-30 people; :class:`HomeSpec` defaults to that scale
and :meth:`HomeSpec.scaled` keeps its proportions for experiments. Furniture and appliances follow from
each room's kind (a kitchen gets a fridge and a sink with a faucet, a laundry room a washer and a dryer),
so the number of entities is a deterministic function of the spec.

The initial state satisfies every rule in ``domains/household/rules.toml``: each item is in exactly one
place, each person and the robot in exactly one room, the robot's hand is empty, a person holding an item
is in a room. Randomness comes only from ``random.Random(spec.seed)`` and nothing is drawn from a set's
iteration order, so a seed gives the same home in every process.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from kg_memory.model import Entity, Fact

ROBOT = "robot_1"
LIQUIDS = ("water", "milk", "juice", "coffee")  # the domain's liquid constants
ITEM_TYPES = ("book", "pen", "perishable", "nonperishable", "dish", "cup", "clothes", "remote", "phone")
APPLIANCE_TYPES = ("light", "tv", "faucet")
RECEPTACLE_TYPES = ("surface", "container", "washer", "dryer", "sink", "basket", "toilet")
CONTAINER_TYPES = ("container", "washer", "dryer")  # what ``inside`` and ``open`` take

# Probabilities of the initial state (the events then keep changing it).
_OPEN = 0.3
_FRIDGE_OPEN = 0.1
_SWITCHED_ON = {"light": 0.4, "tv": 0.3, "faucet": 0.1}
_DISH_DIRTY = 0.35
_CUP_FILLED = 0.35
_CLOTHES_DIRTY = 0.3
_BASKET_DIRTY = 0.8
_PHONE_RINGING = 0.1
_IN_HAND = 0.03  # share of items someone is holding (at most one each)
_PORTABLE = ("phone", "cup", "book", "remote", "pen", "perishable")  # what people are found holding


@dataclass(frozen=True, slots=True)
class _Fixture:
    """A piece of furniture or an appliance of a room kind; ``holds`` weights where items start out."""

    noun: str  # what people call it within its room: "counter", "overhead light"
    type: str
    stem: str  # PDDL name stem: "counter" -> counter_3
    holds: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class _RoomKind:
    label: str
    stem: str
    fixtures: tuple[_Fixture, ...]
    weight: float  # share of the rooms beyond the first one of each kind


_KITCHEN = _RoomKind(
    "kitchen",
    "kitchen",
    (
        _Fixture(
            "table",
            "surface",
            "table",
            (("dish", 1), ("cup", 1), ("perishable", 0.6), ("nonperishable", 0.4), ("phone", 0.5), ("pen", 0.3)),
        ),
        _Fixture("counter", "surface", "counter", (("dish", 1), ("cup", 1), ("perishable", 0.8), ("nonperishable", 1))),
        _Fixture("fridge", "container", "fridge", (("perishable", 4),)),
        _Fixture("pantry", "container", "pantry", (("nonperishable", 4),)),
        _Fixture("cabinet", "container", "cabinet", (("dish", 3), ("cup", 3), ("nonperishable", 1))),
        _Fixture("sink", "sink", "sink", (("dish", 1.5), ("cup", 1))),
        _Fixture("overhead light", "light", "light"),
    ),
    0.07,
)
_BATHROOM = _RoomKind(
    "bathroom",
    "bathroom",
    (
        _Fixture("sink", "sink", "sink", (("cup", 0.3),)),
        _Fixture("toilet", "toilet", "toilet"),
        _Fixture("cabinet", "container", "cabinet", (("clothes", 0.3), ("cup", 0.3))),
        _Fixture("overhead light", "light", "light"),
    ),
    0.17,
)
_LAUNDRY = _RoomKind(
    "laundry room",
    "laundry_room",
    (
        _Fixture("washer", "washer", "washer", (("clothes", 1),)),
        _Fixture("dryer", "dryer", "dryer", (("clothes", 1),)),
        _Fixture("basket", "basket", "basket", (("clothes", 2),)),
        _Fixture("overhead light", "light", "light"),
    ),
    0.07,
)
_BEDROOM = _RoomKind(
    "bedroom",
    "bedroom",
    (
        _Fixture("bed", "surface", "bed", (("clothes", 0.5), ("book", 0.5), ("phone", 0.5), ("remote", 0.2))),
        _Fixture(
            "nightstand",
            "surface",
            "nightstand",
            (("book", 1), ("phone", 1), ("pen", 0.5), ("cup", 0.5), ("remote", 0.3)),
        ),
        _Fixture("wardrobe", "container", "wardrobe", (("clothes", 3),)),
        _Fixture("hamper", "basket", "hamper", (("clothes", 1),)),
        _Fixture("overhead light", "light", "light"),
        _Fixture("bedside lamp", "light", "lamp"),
    ),
    0.26,
)
_LIVING = _RoomKind(
    "living room",
    "living_room",
    (
        _Fixture("sofa", "surface", "sofa", (("remote", 1), ("book", 0.5), ("phone", 0.5), ("clothes", 0.3))),
        _Fixture(
            "coffee table",
            "surface",
            "coffee_table",
            (("remote", 1), ("cup", 1), ("dish", 0.5), ("book", 0.5), ("phone", 0.5), ("pen", 0.3)),
        ),
        _Fixture("bookshelf", "surface", "bookshelf", (("book", 2), ("remote", 0.2))),
        _Fixture("TV", "tv", "tv"),
        _Fixture("overhead light", "light", "light"),
        _Fixture("floor lamp", "light", "lamp"),
    ),
    0.10,
)
_OFFICE = _RoomKind(
    "office",
    "office",
    (
        _Fixture("desk", "surface", "desk", (("pen", 2), ("book", 1), ("phone", 1), ("cup", 0.5))),
        _Fixture("shelf", "surface", "shelf", (("book", 1.5), ("pen", 0.5))),
        _Fixture("overhead light", "light", "light"),
        _Fixture("desk lamp", "light", "lamp"),
    ),
    0.12,
)
_DINING = _RoomKind(
    "dining room",
    "dining_room",
    (
        _Fixture(
            "dining table", "surface", "dining_table", (("dish", 1), ("cup", 1), ("perishable", 0.3), ("pen", 0.2))
        ),
        _Fixture("sideboard", "container", "sideboard", (("dish", 1.5), ("cup", 1))),
        _Fixture("overhead light", "light", "light"),
    ),
    0.07,
)
_HALLWAY = _RoomKind(
    "hallway",
    "hallway",
    (
        _Fixture("side table", "surface", "side_table", (("phone", 0.5), ("book", 0.2), ("pen", 0.3))),
        _Fixture("ceiling light", "light", "light"),
    ),
    0.14,
)
# The first rooms of every home, in this order; more rooms are shared out by weight.
_ROOM_KINDS = (_KITCHEN, _LIVING, _BEDROOM, _BATHROOM, _LAUNDRY, _HALLWAY, _OFFICE, _DINING)
_FIRST_ROOMS = (_KITCHEN, _LIVING, _BEDROOM, _BATHROOM, _LAUNDRY, _HALLWAY)
_QUALIFIERS = (
    "main",
    "upstairs",
    "downstairs",
    "guest",
    "north",
    "south",
    "east",
    "west",
    "front",
    "back",
    "side",
    "corner",
    "small",
    "large",
    "spare",
)
_EXTRA_DOOR = 0.15  # chance a room also gets a door to another, non-hallway room

_COLOURS = ("red", "blue", "green", "yellow", "white", "black", "grey", "orange", "purple", "pink", "brown")
_FOOD_WORDS = ("fresh", "organic", "small", "large", "local", "store-bought")
_PANTRY_WORDS = ("small", "large", "new", "organic", "store-brand", "imported")


@dataclass(frozen=True, slots=True)
class _ItemKind:
    type: str
    share: float
    nouns: tuple[str, ...]
    adjectives: tuple[str, ...] = _COLOURS


_ITEM_KINDS = (
    _ItemKind(
        "book",
        0.11,
        ("novel", "cookbook", "atlas", "dictionary", "textbook", "comic book", "photo album", "diary", "magazine"),
    ),
    _ItemKind("pen", 0.07, ("pen", "pencil", "marker", "highlighter", "fountain pen")),
    _ItemKind(
        "perishable",
        0.13,
        (
            "apple",
            "banana",
            "yogurt",
            "cheese",
            "head of lettuce",
            "chicken breast",
            "carton of eggs",
            "salmon fillet",
            "tomato",
            "avocado",
            "cucumber",
            "stick of butter",
        ),
        _FOOD_WORDS,
    ),
    _ItemKind(
        "nonperishable",
        0.11,
        (
            "can of beans",
            "box of cereal",
            "bag of rice",
            "jar of honey",
            "packet of pasta",
            "box of crackers",
            "jar of peanut butter",
            "can of soup",
            "bag of flour",
            "box of tea",
        ),
        _PANTRY_WORDS,
    ),
    _ItemKind("dish", 0.15, ("plate", "bowl", "pan", "pot", "tray", "serving dish", "saucepan")),
    _ItemKind("cup", 0.13, ("mug", "glass", "cup", "tumbler", "teacup")),
    _ItemKind(
        "clothes",
        0.20,
        (
            "shirt",
            "t-shirt",
            "sweater",
            "dress",
            "jacket",
            "skirt",
            "hoodie",
            "scarf",
            "towel",
            "blouse",
            "cardigan",
        ),
    ),
    _ItemKind("remote", 0.05, ("remote", "tv remote", "remote control")),
    _ItemKind("phone", 0.05, ("phone", "smartphone", "cordless phone", "cell phone")),
)

_FIRST_NAMES = (
    "Jessica", "Michael", "Emily", "David", "Sarah", "James", "Olivia", "Daniel", "Sophia", "Matthew",
    "Emma", "Andrew", "Ava", "Joshua", "Mia", "Ryan", "Chloe", "Ethan", "Grace", "Noah",
    "Hannah", "Liam", "Zoe", "Lucas", "Lily", "Nathan", "Ella", "Samuel", "Maya", "Benjamin",
    "Aria", "Jacob", "Nora", "Logan", "Ruby", "Owen", "Alice", "Caleb", "Clara", "Isaac",
    "Julia", "Henry", "Leah", "Jack", "Stella", "Leo", "Violet", "Adam", "Naomi", "Oscar",
    "Priya", "Ravi", "Mei", "Kenji", "Amara", "Kwame", "Sofia", "Mateo", "Fatima", "Omar",
    "Ingrid", "Lars", "Chiara", "Marco", "Yara", "Tariq", "Elena", "Ivan", "Hana", "Jun",
    "Carmen", "Diego", "Aisha", "Malik", "Freya", "Finn", "Nina", "Felix", "Rosa", "Hugo",
    "Tessa", "Miles", "Vera", "Elliot", "Iris", "Simon", "Lucy", "Peter", "Anna", "Paul",
    "Maria", "Victor", "Laura", "Martin", "Eva", "George", "Helen", "Frank", "Irene", "Walter",
)  # fmt: skip
_INITIALS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True, slots=True)
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
            raise ValueError(f"a home needs at least one room, not {self.rooms}")
        if self.items < 0 or self.people < 0:
            raise ValueError(f"counts cannot be negative (items={self.items}, people={self.people})")

    @classmethod
    def scaled(cls, total_entities: int, seed: int = 0, *, undescriptive_names: bool = False) -> HomeSpec:
        """A spec of about ``total_entities`` entities with the paper-scale home's proportions."""
        if total_entities < 1:
            raise ValueError(f"total_entities must be positive, not {total_entities}")
        base = cls()
        factor = total_entities / base.entity_count()
        return cls(
            seed=seed,
            rooms=max(1, round(base.rooms * factor)),
            items=round(base.items * factor),
            people=round(base.people * factor),
            undescriptive_names=undescriptive_names,
        )

    def entity_count(self) -> int:
        """The exact number of entities :func:`generate_home` makes (the domain's constants excluded)."""
        fixtures = sum(_fixture_count(kind) for kind in _room_kinds(self.rooms))
        return self.rooms + fixtures + self.items + self.people


@dataclass(frozen=True, slots=True)
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


def generate_home(spec: HomeSpec | None = None) -> Home:
    """Build the home ``spec`` describes; the same spec always gives the same home."""
    spec = spec or HomeSpec()
    builder = _Builder(random.Random(spec.seed))
    builder.build(spec)
    if spec.undescriptive_names:
        builder.rename_undescriptively()
    return builder.home(spec)


# -- construction -----------------------------------------------------------------------------------------


def _fixture_count(kind: _RoomKind) -> int:
    """Fixtures of a room of this kind, counting the faucet every sink gets."""
    return len(kind.fixtures) + sum(1 for f in kind.fixtures if f.type == "sink")


def _room_kinds(count: int) -> list[_RoomKind]:
    """One of each of the first kinds, the rest by weight (largest remainder: no randomness needed)."""
    kinds = list(_FIRST_ROOMS[:count])
    extra = _apportion(count - len(kinds), [k.weight for k in _ROOM_KINDS])
    for kind, n in zip(_ROOM_KINDS, extra, strict=True):
        kinds += [kind] * n
    return sorted(kinds, key=_ROOM_KINDS.index)


def _apportion(total: int, weights: Sequence[float]) -> list[int]:
    """Split ``total`` in proportion to ``weights`` into integers that sum to it exactly."""
    if total <= 0:
        return [0] * len(weights)
    scale = total / sum(weights)
    exact = [w * scale for w in weights]
    counts = [int(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (counts[i] - exact[i], i))
    for i in by_remainder[: total - sum(counts)]:
        counts[i] += 1
    return counts


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


class _Builder:
    """Accumulates entities and facts; used once per home."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.entities: list[Entity] = []
        self.facts: list[Fact] = []
        self.counters: dict[str, int] = {}
        self.labels: set[str] = set()
        self.by_name: dict[str, Entity] = {}
        self.rooms: list[str] = []
        self.kind_of: dict[str, _RoomKind] = {}
        self.receptacles: list[str] = []
        self.appliances: list[str] = []
        self.people: list[str] = []
        self.items: list[str] = []
        self.room_of: dict[str, str] = {}
        self.faucet_of: dict[str, str] = {}
        self.holds: dict[str, tuple[tuple[str, float], ...]] = {}
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
        kinds = _room_kinds(count)
        totals = {kind.stem: kinds.count(kind) for kind in kinds}
        seen: dict[str, int] = {}
        for kind in kinds:
            index = seen.get(kind.stem, 0)
            seen[kind.stem] = index + 1
            label = _room_label(kind.label, index, totals[kind.stem])
            name = self._add(Entity(self._name(kind.stem), "room", label, {"kind": kind.label}))
            self.rooms.append(name)
            self.kind_of[name] = kind

    def _connect_rooms(self) -> None:
        """Hallways form a tree (the spine); every other room has a door to one, some a second door."""
        halls = [r for r in self.rooms if self.kind_of[r] is _HALLWAY] or self.rooms[:1]
        pairs: list[tuple[str, str]] = []
        for i, hall in enumerate(halls[1:], start=1):
            pairs.append((hall, self.rng.choice(halls[:i])))
        others = [r for r in self.rooms if r not in halls]
        for room in others:
            pairs.append((room, self.rng.choice(halls)))
        for room in others:
            if len(others) > 1 and self.rng.random() < _EXTRA_DOOR:
                other = self.rng.choice([o for o in others if o != room])
                pairs.append((room, other))
        seen: set[tuple[str, str]] = set()
        for a, b in pairs:
            for edge in ((a, b), (b, a)):
                if edge not in seen:
                    seen.add(edge)
                    self._fact("connected", *edge)

    def _furnish(self, room: str) -> None:
        room_label = self.entities[self.rooms.index(room)].label
        for fixture in self.kind_of[room].fixtures:
            label = f"{room_label} {fixture.noun}"
            attrs = {"noun": fixture.noun}
            name = self._add(Entity(self._name(fixture.stem), fixture.type, label, attrs))
            self.room_of[name] = room
            if fixture.type in APPLIANCE_TYPES:
                self._make_appliance(name, fixture.type, room)
                continue
            self.receptacles.append(name)
            self.holds[name] = fixture.holds
            self._fact("in_room", name, room)
            if fixture.type in CONTAINER_TYPES:
                chance = _FRIDGE_OPEN if fixture.noun == "fridge" else _OPEN
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
        if self.rng.random() < _SWITCHED_ON[type_]:
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
        counts = _apportion(count, [k.share for k in _ITEM_KINDS])
        typed: list[tuple[str, str]] = []
        for kind, n in zip(_ITEM_KINDS, counts, strict=True):
            for _ in range(n):
                typed.append((self._make_item(kind), kind.type))
        held = self._hand_out([(i, t) for i, t in typed if t in _PORTABLE])
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

    def _make_item(self, kind: _ItemKind) -> str:
        noun = self.rng.choice(kind.nouns)
        label = _unique_label(self.rng, kind.adjectives, noun, self.labels)
        adjective = label.split(" ")[0]
        name = self._add(Entity(self._name(_slug(noun)), kind.type, label, {"noun": noun, "adjective": adjective}))
        self.items.append(name)
        return name

    def _hand_out(self, portable: list[tuple[str, str]]) -> dict[str, str]:
        """A few portable items go to distinct people's hands (a person holds at most one thing)."""
        total = len(self.items)
        count = min(len(self.people), len(portable), max(1, round(total * _IN_HAND)) if total else 0)
        if count == 0:
            return {}
        items = self.rng.sample([i for i, _ in portable], count)
        holders = self.rng.sample(self.people, count)
        return dict(zip(items, holders, strict=True))

    def _places_for(self, item_type: str) -> tuple[list[str], list[float]]:
        """Receptacles an item of this type starts in, with cumulative weights for ``rng.choices``."""
        names = [r for r in self.receptacles if dict(self.holds[r]).get(item_type, 0) > 0]
        weights = [dict(self.holds[r])[item_type] for r in names]
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
            dirty = where == "sink" or (not stored and self.rng.random() < _DISH_DIRTY)
            if dirty:
                self._fact("dirty", item)
            elif type_ == "cup" and not stored and where != "sink" and self.rng.random() < _CUP_FILLED:
                self._fact("filled", item, self.rng.choice(LIQUIDS))
        elif type_ == "clothes":
            self._set_clothes_state(item, where, receptacle)
        elif type_ == "phone" and self.rng.random() < _PHONE_RINGING:
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
            if self.rng.random() < _BASKET_DIRTY:
                self._fact("dirty", item)
        elif noun != "wardrobe" and self.rng.random() < _CLOTHES_DIRTY:
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
        entities = tuple(Entity(r(e.name), e.type, e.label, e.attrs) for e in self.entities)
        facts = frozenset(Fact(f.predicate, tuple(r(a) for a in f.args)) for f in self.facts)
        constants = (Entity(ROBOT, "robot", "robot"), *(Entity(liquid, "liquid", liquid) for liquid in LIQUIDS))
        by_type: dict[str, list[str]] = {}
        for entity in entities:
            by_type.setdefault(entity.type, []).append(entity.name)
        neighbours: dict[str, list[str]] = {r(room): [] for room in self.rooms}
        for fact in self.facts:
            if fact.predicate == "connected":
                neighbours[r(fact.args[0])].append(r(fact.args[1]))
        receptacles_for = {
            t: tuple(r(x) for x in self.receptacles if dict(self.holds[x]).get(t, 0) > 0) for t in ITEM_TYPES
        }
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
        )


def _room_label(kind: str, index: int, total: int) -> str:
    """The kind alone when unique, else "upstairs bathroom" style, numbered once the qualifiers run out."""
    if total == 1:
        return kind
    if index < len(_QUALIFIERS):
        return f"{_QUALIFIERS[index]} {kind}"
    return f"{kind} {index + 1}"


def _person_labels(rng: random.Random, count: int) -> list[str]:
    """First names, unique; past the list, a first name and an initial ("Jessica B.")."""
    first = list(_FIRST_NAMES)
    rng.shuffle(first)
    labels = first[:count]
    extra = count - len(labels)
    index = 0
    while extra > 0:
        name, initial = _FIRST_NAMES[index % len(_FIRST_NAMES)], _INITIALS[(index // len(_FIRST_NAMES)) % 26]
        repeat = index // (len(_FIRST_NAMES) * 26)
        labels.append(f"{name} {initial}." + (f" {repeat + 1}" if repeat else ""))
        index += 1
        extra -= 1
    return labels


def _unique_label(rng: random.Random, adjectives: Sequence[str], noun: str, used: set[str]) -> str:
    """An adjective and the noun ("blue mug"), another adjective if taken, numbered once all are taken."""
    start = rng.randrange(len(adjectives))
    for offset in range(len(adjectives)):
        label = f"{adjectives[(start + offset) % len(adjectives)]} {noun}"
        if label not in used:
            return label
    number = 2
    while f"{adjectives[start]} {noun} {number}" in used:
        number += 1
    return f"{adjectives[start]} {noun} {number}"
