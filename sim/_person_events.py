"""Events about people: walking, carrying, picking up, putting down, handing over (a mixin of
:class:`sim.events.EventGenerator`)."""

from __future__ import annotations

from kg_memory.model import Fact
from sim._events_common import (
    Draft,
    EventDrawing,
    Now,
)
from sim.household import CONTAINER_TYPES


class PersonEvents(EventDrawing):
    # -- person events ---------------------------------------------------------------------------------

    def _people(self, now: Now, avoid: frozenset[str], *, empty_hand: bool | None = None) -> list[str]:
        """People in a room, not recently changed, optionally only those with an empty (a full) hand."""
        found = [p for p in self.home.people if p not in avoid and p in now.person_room]
        if empty_hand is None:
            return found
        return [p for p in found if (p not in now.holding) == empty_hand]

    def _person_moves(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        person = self._choose([p for p in self._people(now, avoid) if self.home.neighbours[now.person_room[p]]])
        if person is None:
            return None
        source = now.person_room[person]
        target = self.rng.choice(self.home.neighbours[source])
        values = {"actor": self._who(person), "source_room": self._the(source), "target_room": self._the(target)}
        remove, add = Fact("person_in", (person, source)), Fact("person_in", (person, target))
        return Draft(
            kind="person_moves",
            remove=(remove,),
            add=(add,),
            values=values,
            entities=(person, source, target),
            partial=True,
        )

    def _reachable_item(self, now: Now, person: str, avoid: frozenset[str]) -> str | None:
        return self._choose([i for i in now.placed_in.get(now.person_room[person], ()) if i not in avoid])

    def _person_carries_item(self, now: Now, avoid: frozenset[str]) -> Draft | None:
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
        return Draft(kind="person_carries_item", remove=remove, add=add, values=values, entities=entities, partial=True)

    def _person_picks_up(self, now: Now, avoid: frozenset[str]) -> Draft | None:
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
        return Draft(
            kind="person_picks_up",
            remove=(now.location_fact(item),),
            add=(Fact("in_hand", (item, person)),),
            values=values,
            entities=entities,
        )

    def _person_puts_down(self, now: Now, avoid: frozenset[str]) -> Draft | None:
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
        return Draft(
            kind="person_puts_down", remove=(remove,), add=(add,), values=values, entities=entities, partial=True
        )

    def _person_hands_over(self, now: Now, avoid: frozenset[str]) -> Draft | None:
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
        return Draft(kind="person_hands_over", remove=(remove,), add=(add,), values=values, entities=entities)
