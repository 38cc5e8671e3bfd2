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
from collections.abc import Mapping

from kg_memory.model import Delta, Fact
from sim._events_common import (
    CATEGORY_MIX,
    COMPOUND_KIND,
    KIND_CATEGORY,
    Builder,
    Category,
    Draft,
    Event,
    Now,
    Vagueness,
    independent,
    sentence,
    weighted_order,
)
from sim._item_events import ItemEvents
from sim._person_events import PersonEvents
from sim._phrases import COMPOUND, PHRASES
from sim._room_events import RoomEvents
from sim.errors import SimulationError
from sim.household import Home


class EventGenerator(RoomEvents, ItemEvents, PersonEvents):
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
            if independent(first.delta, second.delta):
                text = sentence(self.rng.choice(COMPOUND).format(first=first_clause, second=second_clause))
                delta = Delta(remove=first.delta.remove | second.delta.remove, add=first.delta.add | second.delta.add)
                entities = tuple(dict.fromkeys((*first.entities, *second.entities)))
                return Event(
                    kind=COMPOUND_KIND,
                    category=first.category,
                    delta=delta,
                    text=text,
                    vagueness="compound",
                    entities=entities,
                    parts=(first, second),
                )
        return first

    # -- drawing ---------------------------------------------------------------------------------------

    def _single(self, state: frozenset[Fact], exclude: frozenset[str]) -> tuple[Event, str]:
        now = Now(self.home, state)
        recent = frozenset().union(*self._recent) | exclude
        categories = self._category_order()
        for avoid in (recent, exclude):
            for category in categories:
                for builder in weighted_order(self.rng, self._builders[category]):
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

    def _word(self, draft: Draft, category: Category) -> tuple[Event, str]:
        templates = PHRASES[draft.kind]
        roll = self.rng.random()
        vagueness: Vagueness = "exact"
        if roll < self.vague_rate and templates.get("vague"):
            vagueness = "vague"
        elif roll < self.vague_rate + self.partial_rate and draft.partial and templates.get("partial"):
            vagueness = "partial"
        clause = self.rng.choice(templates[vagueness]).format_map(draft.values)
        delta = Delta(remove=frozenset(draft.remove), add=frozenset(draft.add))
        return Event(
            kind=draft.kind,
            category=category,
            delta=delta,
            text=sentence(clause),
            vagueness=vagueness,
            entities=draft.entities,
        ), clause


__all__ = ["CATEGORY_MIX", "COMPOUND_KIND", "KIND_CATEGORY", "Category", "Event", "EventGenerator", "Vagueness"]
