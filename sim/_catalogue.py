"""What homes are made of: room kinds with their furniture and appliances, item kinds, names and the
shares of the initial state (see :mod:`sim.household`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

ROBOT = "robot_1"
LIQUIDS = ("water", "milk", "juice", "coffee")  # the domain's liquid constants
ITEM_TYPES = ("book", "pen", "perishable", "nonperishable", "dish", "cup", "clothes", "remote", "phone")
APPLIANCE_TYPES = ("light", "tv", "faucet")
RECEPTACLE_TYPES = ("surface", "container", "washer", "dryer", "sink", "basket", "toilet")
CONTAINER_TYPES = ("container", "washer", "dryer")  # what ``inside`` and ``open`` take

# Probabilities of the initial state (the events then keep changing it).
OPEN = 0.3
FRIDGE_OPEN = 0.1
SWITCHED_ON = {"light": 0.4, "tv": 0.3, "faucet": 0.1}
DISH_DIRTY = 0.35
CUP_FILLED = 0.35
CLOTHES_DIRTY = 0.3
BASKET_DIRTY = 0.8
PHONE_RINGING = 0.1
IN_HAND = 0.03  # share of items someone is holding (at most one each)
PORTABLE = ("phone", "cup", "book", "remote", "pen", "perishable")  # what people are found holding


@dataclass(frozen=True, slots=True)
class Fixture:
    """A piece of furniture or an appliance of a room kind; ``holds`` weights where items start out."""

    noun: str  # what people call it within its room: "counter", "overhead light"
    type: str
    stem: str  # PDDL name stem: "counter" -> counter_3
    holds: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class RoomKind:
    label: str
    stem: str
    fixtures: tuple[Fixture, ...]
    weight: float  # share of the rooms beyond the first one of each kind


KITCHEN = RoomKind(
    "kitchen",
    "kitchen",
    (
        Fixture(
            "table",
            "surface",
            "table",
            (("dish", 1), ("cup", 1), ("perishable", 0.6), ("nonperishable", 0.4), ("phone", 0.5), ("pen", 0.3)),
        ),
        Fixture("counter", "surface", "counter", (("dish", 1), ("cup", 1), ("perishable", 0.8), ("nonperishable", 1))),
        Fixture("fridge", "container", "fridge", (("perishable", 4),)),
        Fixture("pantry", "container", "pantry", (("nonperishable", 4),)),
        Fixture("cabinet", "container", "cabinet", (("dish", 3), ("cup", 3), ("nonperishable", 1))),
        Fixture("sink", "sink", "sink", (("dish", 1.5), ("cup", 1))),
        Fixture("overhead light", "light", "light"),
    ),
    0.07,
)
BATHROOM = RoomKind(
    "bathroom",
    "bathroom",
    (
        Fixture("sink", "sink", "sink", (("cup", 0.3),)),
        Fixture("toilet", "toilet", "toilet"),
        Fixture("cabinet", "container", "cabinet", (("clothes", 0.3), ("cup", 0.3))),
        Fixture("overhead light", "light", "light"),
    ),
    0.17,
)
LAUNDRY = RoomKind(
    "laundry room",
    "laundry_room",
    (
        Fixture("washer", "washer", "washer", (("clothes", 1),)),
        Fixture("dryer", "dryer", "dryer", (("clothes", 1),)),
        Fixture("basket", "basket", "basket", (("clothes", 2),)),
        Fixture("overhead light", "light", "light"),
    ),
    0.07,
)
BEDROOM = RoomKind(
    "bedroom",
    "bedroom",
    (
        Fixture("bed", "surface", "bed", (("clothes", 0.5), ("book", 0.5), ("phone", 0.5), ("remote", 0.2))),
        Fixture(
            "nightstand",
            "surface",
            "nightstand",
            (("book", 1), ("phone", 1), ("pen", 0.5), ("cup", 0.5), ("remote", 0.3)),
        ),
        Fixture("wardrobe", "container", "wardrobe", (("clothes", 3),)),
        Fixture("hamper", "basket", "hamper", (("clothes", 1),)),
        Fixture("overhead light", "light", "light"),
        Fixture("bedside lamp", "light", "lamp"),
    ),
    0.26,
)
LIVING = RoomKind(
    "living room",
    "living_room",
    (
        Fixture("sofa", "surface", "sofa", (("remote", 1), ("book", 0.5), ("phone", 0.5), ("clothes", 0.3))),
        Fixture(
            "coffee table",
            "surface",
            "coffee_table",
            (("remote", 1), ("cup", 1), ("dish", 0.5), ("book", 0.5), ("phone", 0.5), ("pen", 0.3)),
        ),
        Fixture("bookshelf", "surface", "bookshelf", (("book", 2), ("remote", 0.2))),
        Fixture("TV", "tv", "tv"),
        Fixture("overhead light", "light", "light"),
        Fixture("floor lamp", "light", "lamp"),
    ),
    0.10,
)
OFFICE = RoomKind(
    "office",
    "office",
    (
        Fixture("desk", "surface", "desk", (("pen", 2), ("book", 1), ("phone", 1), ("cup", 0.5))),
        Fixture("shelf", "surface", "shelf", (("book", 1.5), ("pen", 0.5))),
        Fixture("overhead light", "light", "light"),
        Fixture("desk lamp", "light", "lamp"),
    ),
    0.12,
)
DINING = RoomKind(
    "dining room",
    "dining_room",
    (
        Fixture(
            "dining table", "surface", "dining_table", (("dish", 1), ("cup", 1), ("perishable", 0.3), ("pen", 0.2))
        ),
        Fixture("sideboard", "container", "sideboard", (("dish", 1.5), ("cup", 1))),
        Fixture("overhead light", "light", "light"),
    ),
    0.07,
)
HALLWAY = RoomKind(
    "hallway",
    "hallway",
    (
        Fixture("side table", "surface", "side_table", (("phone", 0.5), ("book", 0.2), ("pen", 0.3))),
        Fixture("ceiling light", "light", "light"),
    ),
    0.14,
)
# The first rooms of every home, in this order; more rooms are shared out by weight.
ROOM_KINDS = (KITCHEN, LIVING, BEDROOM, BATHROOM, LAUNDRY, HALLWAY, OFFICE, DINING)
FIRST_ROOMS = (KITCHEN, LIVING, BEDROOM, BATHROOM, LAUNDRY, HALLWAY)
QUALIFIERS = (
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
EXTRA_DOOR = 0.15  # chance a room also gets a door to another, non-hallway room

COLOURS = ("red", "blue", "green", "yellow", "white", "black", "grey", "orange", "purple", "pink", "brown")
FOOD_WORDS = ("fresh", "organic", "small", "large", "local", "store-bought")
PANTRY_WORDS = ("small", "large", "new", "organic", "store-brand", "imported")


@dataclass(frozen=True, slots=True)
class ItemKind:
    type: str
    share: float
    nouns: tuple[str, ...]
    adjectives: tuple[str, ...] = COLOURS


ITEM_KINDS = (
    ItemKind(
        "book",
        0.11,
        ("novel", "cookbook", "atlas", "dictionary", "textbook", "comic book", "photo album", "diary", "magazine"),
    ),
    ItemKind("pen", 0.07, ("pen", "pencil", "marker", "highlighter", "fountain pen")),
    ItemKind(
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
        FOOD_WORDS,
    ),
    ItemKind(
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
        PANTRY_WORDS,
    ),
    ItemKind("dish", 0.15, ("plate", "bowl", "pan", "pot", "tray", "serving dish", "saucepan")),
    ItemKind("cup", 0.13, ("mug", "glass", "cup", "tumbler", "teacup")),
    ItemKind(
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
    ItemKind("remote", 0.05, ("remote", "tv remote", "remote control")),
    ItemKind("phone", 0.05, ("phone", "smartphone", "cordless phone", "cell phone")),
)

FIRST_NAMES = (
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
INITIALS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def fixture_count(kind: RoomKind) -> int:
    """Fixtures of a room of this kind, counting the faucet every sink gets."""
    return len(kind.fixtures) + sum(1 for f in kind.fixtures if f.type == "sink")


def room_kinds(count: int) -> list[RoomKind]:
    """One of each of the first kinds, the rest by weight (largest remainder: no randomness needed)."""
    kinds = list(FIRST_ROOMS[:count])
    extra = apportion(count - len(kinds), [k.weight for k in ROOM_KINDS])
    for kind, n in zip(ROOM_KINDS, extra, strict=True):
        kinds += [kind] * n
    return sorted(kinds, key=ROOM_KINDS.index)


def apportion(total: int, weights: Sequence[float]) -> list[int]:
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


# -- buildings (sim.building) --
# A building floor is furnished like a home's rooms under the names of a care home or hospital:
# the same fixtures, so the household domain, its events and its tasks hold unchanged.
ELEVATOR_LOBBY = RoomKind(
    "elevator lobby",
    "elevator_lobby",
    (
        Fixture("bench", "surface", "bench", (("phone", 0.3), ("book", 0.2), ("cup", 0.2))),
        Fixture("ceiling light", "light", "light"),
    ),
    0.0,
)
STAIRWELL = RoomKind("stairwell", "stairwell", (Fixture("landing light", "light", "light"),), 0.0)
CORRIDOR = RoomKind("corridor", "corridor", HALLWAY.fixtures, 0.14)
WARD = RoomKind("ward", "ward", BEDROOM.fixtures, 0.30)
WASHROOM = RoomKind("washroom", "washroom", BATHROOM.fixtures, 0.17)
DAY_ROOM = RoomKind("day room", "day_room", LIVING.fixtures, 0.08)
KITCHENETTE = RoomKind("kitchenette", "kitchenette", KITCHEN.fixtures, 0.07)
CANTEEN = RoomKind("canteen", "canteen", DINING.fixtures, 0.05)
SLUICE = RoomKind("sluice room", "sluice_room", LAUNDRY.fixtures, 0.07)
# Every floor has its lobby, stairwell and a corridor; further rooms are shared out by weight.
FLOOR_FIRST_ROOMS = (ELEVATOR_LOBBY, STAIRWELL, CORRIDOR)
FLOOR_ROOM_KINDS = (
    ELEVATOR_LOBBY,
    STAIRWELL,
    CORRIDOR,
    WARD,
    WASHROOM,
    OFFICE,
    DAY_ROOM,
    KITCHENETTE,
    CANTEEN,
    SLUICE,
)
CORRIDOR_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"  # corridors "A" to "Z", without I and O (read as 1 and 0)


def floor_room_kinds(count: int) -> list[RoomKind]:
    """The kinds of one floor's ``count`` rooms (at least three), in :data:`FLOOR_ROOM_KINDS` order."""
    kinds = list(FLOOR_FIRST_ROOMS[:count])
    extra = apportion(count - len(kinds), [k.weight for k in FLOOR_ROOM_KINDS])
    for kind, n in zip(FLOOR_ROOM_KINDS, extra, strict=True):
        kinds += [kind] * n
    return sorted(kinds, key=FLOOR_ROOM_KINDS.index)
