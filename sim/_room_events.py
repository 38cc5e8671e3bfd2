"""Events about rooms: lights, TVs, faucets, containers, a room switched off (a mixin of
:class:`sim.events.EventGenerator`)."""

from __future__ import annotations

from kg_memory.model import Fact
from sim._events_common import (
    Builder,
    Draft,
    EventDrawing,
    Now,
    join_phrases,
)
from sim.household import CONTAINER_TYPES


class RoomEvents(EventDrawing):
    # -- room events -----------------------------------------------------------------------------------

    def _toggle(self, type_: str) -> Builder:
        stem = "faucet_turned" if type_ == "faucet" else f"{type_}_switched"

        def build(now: Now, avoid: frozenset[str]) -> Draft | None:
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
            return Draft(
                kind=f"{stem}_{'off' if was_on else 'on'}",
                remove=(fact,) if was_on else (),
                add=() if was_on else (fact,),
                values=values,
                entities=self._entities(appliance, room, actor),
            )

        return build

    def _container(self, now: Now, avoid: frozenset[str]) -> Draft | None:
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
        return Draft(
            kind="container_closed" if was_open else "container_opened",
            remove=(fact,) if was_open else (),
            add=() if was_open else (fact,),
            values=values,
            entities=self._entities(container, room, actor),
        )

    def _room_switched_off(self, now: Now, avoid: frozenset[str]) -> Draft | None:
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
            "things": join_phrases([self._noun(a) for a in things]),
            "first_thing": self._noun(things[0]),
        }
        remove = tuple(Fact("switched_on", (a,)) for a in things)
        return Draft(
            kind="room_switched_off",
            remove=remove,
            add=(),
            values=values,
            entities=self._entities(*things, room, actor),
            partial=True,
        )
