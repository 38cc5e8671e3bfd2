"""Events about movable items: moving, dishes, cups, phones, laundry (a mixin of :class:`sim.events.EventGenerator`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from kg_memory.model import Fact
from sim._events_common import (
    PLACED,
    Draft,
    EventDrawing,
    Now,
    join_phrases,
)
from sim.household import CONTAINER_TYPES, LIQUIDS


class ItemEvents(EventDrawing):
    # -- item events -----------------------------------------------------------------------------------

    def _items(self, now: Now, avoid: frozenset[str], types: Iterable[str], where: Iterable[str]) -> list[str]:
        """Items of these types (all, if empty) placed as ``where`` says, not recently changed."""
        wanted = tuple(types)
        names = self.home.of_type(*wanted) if wanted else self.home.items
        kinds = tuple(where)
        return [i for i in names if i not in avoid and i in now.place and now.place[i][0] in kinds]

    def _pick_item(self, now: Now, names: Sequence[str]) -> str | None:
        """Mostly an item where people are (they are the ones who use it)."""
        return self._prefer_populated(now, names, lambda item: self._item_room(now, item) or "")

    def _actor_for(self, now: Now, item: str, avoid: frozenset[str]) -> str | None:
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
        self, now: Now, kind: str, item: str, target: str, avoid: frozenset[str], extra: tuple[Fact, ...] = ()
    ) -> Draft:
        """Move an item from where it is onto or into ``target``; ``extra`` are further facts to add."""
        predicate = "inside" if self.home.by_name[target].type in CONTAINER_TYPES else "on"
        actor = self._actor_for(now, item, avoid)
        if now.place[item][0] != "in_hand":  # whoever is where it went, else whoever was where it was
            actor = self._actor(now, self.home.room_of[target], avoid) or actor
        values = self._move_values(now, item, target, actor)
        source = now.place[item][1]
        entities = self._entities(item, source, target, self.home.room_of[target], actor)
        remove = (now.location_fact(item),)
        return Draft(
            kind=kind,
            remove=remove,
            add=(Fact(predicate, (item, target)), *extra),
            values=values,
            entities=entities,
            partial=True,
        )

    def _item_moved(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        item = self._pick_item(now, self._items(now, avoid, (), PLACED))
        if item is None:
            return None
        source = now.place[item][1]
        targets = [r for r in self.home.receptacles_for[self.home.by_name[item].type] if r != source]
        target = self._target(self.home.room_of[source], targets)
        return None if target is None else self._relocate(now, "item_moved", item, target, avoid)

    def _dish_used(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        names = self._items(now, avoid, ("dish", "cup"), ("on", "in_hand"))
        item = self._pick_item(now, [d for d in names if not now.has("dirty", d) and d not in now.filled])
        if item is None:
            return None
        actor = self._actor_for(now, item, avoid)
        values = self._item_values(now, item, actor)
        entities = self._entities(item, actor, self._item_room(now, item))
        return Draft(kind="dish_used", remove=(), add=(Fact("dirty", (item,)),), values=values, entities=entities)

    def _cup_drunk(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        names = self._items(now, avoid, ("dish", "cup"), (*PLACED, "in_hand"))
        item = self._pick_item(now, [c for c in names if c in now.filled])
        if item is None:
            return None
        actor = self._actor_for(now, item, avoid)
        values = {**self._item_values(now, item, actor), "liquid": now.filled[item]}
        dirtied = not now.has("dirty", item)
        add = (Fact("dirty", (item,)),) if dirtied else ()
        remove = (Fact("filled", (item, now.filled[item])),)
        entities = self._entities(item, actor, self._item_room(now, item))
        return Draft(kind="cup_drunk", remove=remove, add=add, values=values, entities=entities, partial=dirtied)

    def _dish_washed(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        names = self._items(now, avoid, ("dish", "cup"), (*PLACED, "in_hand"))
        item = self._pick_item(now, [d for d in names if now.has("dirty", d)])
        if item is None:
            return None
        actor = self._actor_for(now, item, avoid)
        remove = [Fact("dirty", (item,))]
        if item in now.filled:
            remove.append(Fact("filled", (item, now.filled[item])))
        values = self._item_values(now, item, actor)
        return Draft(
            kind="dish_washed",
            remove=tuple(remove),
            add=(),
            values=values,
            entities=self._entities(item, actor, self._item_room(now, item)),
        )

    def _cup_filled(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        names = self._items(now, avoid, ("cup",), ("on", "in_hand"))
        item = self._pick_item(now, [c for c in names if not now.has("dirty", c) and c not in now.filled])
        if item is None:
            return None
        liquid = self.rng.choice(LIQUIDS)
        actor = self._actor_for(now, item, avoid)
        values = {**self._item_values(now, item, actor), "liquid": liquid}
        entities = self._entities(item, liquid, actor, self._item_room(now, item))
        return Draft(
            kind="cup_filled", remove=(), add=(Fact("filled", (item, liquid)),), values=values, entities=entities
        )

    def _phone(self, now: Now, avoid: frozenset[str], ringing: bool) -> str | None:
        names = self._items(now, avoid, ("phone",), (*PLACED, "in_hand"))
        return self._pick_item(now, [p for p in names if now.has("ringing", p) == ringing])

    def _phone_rings(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        phone = self._phone(now, avoid, ringing=False)
        if phone is None:
            return None
        values = self._item_values(now, phone, None)
        entities = self._entities(phone, self._item_room(now, phone))
        return Draft(kind="phone_rings", remove=(), add=(Fact("ringing", (phone,)),), values=values, entities=entities)

    def _phone_answered(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        phone = self._phone(now, avoid, ringing=True)
        if phone is None:
            return None
        actor = self._actor_for(now, phone, avoid)
        values = self._item_values(now, phone, actor)
        entities = self._entities(phone, actor, self._item_room(now, phone))
        return Draft(
            kind="phone_answered", remove=(Fact("ringing", (phone,)),), add=(), values=values, entities=entities
        )

    def _holder_type(self, now: Now, item: str) -> str:
        return self.home.by_name[now.place[item][1]].type

    def _clothes_to_washer(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        names = self._items(now, avoid, ("clothes",), (*PLACED, "in_hand"))
        item = self._pick_item(now, [c for c in names if now.has("dirty", c) and self._holder_type(now, c) != "washer"])
        washer = self._target(self._item_room(now, item), self.home.of_type("washer")) if item else None
        if item is None or washer is None:
            return None
        return self._relocate(now, "clothes_to_washer", item, washer, avoid)

    def _clothes_to_dryer(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        names = self._items(now, avoid, ("clothes",), ("inside",))
        item = self._pick_item(now, [c for c in names if now.has("wet", c) and self._holder_type(now, c) == "washer"])
        dryer = self._target(self._item_room(now, item), self.home.of_type("dryer")) if item else None
        if item is None or dryer is None:
            return None
        return self._relocate(now, "clothes_to_dryer", item, dryer, avoid)

    def _clothes_put_away(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        names = self._items(now, avoid, ("clothes",), (*PLACED, "in_hand"))
        clean = [c for c in names if not now.has("dirty", c) and not now.has("wet", c)]
        item = self._pick_item(now, [c for c in clean if now.place[c][1] not in self._wardrobes])
        wardrobe = self._target(self._item_room(now, item), self._wardrobes) if item else None
        if item is None or wardrobe is None:
            return None
        return self._relocate(now, "clothes_put_away", item, wardrobe, avoid)

    def _clothes_to_basket(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        names = self._items(now, avoid, ("clothes",), (*PLACED, "in_hand"))
        item = self._pick_item(now, [c for c in names if self._holder_type(now, c) != "basket"])
        basket = self._target(self._item_room(now, item), self.home.of_type("basket")) if item else None
        if item is None or basket is None:
            return None
        dirtied = not now.has("dirty", item)
        extra = (Fact("dirty", (item,)),) if dirtied else ()
        draft = self._relocate(now, "clothes_to_basket", item, basket, avoid, extra)
        return draft if dirtied else replace(draft, partial=False)

    def _run_machine(self, now: Now, avoid: frozenset[str], type_: str) -> Draft | None:
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
                "clothes": join_phrases([self._the(c) for c in changed]),
                "first_clothes": self._the(changed[0]),
            }
            kind = "clothes_washed" if type_ == "washer" else "clothes_dried"
            entities = self._entities(*changed, machine, room, actor)
            return Draft(
                kind=kind,
                remove=tuple(remove),
                add=tuple(add),
                values=values,
                entities=entities,
                partial=len(changed) > 1,
            )
        return None

    def _clothes_washed(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        return self._run_machine(now, avoid, "washer")

    def _clothes_dried(self, now: Now, avoid: frozenset[str]) -> Draft | None:
        return self._run_machine(now, avoid, "dryer")
