"""The parts of the household's events that every kind shares: the event type, the state index,
the drawing and wording helpers (see :mod:`sim.events`)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kg_memory.model import Delta, Fact
from sim.household import CONTAINER_TYPES, Home

Category = Literal["room", "item", "person"]
Vagueness = Literal["exact", "vague", "partial", "compound"]

CATEGORY_MIX: Mapping[Category, float] = {"room": 0.5, "item": 0.3, "person": 0.2}
KIND_CATEGORY: Mapping[str, Category] = {
    "light_switched_on": "room",
    "light_switched_off": "room",
    "tv_switched_on": "room",
    "tv_switched_off": "room",
    "faucet_turned_on": "room",
    "faucet_turned_off": "room",
    "container_opened": "room",
    "container_closed": "room",
    "room_switched_off": "room",
    "item_moved": "item",
    "dish_used": "item",
    "cup_drunk": "item",
    "dish_washed": "item",
    "cup_filled": "item",
    "phone_rings": "item",
    "phone_answered": "item",
    "clothes_to_washer": "item",
    "clothes_washed": "item",
    "clothes_to_dryer": "item",
    "clothes_dried": "item",
    "clothes_put_away": "item",
    "clothes_to_basket": "item",
    "person_moves": "person",
    "person_carries_item": "person",
    "person_picks_up": "person",
    "person_puts_down": "person",
    "person_hands_over": "person",
}
COMPOUND_KIND = "compound"
PLACED = ("on", "inside")  # an item on or in a receptacle (not in a hand)
IN_PREP_TYPES = (*CONTAINER_TYPES, "sink", "basket")  # "in the sink", "on the table"
POPULATED_BIAS = 0.75  # chance a room event happens where people are, when such a room qualifies


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One reported change of the household: the true delta and the sentence people say about it.

    ``entities`` are the names involved (the actor, what changed, where), first the ones that changed.
    A compound event has ``kind == "compound"`` and its two events in ``parts``.
    """

    kind: str
    category: Category
    delta: Delta
    text: str
    vagueness: Vagueness
    entities: tuple[str, ...]
    parts: tuple[Event, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "category": self.category,
            "delta": self.delta.to_json(),
            "text": self.text,
            "vagueness": self.vagueness,
            "entities": list(self.entities),
            "parts": [p.to_json() for p in self.parts],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Draft:
    """An event before its wording: the change and the phrases its templates need."""

    kind: str
    remove: tuple[Fact, ...]
    add: tuple[Fact, ...]
    values: Mapping[str, str]
    entities: tuple[str, ...]
    partial: bool = False  # whether the partial templates leave something out

    @property
    def subjects(self) -> frozenset[str]:
        """What changed: the first argument of every changed fact."""
        return frozenset(f.args[0] for f in (*self.remove, *self.add))


class Now:
    """The current true state, indexed for drawing events (rebuilt on every call; states are small)."""

    def __init__(self, home: Home, state: frozenset[Fact]) -> None:
        self.place: dict[str, tuple[str, str]] = {}  # item -> (on|inside|in_hand|held, holder)
        self.person_room: dict[str, str] = {}
        self.holding: dict[str, str] = {}  # person -> item
        self.unary: dict[str, set[str]] = {p: set() for p in ("switched_on", "open", "dirty", "wet", "ringing")}
        self.filled: dict[str, str] = {}
        for fact in state:
            self._index(fact)
        self.in_room: dict[str, list[str]] = {}  # room -> people, in the home's order
        for person in home.people:
            room = self.person_room.get(person)
            if room is not None:
                self.in_room.setdefault(room, []).append(person)
        self.placed_in: dict[str, list[str]] = {}  # room -> items on or in its receptacles, in order
        self.contents: dict[str, list[str]] = {}  # receptacle -> items on or in it, in order
        for item in home.items:
            place = self.place.get(item)
            if place is not None and place[0] in PLACED:
                self.placed_in.setdefault(home.room_of[place[1]], []).append(item)
                self.contents.setdefault(place[1], []).append(item)

    def _index(self, fact: Fact) -> None:
        predicate, args = fact.predicate, fact.args
        if predicate in ("on", "inside", "in_hand", "held"):
            self.place[args[0]] = (predicate, args[1])
            if predicate == "in_hand":
                self.holding[args[1]] = args[0]
        elif predicate == "person_in":
            self.person_room[args[0]] = args[1]
        elif predicate == "filled":
            self.filled[args[0]] = args[1]
        elif predicate in self.unary:
            self.unary[predicate].add(args[0])

    def has(self, predicate: str, name: str) -> bool:
        return name in self.unary[predicate]

    def people_in(self, room: str) -> list[str]:
        return self.in_room.get(room, [])

    def location_fact(self, item: str) -> Fact:
        predicate, holder = self.place[item]
        return Fact(predicate, (item, holder))


Builder = Callable[[Now, frozenset[str]], Draft | None]


class EventDrawing:
    """What every kind of event draws on: the home, the random source, and the wording helpers.
    The room, item and person events are mixins over it (sim/_room_events.py etc.)."""

    home: Home
    rng: random.Random
    _receptacles_in: dict[str, list[str]]
    _appliances_in: dict[str, list[str]]
    _accepts: dict[str, frozenset[str]]
    _wardrobes: tuple[str, ...]

    def _choose(self, names: Sequence[str]) -> str | None:
        return self.rng.choice(names) if names else None

    def _prefer_populated(self, now: Now, names: Sequence[str], room_of: Callable[[str], str]) -> str | None:
        """Mostly something in a room where people are, so reports can name who did it."""
        populated = [n for n in names if now.people_in(room_of(n))]
        if populated and self.rng.random() < POPULATED_BIAS:
            return self.rng.choice(populated)
        return self._choose(names)

    def _actor(self, now: Now, room: str | None, avoid: frozenset[str] = frozenset()) -> str | None:
        """Someone in ``room`` to credit with an event, or ``None`` (reported as "someone")."""
        present = [p for p in now.people_in(room) if p not in avoid] if room else []
        return self._choose(present)

    # -- wording helpers -------------------------------------------------------------------------------

    def _the(self, name: str) -> str:
        entity = self.home.by_name[name]
        return entity.label if entity.type == "person" else f"the {entity.label}"

    def _noun(self, name: str) -> str:
        return f"the {self.home.by_name[name].attrs.get('noun', self.home.label(name))}"

    def _kind_of(self, name: str) -> str:
        noun = str(self.home.by_name[name].attrs.get("noun", self.home.label(name)))
        return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"

    def _who(self, person: str | None) -> str:
        return self.home.label(person) if person else "someone"

    def _prep(self, receptacle: str) -> str:
        return "in" if self.home.by_name[receptacle].type in IN_PREP_TYPES else "on"

    def _source_prep(self, receptacle: str) -> str:
        return "out of" if self.home.by_name[receptacle].type in IN_PREP_TYPES else "off"

    def _where(self, now: Now, item: str) -> str:
        predicate, holder = now.place[item]
        if predicate == "in_hand":
            return f"in {self.home.label(holder)}'s hand"
        return f"{self._prep(holder)} {self._the(holder)}"

    def _item_room(self, now: Now, item: str) -> str | None:
        predicate, holder = now.place[item]
        if predicate in PLACED:
            return self.home.room_of[holder]
        return now.person_room.get(holder) if predicate == "in_hand" else None

    def _item_values(self, now: Now, item: str, actor: str | None) -> dict[str, str]:
        room = self._item_room(now, item)
        return {
            "actor": self._who(actor),
            "item": self._the(item),
            "item_kind": self._kind_of(item),
            "room": self._the(room) if room else "the house",
            "where": self._where(now, item),
        }

    def _move_values(self, now: Now, item: str, target: str, actor: str | None) -> dict[str, str]:
        source = now.place[item][1]
        values = self._item_values(now, item, actor)
        values.update(
            source=self._the(source),
            source_prep=self._source_prep(source),
            source_room=self._the(self.home.room_of[source]) if source in self.home.room_of else values["room"],
            target=self._the(target),
            prep=self._prep(target),
            target_room=self._the(self.home.room_of[target]),
        )
        return values

    def _shuffled(self, names: list[str]) -> list[str]:
        self.rng.shuffle(names)
        return names

    def _entities(self, *names: str | None) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for n in names if n))


def independent(first: Delta, second: Delta) -> bool:
    """No fact and no changed entity in common, so the two can be applied in either order."""
    first_facts, second_facts = first.remove | first.add, second.remove | second.add
    if first_facts & second_facts:
        return False
    subjects = {f.args[0] for f in first_facts}
    return not subjects.intersection(f.args[0] for f in second_facts)


def weighted_order(rng: random.Random, weighted: Sequence[tuple[Builder, float]]) -> list[Builder]:
    """All builders, in a random order where heavier ones tend to come first (weighted sampling)."""
    keyed = [(rng.random() ** (1.0 / weight), index) for index, (_, weight) in enumerate(weighted)]
    return [weighted[index][0] for _, index in sorted(keyed, reverse=True)]


def join_phrases(phrases: Sequence[str]) -> str:
    if len(phrases) <= 1:
        return "".join(phrases)
    return f"{', '.join(phrases[:-1])} and {phrases[-1]}"


def sentence(clause: str) -> str:
    text = clause.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
