"""A synthetic household in the ``example_home`` domain for benchmarks: deterministic for a
seed, and a valid state under the domain's rules (every item on exactly one furniture or in
one person's hand; every person, furniture and light in one room; the robot in one room
with an empty hand). Facts beyond those fill up with ``connected`` rooms."""

from __future__ import annotations

import random
from dataclasses import dataclass

from kg_memory import Delta, Entity, Fact

ROBOT = "robot_1"
# Share of the entities of each type (dishes take the rest), and the stems of their names.
MIX: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    ("room", 0.20, ("kitchen", "hall", "bedroom", "bathroom", "office", "lounge")),
    ("furniture", 0.13, ("table", "shelf", "desk", "cabinet", "counter", "sofa")),
    ("sink", 0.02, ("sink",)),
    ("light", 0.10, ("lamp",)),
    ("person", 0.05, ("person",)),
    ("item", 0.30, ("book", "remote", "phone", "keys", "box", "toy")),
    ("dish", 0.20, ("mug", "plate", "bowl", "glass", "cup")),
)
COLOURS = ("red", "blue", "green", "white", "black")
IN_HAND, LIGHT_ON, DIRTY = 0.02, 0.4, 0.5  # shares of items in a hand, lights on, dishes dirty


@dataclass(frozen=True, slots=True)
class Household:
    entities: tuple[Entity, ...]  # in load order: rooms, furniture, lights, people, items
    facts: tuple[Fact, ...]
    furniture: tuple[str, ...]
    on: dict[str, str]  # item -> the furniture it is on (the other items are in a person's hand)


def _make_entities(rng: random.Random, count: int) -> dict[str, list[Entity]]:
    by_type: dict[str, list[Entity]] = {}
    serial = 0
    for type_, share, stems in MIX:
        n = max(1, count - serial) if type_ == "dish" else max(1, round(count * share))
        by_type[type_] = []
        for _ in range(n):
            attrs = {"colour": rng.choice(COLOURS)} if type_ in ("item", "dish") else {}
            by_type[type_].append(Entity(f"{rng.choice(stems)}_{serial}", type_, attrs=attrs))
            serial += 1
    return by_type


def _connections(rng: random.Random, rooms: list[str], budget: int) -> list[Fact]:
    """The rest of the fact budget: rooms on a shuffled ring, each connected both ways to its next ones."""
    ring = rng.sample(rooms, len(rooms))
    pairs: dict[tuple[str, str], None] = {}
    for offset in range(1, len(ring)):
        for j, a in enumerate(ring):
            b = ring[(j + offset) % len(ring)]
            pairs.update({(a, b): None, (b, a): None})
            if len(pairs) >= budget:
                return [Fact("connected", p) for p in list(pairs)[: max(budget, 0)]]
    return [Fact("connected", p) for p in pairs]


def build_household(n_entities: int, n_facts: int, seed: int) -> Household:
    """Every item on exactly one furniture or in one person's hand, every person, furniture and light in one room."""
    rng = random.Random(seed)
    by_type = _make_entities(rng, n_entities)
    names = {t: [e.name for e in es] for t, es in by_type.items()}
    rooms, people, furniture = names["room"], names["person"], names["furniture"] + names["sink"]
    facts = [Fact("hand_empty", (ROBOT,)), Fact("robot_at", (ROBOT, rng.choice(rooms)))]
    facts += [Fact("in_room", (f, rng.choice(rooms))) for f in furniture]
    facts += [Fact("light_in", (light, rng.choice(rooms))) for light in names["light"]]
    facts += [Fact("light_on", (light,)) for light in names["light"] if rng.random() < LIGHT_ON]
    facts += [Fact("person_in", (p, rng.choice(rooms))) for p in people]
    on: dict[str, str] = {}
    for item in names["item"] + names["dish"]:
        if rng.random() < IN_HAND:
            facts.append(Fact("in_hand", (item, rng.choice(people))))
        else:
            on[item] = rng.choice(furniture)
            facts.append(Fact("on", (item, on[item])))
    facts += [Fact("dirty", (d,)) for d in names["dish"] if rng.random() < DIRTY]
    facts += _connections(rng, rooms, n_facts - len(facts))
    entities = tuple(e for type_, _, _ in MIX for e in by_type[type_])
    return Household(entities, tuple(facts), tuple(furniture), on)


def load_batches(household: Household, batch_facts: int) -> list[tuple[list[Entity], list[Fact]]]:
    """Perception updates of about ``batch_facts`` facts; each fact comes with the last entity it needs."""
    position = {e.name: i for i, e in enumerate(household.entities)}
    placed: list[list[Fact]] = [[] for _ in household.entities]
    for fact in household.facts:
        placed[max(position.get(a, 0) for a in fact.args)].append(fact)  # robot_1 exists from the start
    batches: list[tuple[list[Entity], list[Fact]]] = [([], [])]
    for entity, facts in zip(household.entities, placed, strict=True):
        if len(batches[-1][1]) >= batch_facts:
            batches.append(([], []))
        batches[-1][0].append(entity)
        batches[-1][1].extend(facts)
    return batches


class Mover:
    """Proposes deltas that move items between furniture, and tracks where the items are."""

    def __init__(self, rng: random.Random, household: Household) -> None:
        self.rng, self.furniture, self.on = rng, household.furniture, dict(household.on)

    def propose(self, changes: int) -> tuple[Delta, dict[str, str]]:
        items = self.rng.sample(sorted(self.on), changes // 2)
        moves = {i: self._elsewhere(self.on[i]) for i in items}
        remove = frozenset(Fact("on", (i, self.on[i])) for i in items)
        return Delta(remove=remove, add=frozenset(Fact("on", m) for m in moves.items())), moves

    def _elsewhere(self, current: str) -> str:
        while (choice := self.rng.choice(self.furniture)) == current:
            pass
        return choice
