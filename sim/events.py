"""What the people of a household do, as ground-truth deltas with English reports (paper Sec. V.A).

The paper's simulation has humans "move objects, turn on/off any faucets/lights, answer phones, etc."
and tells the agent in natural language. :class:`EventGenerator` draws one such change at a time from
the current true state: about half about rooms (lights, TVs, faucets, containers), 30% about movable
items (moving, using, washing and filling dishes, phones, laundry) and 20% about people (walking,
carrying, picking up, putting down, handing over).

Every delta keeps the domain's rules when applied to the state it was drawn from, never creates
entities and never changes static facts (``connected``, ``in_room``, ``appliance_in``, ``faucet_at``):
it is what a verified update from language may do. People never touch the robot or what it holds.

Reports vary on purpose: several paraphrases per kind, vague ones ("someone", the room instead of the
receptacle), partial ones (part of the change left out) and compound ones (two events in one sentence),
because the memory's updater has to cope with all of them. Nothing is drawn from a set's iteration
order, so a seed and the same sequence of states give the same events in every process.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from kg_memory.model import Delta, Fact
from sim._phrases import COMPOUND, PHRASES
from sim.errors import SimulationError
from sim.household import CONTAINER_TYPES, LIQUIDS, Home

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
_PLACED = ("on", "inside")  # an item on or in a receptacle (not in a hand)
_IN_PREP_TYPES = (*CONTAINER_TYPES, "sink", "basket")  # "in the sink", "on the table"
_POPULATED_BIAS = 0.75  # chance a room event happens where people are, when such a room qualifies


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class _Draft:
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


class _Now:
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
            if place is not None and place[0] in _PLACED:
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


Builder = Callable[[_Now, frozenset[str]], _Draft | None]


class EventGenerator:
    """Random human events applicable to the current true state; deterministic for a seed.

    The caller passes the true state to :meth:`next` and applies ``event.delta`` itself. Entities
    changed in the last ``recent`` events are left alone while others qualify, so the stream does not
    keep flipping the same light. ``vague_rate``, ``partial_rate`` and ``compound_rate`` set how often a
    report blurs, omits or joins (a kind without such wording falls back to an exact report).
    """

    def __init__(
        self,
        home: Home,
        seed: int = 0,
        *,
        vague_rate: float = 0.2,
        partial_rate: float = 0.1,
        compound_rate: float = 0.1,
        recent: int = 10,
        mix: Mapping[Category, float] = CATEGORY_MIX,
    ) -> None:
        self.home = home
        self.rng = random.Random(seed)
        self.vague_rate, self.partial_rate, self.compound_rate = vague_rate, partial_rate, compound_rate
        self.mix = dict(mix)
        self._recent: deque[frozenset[str]] = deque(maxlen=recent)
        self._receptacles_in: dict[str, list[str]] = {}
        self._appliances_in: dict[str, list[str]] = {}
        for name in home.receptacles:
            self._receptacles_in.setdefault(home.room_of[name], []).append(name)
        for name in home.appliances:
            self._appliances_in.setdefault(home.room_of[name], []).append(name)
        self._accepts = {t: frozenset(names) for t, names in home.receptacles_for.items()}
        self._wardrobes = tuple(r for r in home.receptacles if home.by_name[r].attrs.get("noun") == "wardrobe")
        self._builders: dict[Category, tuple[tuple[Builder, float], ...]] = {
            "room": (
                (self._toggle("light"), 4.0),
                (self._toggle("tv"), 1.0),
                (self._toggle("faucet"), 1.5),
                (self._container, 2.5),
                (self._room_switched_off, 0.7),
            ),
            "item": (
                (self._item_moved, 4.0),
                (self._dish_used, 1.0),
                (self._cup_drunk, 1.0),
                (self._dish_washed, 1.0),
                (self._cup_filled, 1.0),
                (self._phone_rings, 0.6),
                (self._phone_answered, 0.8),
                (self._clothes_to_washer, 0.6),
                (self._clothes_washed, 0.5),
                (self._clothes_to_dryer, 0.5),
                (self._clothes_dried, 0.5),
                (self._clothes_put_away, 0.6),
                (self._clothes_to_basket, 0.6),
            ),
            "person": (
                (self._person_moves, 3.0),
                (self._person_carries_item, 1.5),
                (self._person_picks_up, 1.0),
                (self._person_puts_down, 1.5),
                (self._person_hands_over, 0.5),
            ),
        }

    # -- public ----------------------------------------------------------------------------------------

    def next(self, state: frozenset[Fact]) -> Event:
        """One event applicable to ``state``; with probability ``compound_rate`` two joined in one."""
        if self.rng.random() < self.compound_rate:
            return self.next_compound(state)
        return self._single(state, frozenset())[0]

    def next_compound(self, state: frozenset[Fact]) -> Event:
        """Two non-conflicting events in one sentence, with the union of their deltas.

        The second event is drawn from the state after the first and shares no changed fact or changed
        entity with it, so the union applied to ``state`` equals applying one after the other. When no
        second event fits (a tiny home), the first comes back alone.
        """
        first, first_clause = self._single(state, frozenset())
        after = (state - first.delta.remove) | first.delta.add
        fixed = {*self.home.rooms, *self.home.receptacles}
        exclude = frozenset(n for n in first.entities if n not in fixed)
        for _ in range(5):
            try:
                second, second_clause = self._single(after, exclude)
            except SimulationError:
                break
            if _independent(first.delta, second.delta):
                text = _sentence(self.rng.choice(COMPOUND).format(first=first_clause, second=second_clause))
                delta = Delta(remove=first.delta.remove | second.delta.remove, add=first.delta.add | second.delta.add)
                entities = tuple(dict.fromkeys((*first.entities, *second.entities)))
                return Event(COMPOUND_KIND, first.category, delta, text, "compound", entities, (first, second))
        return first

    # -- drawing ---------------------------------------------------------------------------------------

    def _single(self, state: frozenset[Fact], exclude: frozenset[str]) -> tuple[Event, str]:
        now = _Now(self.home, state)
        recent = frozenset().union(*self._recent) | exclude
        categories = self._category_order()
        for avoid in (recent, exclude):
            for category in categories:
                for builder in _weighted_order(self.rng, self._builders[category]):
                    draft = builder(now, avoid)
                    if draft is not None:
                        self._recent.append(draft.subjects)
                        return self._word(draft, category)
        raise SimulationError("no event applies to this home and state: it has no appliances, items or people")

    def _category_order(self) -> list[Category]:
        """The drawn category first, then the others by weight (a fallback when none of its kinds apply)."""
        categories: list[Category] = list(self.mix)
        first = self.rng.choices(categories, weights=[self.mix[c] for c in categories])[0]
        return [first, *sorted((c for c in categories if c != first), key=lambda c: -self.mix[c])]

    def _word(self, draft: _Draft, category: Category) -> tuple[Event, str]:
        templates = PHRASES[draft.kind]
        roll = self.rng.random()
        vagueness: Vagueness = "exact"
        if roll < self.vague_rate and templates.get("vague"):
            vagueness = "vague"
        elif roll < self.vague_rate + self.partial_rate and draft.partial and templates.get("partial"):
            vagueness = "partial"
        clause = self.rng.choice(templates[vagueness]).format_map(draft.values)
        delta = Delta(remove=frozenset(draft.remove), add=frozenset(draft.add))
        return Event(draft.kind, category, delta, _sentence(clause), vagueness, draft.entities), clause

    def _choose(self, names: Sequence[str]) -> str | None:
        return self.rng.choice(names) if names else None

    def _prefer_populated(self, now: _Now, names: Sequence[str], room_of: Callable[[str], str]) -> str | None:
        """Mostly something in a room where people are, so reports can name who did it."""
        populated = [n for n in names if now.people_in(room_of(n))]
        if populated and self.rng.random() < _POPULATED_BIAS:
            return self.rng.choice(populated)
        return self._choose(names)

    def _actor(self, now: _Now, room: str | None, avoid: frozenset[str] = frozenset()) -> str | None:
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
        return "in" if self.home.by_name[receptacle].type in _IN_PREP_TYPES else "on"

    def _source_prep(self, receptacle: str) -> str:
        return "out of" if self.home.by_name[receptacle].type in _IN_PREP_TYPES else "off"

    def _where(self, now: _Now, item: str) -> str:
        predicate, holder = now.place[item]
        if predicate == "in_hand":
            return f"in {self.home.label(holder)}'s hand"
        return f"{self._prep(holder)} {self._the(holder)}"

    def _item_room(self, now: _Now, item: str) -> str | None:
        predicate, holder = now.place[item]
        if predicate in _PLACED:
            return self.home.room_of[holder]
        return now.person_room.get(holder) if predicate == "in_hand" else None

    def _item_values(self, now: _Now, item: str, actor: str | None) -> dict[str, str]:
        room = self._item_room(now, item)
        return {
            "actor": self._who(actor),
            "item": self._the(item),
            "item_kind": self._kind_of(item),
            "room": self._the(room) if room else "the house",
            "where": self._where(now, item),
        }

    def _move_values(self, now: _Now, item: str, target: str, actor: str | None) -> dict[str, str]:
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

    def _entities(self, *names: str | None) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for n in names if n))

    # -- room events -----------------------------------------------------------------------------------

    def _toggle(self, type_: str) -> Builder:
        stem = "faucet_turned" if type_ == "faucet" else f"{type_}_switched"

        def build(now: _Now, avoid: frozenset[str]) -> _Draft | None:
            names = [a for a in self.home.of_type(type_) if a not in avoid]
            appliance = self._prefer_populated(now, names, self.home.room_of.__getitem__)
            if appliance is None:
                return None
            room = self.home.room_of[appliance]
            was_on = now.has("switched_on", appliance)
            fact = Fact("switched_on", (appliance,))
            actor = self._actor(now, room, avoid)
            values = {
                "actor": self._who(actor),
                "appliance": self._noun(appliance),
                "appliance_label": self._the(appliance),
                "room": self._the(room),
            }
            return _Draft(
                f"{stem}_{'off' if was_on else 'on'}",
                (fact,) if was_on else (),
                () if was_on else (fact,),
                values,
                self._entities(appliance, room, actor),
            )

        return build

    def _container(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        names = [c for c in self.home.of_type(*CONTAINER_TYPES) if c not in avoid]
        container = self._prefer_populated(now, names, self.home.room_of.__getitem__)
        if container is None:
            return None
        room = self.home.room_of[container]
        was_open = now.has("open", container)
        fact = Fact("open", (container,))
        actor = self._actor(now, room, avoid)
        values = {
            "actor": self._who(actor),
            "container": self._noun(container),
            "container_label": self._the(container),
            "room": self._the(room),
        }
        return _Draft(
            "container_closed" if was_open else "container_opened",
            (fact,) if was_open else (),
            () if was_open else (fact,),
            values,
            self._entities(container, room, actor),
        )

    def _room_switched_off(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        """Everything switched on in a room goes off at once (someone leaving for the night)."""
        rooms = []
        for candidate in self.home.rooms:
            on = [a for a in self._appliances_in.get(candidate, ()) if now.has("switched_on", a)]
            if len(on) >= 2 and not avoid.intersection(on):
                rooms.append(candidate)
        room = self._prefer_populated(now, rooms, lambda r: r)
        if room is None:
            return None
        things = [a for a in self._appliances_in[room] if now.has("switched_on", a)]
        actor = self._actor(now, room, avoid)
        values = {
            "actor": self._who(actor),
            "room": self._the(room),
            "things": _join([self._noun(a) for a in things]),
            "first_thing": self._noun(things[0]),
        }
        remove = tuple(Fact("switched_on", (a,)) for a in things)
        return _Draft("room_switched_off", remove, (), values, self._entities(*things, room, actor), partial=True)

    # -- item events -----------------------------------------------------------------------------------

    def _items(self, now: _Now, avoid: frozenset[str], types: Iterable[str], where: Iterable[str]) -> list[str]:
        """Items of these types (all, if empty) placed as ``where`` says, not recently changed."""
        wanted = tuple(types)
        names = self.home.of_type(*wanted) if wanted else self.home.items
        kinds = tuple(where)
        return [i for i in names if i not in avoid and i in now.place and now.place[i][0] in kinds]

    def _pick_item(self, now: _Now, names: Sequence[str]) -> str | None:
        """Mostly an item where people are (they are the ones who use it)."""
        return self._prefer_populated(now, names, lambda item: self._item_room(now, item) or "")

    def _actor_for(self, now: _Now, item: str, avoid: frozenset[str]) -> str | None:
        """Whoever holds the item, else someone in its room."""
        predicate, holder = now.place[item]
        if predicate == "in_hand":
            return holder
        return self._actor(now, self._item_room(now, item), avoid)

    def _target(self, source_room: str | None, targets: Sequence[str]) -> str | None:
        """A receptacle, half the time in the same room when the room has one."""
        same = [t for t in targets if self.home.room_of[t] == source_room]
        if same and self.rng.random() < 0.5:
            return self.rng.choice(same)
        return self._choose(targets)

    def _relocate(
        self, now: _Now, kind: str, item: str, target: str, avoid: frozenset[str], extra: tuple[Fact, ...] = ()
    ) -> _Draft:
        """Move an item from where it is onto or into ``target``; ``extra`` are further facts to add."""
        predicate = "inside" if self.home.by_name[target].type in CONTAINER_TYPES else "on"
        actor = self._actor_for(now, item, avoid)
        if now.place[item][0] != "in_hand":  # whoever is where it went, else whoever was where it was
            actor = self._actor(now, self.home.room_of[target], avoid) or actor
        values = self._move_values(now, item, target, actor)
        source = now.place[item][1]
        entities = self._entities(item, source, target, self.home.room_of[target], actor)
        remove = (now.location_fact(item),)
        return _Draft(kind, remove, (Fact(predicate, (item, target)), *extra), values, entities, partial=True)

    def _item_moved(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        item = self._pick_item(now, self._items(now, avoid, (), _PLACED))
        if item is None:
            return None
        source = now.place[item][1]
        targets = [r for r in self.home.receptacles_for[self.home.by_name[item].type] if r != source]
        target = self._target(self.home.room_of[source], targets)
        return None if target is None else self._relocate(now, "item_moved", item, target, avoid)

    def _dish_used(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        names = self._items(now, avoid, ("dish", "cup"), ("on", "in_hand"))
        item = self._pick_item(now, [d for d in names if not now.has("dirty", d) and d not in now.filled])
        if item is None:
            return None
        actor = self._actor_for(now, item, avoid)
        values = self._item_values(now, item, actor)
        entities = self._entities(item, actor, self._item_room(now, item))
        return _Draft("dish_used", (), (Fact("dirty", (item,)),), values, entities)

    def _cup_drunk(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        names = self._items(now, avoid, ("dish", "cup"), (*_PLACED, "in_hand"))
        item = self._pick_item(now, [c for c in names if c in now.filled])
        if item is None:
            return None
        actor = self._actor_for(now, item, avoid)
        values = {**self._item_values(now, item, actor), "liquid": now.filled[item]}
        dirtied = not now.has("dirty", item)
        add = (Fact("dirty", (item,)),) if dirtied else ()
        remove = (Fact("filled", (item, now.filled[item])),)
        entities = self._entities(item, actor, self._item_room(now, item))
        return _Draft("cup_drunk", remove, add, values, entities, partial=dirtied)

    def _dish_washed(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        names = self._items(now, avoid, ("dish", "cup"), (*_PLACED, "in_hand"))
        item = self._pick_item(now, [d for d in names if now.has("dirty", d)])
        if item is None:
            return None
        actor = self._actor_for(now, item, avoid)
        remove = [Fact("dirty", (item,))]
        if item in now.filled:
            remove.append(Fact("filled", (item, now.filled[item])))
        values = self._item_values(now, item, actor)
        return _Draft("dish_washed", tuple(remove), (), values, self._entities(item, actor, self._item_room(now, item)))

    def _cup_filled(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        names = self._items(now, avoid, ("cup",), ("on", "in_hand"))
        item = self._pick_item(now, [c for c in names if not now.has("dirty", c) and c not in now.filled])
        if item is None:
            return None
        liquid = self.rng.choice(LIQUIDS)
        actor = self._actor_for(now, item, avoid)
        values = {**self._item_values(now, item, actor), "liquid": liquid}
        entities = self._entities(item, liquid, actor, self._item_room(now, item))
        return _Draft("cup_filled", (), (Fact("filled", (item, liquid)),), values, entities)

    def _phone(self, now: _Now, avoid: frozenset[str], ringing: bool) -> str | None:
        names = self._items(now, avoid, ("phone",), (*_PLACED, "in_hand"))
        return self._pick_item(now, [p for p in names if now.has("ringing", p) == ringing])

    def _phone_rings(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        phone = self._phone(now, avoid, ringing=False)
        if phone is None:
            return None
        values = self._item_values(now, phone, None)
        entities = self._entities(phone, self._item_room(now, phone))
        return _Draft("phone_rings", (), (Fact("ringing", (phone,)),), values, entities)

    def _phone_answered(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        phone = self._phone(now, avoid, ringing=True)
        if phone is None:
            return None
        actor = self._actor_for(now, phone, avoid)
        values = self._item_values(now, phone, actor)
        entities = self._entities(phone, actor, self._item_room(now, phone))
        return _Draft("phone_answered", (Fact("ringing", (phone,)),), (), values, entities)

    def _holder_type(self, now: _Now, item: str) -> str:
        return self.home.by_name[now.place[item][1]].type

    def _clothes_to_washer(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        names = self._items(now, avoid, ("clothes",), (*_PLACED, "in_hand"))
        item = self._pick_item(now, [c for c in names if now.has("dirty", c) and self._holder_type(now, c) != "washer"])
        washer = self._target(self._item_room(now, item), self.home.of_type("washer")) if item else None
        if item is None or washer is None:
            return None
        return self._relocate(now, "clothes_to_washer", item, washer, avoid)

    def _clothes_to_dryer(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        names = self._items(now, avoid, ("clothes",), ("inside",))
        item = self._pick_item(now, [c for c in names if now.has("wet", c) and self._holder_type(now, c) == "washer"])
        dryer = self._target(self._item_room(now, item), self.home.of_type("dryer")) if item else None
        if item is None or dryer is None:
            return None
        return self._relocate(now, "clothes_to_dryer", item, dryer, avoid)

    def _clothes_put_away(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        names = self._items(now, avoid, ("clothes",), (*_PLACED, "in_hand"))
        clean = [c for c in names if not now.has("dirty", c) and not now.has("wet", c)]
        item = self._pick_item(now, [c for c in clean if now.place[c][1] not in self._wardrobes])
        wardrobe = self._target(self._item_room(now, item), self._wardrobes) if item else None
        if item is None or wardrobe is None:
            return None
        return self._relocate(now, "clothes_put_away", item, wardrobe, avoid)

    def _clothes_to_basket(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        names = self._items(now, avoid, ("clothes",), (*_PLACED, "in_hand"))
        item = self._pick_item(now, [c for c in names if self._holder_type(now, c) != "basket"])
        basket = self._target(self._item_room(now, item), self.home.of_type("basket")) if item else None
        if item is None or basket is None:
            return None
        dirtied = not now.has("dirty", item)
        extra = (Fact("dirty", (item,)),) if dirtied else ()
        draft = self._relocate(now, "clothes_to_basket", item, basket, avoid, extra)
        return draft if dirtied else replace(draft, partial=False)

    def _run_machine(self, now: _Now, avoid: frozenset[str], type_: str) -> _Draft | None:
        """A closed washer (dryer) run: the clothes in it become clean and wet (dry)."""
        for machine in self._shuffled([m for m in self.home.of_type(type_) if m not in avoid]):
            clothes = [c for c in now.contents.get(machine, ()) if self.home.by_name[c].type == "clothes"]
            if type_ == "washer":
                remove = [Fact("dirty", (c,)) for c in clothes if now.has("dirty", c)]
                add = [Fact("wet", (c,)) for c in clothes if not now.has("wet", c)]
            else:
                remove, add = [Fact("wet", (c,)) for c in clothes if now.has("wet", c)], []
            changed = [c for c in clothes if any(c in f.args for f in (*remove, *add))]
            if not changed:
                continue
            if now.has("open", machine):
                remove.append(Fact("open", (machine,)))
            room = self.home.room_of[machine]
            actor = self._actor(now, room, avoid)
            values = {
                "actor": self._who(actor),
                "container_label": self._the(machine),
                "room": self._the(room),
                "clothes": _join([self._the(c) for c in changed]),
                "first_clothes": self._the(changed[0]),
            }
            kind = "clothes_washed" if type_ == "washer" else "clothes_dried"
            entities = self._entities(*changed, machine, room, actor)
            return _Draft(kind, tuple(remove), tuple(add), values, entities, partial=len(changed) > 1)
        return None

    def _clothes_washed(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        return self._run_machine(now, avoid, "washer")

    def _clothes_dried(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        return self._run_machine(now, avoid, "dryer")

    def _shuffled(self, names: list[str]) -> list[str]:
        self.rng.shuffle(names)
        return names

    # -- person events ---------------------------------------------------------------------------------

    def _people(self, now: _Now, avoid: frozenset[str], *, empty_hand: bool | None = None) -> list[str]:
        """People in a room, not recently changed, optionally only those with an empty (a full) hand."""
        found = [p for p in self.home.people if p not in avoid and p in now.person_room]
        if empty_hand is None:
            return found
        return [p for p in found if (p not in now.holding) == empty_hand]

    def _person_moves(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        person = self._choose([p for p in self._people(now, avoid) if self.home.neighbours[now.person_room[p]]])
        if person is None:
            return None
        source = now.person_room[person]
        target = self.rng.choice(self.home.neighbours[source])
        values = {"actor": self._who(person), "source_room": self._the(source), "target_room": self._the(target)}
        remove, add = Fact("person_in", (person, source)), Fact("person_in", (person, target))
        return _Draft("person_moves", (remove,), (add,), values, (person, source, target), partial=True)

    def _reachable_item(self, now: _Now, person: str, avoid: frozenset[str]) -> str | None:
        return self._choose([i for i in now.placed_in.get(now.person_room[person], ()) if i not in avoid])

    def _person_carries_item(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        people = [p for p in self._people(now, avoid, empty_hand=True) if self.home.neighbours[now.person_room[p]]]
        people = [p for p in people if any(i not in avoid for i in now.placed_in.get(now.person_room[p], ()))]
        person = self._choose(people)
        item = self._reachable_item(now, person, avoid) if person else None
        if person is None or item is None:
            return None
        source_room = now.person_room[person]
        target_room = self.rng.choice(self.home.neighbours[source_room])
        values = self._move_values(now, item, now.place[item][1], person)
        values["target_room"] = self._the(target_room)
        remove = (now.location_fact(item), Fact("person_in", (person, source_room)))
        add = (Fact("in_hand", (item, person)), Fact("person_in", (person, target_room)))
        entities = (person, item, now.place[item][1], source_room, target_room)
        return _Draft("person_carries_item", remove, add, values, entities, partial=True)

    def _person_picks_up(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        people = self._people(now, avoid, empty_hand=True)
        person = self._choose(
            [p for p in people if any(i not in avoid for i in now.placed_in.get(now.person_room[p], ()))]
        )
        item = self._reachable_item(now, person, avoid) if person else None
        if person is None or item is None:
            return None
        source = now.place[item][1]
        values = self._move_values(now, item, source, person)
        entities = (person, item, source, now.person_room[person])
        return _Draft(
            "person_picks_up", (now.location_fact(item),), (Fact("in_hand", (item, person)),), values, entities
        )

    def _person_puts_down(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        person = self._choose([p for p in self._people(now, avoid, empty_hand=False) if now.holding[p] not in avoid])
        if person is None:
            return None
        item, room = now.holding[person], now.person_room[person]
        here = self._receptacles_in.get(room, [])
        fitting = [r for r in here if r in self._accepts.get(self.home.by_name[item].type, frozenset())]
        surfaces = [r for r in here if self.home.by_name[r].type == "surface"]
        target = self._choose(fitting or surfaces or [r for r in here if self.home.by_name[r].type != "toilet"])
        if target is None:
            return None
        predicate = "inside" if self.home.by_name[target].type in CONTAINER_TYPES else "on"
        values = self._move_values(now, item, target, person)
        entities = (person, item, target, room)
        remove, add = Fact("in_hand", (item, person)), Fact(predicate, (item, target))
        return _Draft("person_puts_down", (remove,), (add,), values, entities, partial=True)

    def _person_hands_over(self, now: _Now, avoid: frozenset[str]) -> _Draft | None:
        pairs = []
        for giver in self._people(now, avoid, empty_hand=False):
            if now.holding[giver] in avoid:
                continue
            takers = [p for p in now.people_in(now.person_room[giver]) if p != giver and p not in now.holding]
            pairs += [(giver, taker) for taker in takers if taker not in avoid]
        if not pairs:
            return None
        giver, taker = self.rng.choice(pairs)
        item = now.holding[giver]
        values = {**self._item_values(now, item, giver), "other": self._who(taker)}
        remove, add = Fact("in_hand", (item, giver)), Fact("in_hand", (item, taker))
        entities = (item, giver, taker, now.person_room[giver])
        return _Draft("person_hands_over", (remove,), (add,), values, entities)


def _independent(first: Delta, second: Delta) -> bool:
    """No fact and no changed entity in common, so the two can be applied in either order."""
    first_facts, second_facts = first.remove | first.add, second.remove | second.add
    if first_facts & second_facts:
        return False
    subjects = {f.args[0] for f in first_facts}
    return not subjects.intersection(f.args[0] for f in second_facts)


def _weighted_order(rng: random.Random, weighted: Sequence[tuple[Builder, float]]) -> list[Builder]:
    """All builders, in a random order where heavier ones tend to come first (weighted sampling)."""
    keyed = [(rng.random() ** (1.0 / weight), index) for index, (_, weight) in enumerate(weighted)]
    return [weighted[index][0] for _, index in sorted(keyed, reverse=True)]


def _join(phrases: Sequence[str]) -> str:
    if len(phrases) <= 1:
        return "".join(phrases)
    return f"{', '.join(phrases[:-1])} and {phrases[-1]}"


def _sentence(clause: str) -> str:
    text = clause.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


__all__ = ["CATEGORY_MIX", "COMPOUND_KIND", "KIND_CATEGORY", "Category", "Event", "EventGenerator", "Vagueness"]
