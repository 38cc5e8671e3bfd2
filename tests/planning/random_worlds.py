"""Small seeded random worlds in ``household`` and ``example_home``, random walks of applicable
actions and mutations of them: the material of the cross-check against unified-planning.

Worlds are kept small (a handful of rooms and items) because unified-planning parses and
simulates slowly, but they are built so that every action of the domain can apply: a sink with
a faucet, a washer and a dryer with clothes, cups that may be filled, phones that may ring.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kg_memory import Domain, Entity, Fact
from planning import ActionEvaluator, GroundAction, World

ROBOT = "robot_1"
LIQUIDS = ("water", "milk", "juice", "coffee")


@dataclass(frozen=True, slots=True)
class RandomWorld:
    domain: Domain
    entities: tuple[Entity, ...]
    facts: tuple[Fact, ...]

    def world(self) -> World:
        return World(self.domain, self.entities, self.facts)

    def problem_pddl(self, goal: str = "(and)") -> str:
        """The world as a PDDL problem over its domain (the domain's constants are not repeated)."""
        by_type: dict[str, list[str]] = {}
        for entity in self.entities:
            by_type.setdefault(entity.type, []).append(entity.name)
        objects = " ".join(f"{' '.join(names)} - {type_}" for type_, names in sorted(by_type.items()))
        init = " ".join(str(f) for f in sorted(self.facts, key=str))
        return (
            f"(define (problem random_{self.domain.name}) (:domain {self.domain.name})\n"
            f"  (:objects {objects})\n  (:init {init})\n  (:goal {goal}))\n"
        )


class _Builder:
    """Entities and facts under construction, named ``<type>_<n>``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.entities: list[Entity] = []
        self.facts: list[Fact] = []

    def new(self, type_: str) -> str:
        name = f"{type_}_{sum(e.type == type_ for e in self.entities)}"
        self.entities.append(Entity(name, type_))
        return name

    def fact(self, predicate: str, *args: str) -> None:
        self.facts.append(Fact(predicate, args))

    def maybe(self, share: float, predicate: str, *args: str) -> None:
        if self.rng.random() < share:
            self.fact(predicate, *args)

    def rooms(self, low: int, high: int) -> list[str]:
        """Rooms on a random tree, connected both ways, plus perhaps one shortcut and one loop."""
        rooms = [self.new("room") for _ in range(self.rng.randint(low, high))]
        edges = {tuple(sorted((rooms[i], self.rng.choice(rooms[:i])))) for i in range(1, len(rooms))}
        if len(rooms) > 2 and self.rng.random() < 0.5:
            edges.add(tuple(sorted(self.rng.sample(rooms, 2))))
        for a, b in sorted(edges):
            self.fact("connected", a, b)
            self.fact("connected", b, a)
        if self.rng.random() < 0.5:  # then moving from a room to itself deletes and adds the same atom
            loop = self.rng.choice(rooms)
            self.fact("connected", loop, loop)
        return rooms

    def robot_and_people(self, rooms: list[str], people: int, robot_room: str | None = None) -> None:
        self.fact("robot_at", ROBOT, robot_room or self.rng.choice(rooms))
        for _ in range(people):
            self.fact("person_in", self.new("person"), self.rng.choice(rooms))

    def done(self, domain: Domain) -> RandomWorld:
        return RandomWorld(domain, tuple(self.entities), tuple(dict.fromkeys(self.facts)))


HOUSEHOLD_ITEMS = ("book", "pen", "perishable", "nonperishable", "dish", "cup", "clothes", "remote", "phone")
HOUSEHOLD_SHELVES = ("surface", "container", "basket", "toilet", "surface")
CONTAINERS = ("container", "washer", "dryer")


def household_world(domain: Domain, seed: int) -> RandomWorld:
    """Rooms, a sink with its faucet, a washer, a dryer, shelves, a light and a TV, items and people."""
    b = _Builder(random.Random(seed))
    rooms = b.rooms(2, 4)
    receptacles = {name: b.new(name.split("_")[0]) for name in ("sink", "washer", "dryer")}
    shelves = [b.new(t) for t in b.rng.sample(HOUSEHOLD_SHELVES, b.rng.randint(1, 3))]
    placed = {r: b.rng.choice(rooms) for r in [*receptacles.values(), *shelves]}
    for receptacle, room in placed.items():
        b.fact("in_room", receptacle, room)
        if receptacle.split("_")[0] in CONTAINERS:
            b.maybe(0.5, "open", receptacle)
    faucet = b.new("faucet")
    b.fact("faucet_at", faucet, receptacles["sink"])
    b.fact("appliance_in", faucet, placed[receptacles["sink"]])
    # often a kitchen scene: the robot by the sink, the faucet on, a cup in hand (clean or dirty,
    # empty or full), so that washing, filling and pouring out get their chance in short walks
    scene = b.rng.random() < 0.6
    b.maybe(1.0 if scene else 0.5, "switched_on", faucet)
    for type_ in ("light", "tv"):
        appliance = b.new(type_)
        b.fact("appliance_in", appliance, b.rng.choice(rooms))
        b.maybe(0.5, "switched_on", appliance)
    b.robot_and_people(rooms, b.rng.randint(1, 2), placed[receptacles["sink"]] if scene else None)
    types = ["cup", "clothes", "clothes", "phone", *b.rng.sample(HOUSEHOLD_ITEMS, b.rng.randint(2, 4))]
    _place_household_items(b, [b.new(t) for t in types], list(placed), scene)
    return b.done(domain)


def _place_household_items(b: _Builder, items: list[str], receptacles: list[str], scene: bool) -> None:
    """The robot holds the cup (``items[0]``) in a kitchen scene, else perhaps any item; the rest lie about."""
    held = items[0] if scene else (b.rng.choice(items) if b.rng.random() < 0.5 else None)
    b.fact(*(("held", held, ROBOT) if held else ("hand_empty", ROBOT)))
    people = [e.name for e in b.entities if e.type == "person"]
    for item in items:
        kind = item.split("_")[0]
        if item != held:
            _put_somewhere(b, item, receptacles, people)
        b.maybe(0.6 if kind in ("dish", "cup") else 0.5, "dirty", item)
        if kind == "clothes":
            b.maybe(0.4, "wet", item)
        if kind == "phone":
            b.maybe(0.6, "ringing", item)
        if kind in ("dish", "cup") and b.rng.random() < 0.5:
            b.fact("filled", item, b.rng.choice(LIQUIDS))


def _put_somewhere(b: _Builder, item: str, receptacles: list[str], people: list[str]) -> None:
    if b.rng.random() < 0.15:
        b.fact("in_hand", item, b.rng.choice(people))
        return
    containers = [r for r in receptacles if r.split("_")[0] in CONTAINERS]
    prefer = containers if item.startswith("clothes") and b.rng.random() < 0.7 else receptacles
    receptacle = b.rng.choice(prefer)
    inside = receptacle in containers and b.rng.random() < 0.7
    b.fact("inside" if inside else "on", item, receptacle)


def example_home_world(domain: Domain, seed: int) -> RandomWorld:
    """Rooms, furniture and a sink, lights, items and dishes, people."""
    b = _Builder(random.Random(seed))
    rooms = b.rooms(2, 4)
    furniture = [b.new("sink")] + [b.new("furniture") for _ in range(b.rng.randint(1, 3))]
    for piece in furniture:
        b.fact("in_room", piece, b.rng.choice(rooms))
    for _ in range(b.rng.randint(1, 3)):
        light = b.new("light")
        b.fact("light_in", light, b.rng.choice(rooms))
        b.maybe(0.5, "light_on", light)
    b.robot_and_people(rooms, b.rng.randint(1, 2))
    items = [b.new(b.rng.choice(("item", "dish", "dish"))) for _ in range(b.rng.randint(3, 6))]
    held = b.rng.choice(items) if b.rng.random() < 0.4 else None
    b.fact(*(("held", held, ROBOT) if held else ("hand_empty", ROBOT)))
    people = [e.name for e in b.entities if e.type == "person"]
    for item in items:
        if item == held:
            pass
        elif b.rng.random() < 0.15:
            b.fact("in_hand", item, b.rng.choice(people))
        else:
            b.fact("on", item, b.rng.choice(furniture))
        if item.startswith("dish"):
            b.maybe(0.6, "dirty", item)
    return b.done(domain)


BUILDERS: dict[str, Callable[[Domain, int], RandomWorld]] = {
    "household": household_world,
    "example_home": example_home_world,
}


# -- plans ----------------------------------------------------------------------------------


def groundings(domain: Domain, world: World) -> dict[str, list[GroundAction]]:
    """Every well-typed ground action, by action name (small worlds only: it is a product)."""
    return {
        name: [
            GroundAction(name, args)
            for args in itertools.product(*(world.objects_of(p.type) for p in schema.parameters))
        ]
        for name, schema in domain.actions.items()
    }


def applicable(evaluator: ActionEvaluator, world: World, action: GroundAction) -> bool:
    """The precondition alone, without building a delta or reasons (fast enough to scan groundings)."""
    schema = evaluator.domain.actions[action.name]
    binding = {p.name: a for p, a in zip(schema.parameters, action.args, strict=True)}
    return evaluator.evaluate(schema.precondition, world, binding)


def random_walk(
    evaluator: ActionEvaluator,
    world: World,
    ground: dict[str, list[GroundAction]],
    rng: random.Random,
    length: int,
    taken: Counter[str] | None = None,
) -> list[GroundAction]:
    """Up to ``length`` applicable actions from ``world`` (which is left unchanged).

    Each step picks, among the action kinds that apply, one ``taken`` least often (a counter the
    caller may share between walks, and which the walk updates), then a random grounding of it:
    so the rare kinds (wash, fill, pour_out...) get their turn whenever they apply.
    """
    current, plan, taken = world.copy(), [], Counter() if taken is None else taken
    for _ in range(length):
        step = _random_applicable(evaluator, current, ground, rng, taken)
        if step is None:
            break
        evaluator.execute(step, current)
        plan.append(step)
        taken[step.name] += 1
    return plan


def _random_applicable(
    evaluator: ActionEvaluator,
    world: World,
    ground: dict[str, list[GroundAction]],
    rng: random.Random,
    taken: Counter[str],
) -> GroundAction | None:
    for name in sorted(rng.sample(sorted(ground), len(ground)), key=taken.__getitem__):
        choices = [a for a in ground[name] if applicable(evaluator, world, a)]
        if choices:
            return rng.choice(choices)
    return None


def mutate(
    plan: Sequence[GroundAction], world: World, ground: dict[str, list[GroundAction]], rng: random.Random
) -> list[GroundAction]:
    """A plan changed once: steps swapped, dropped, duplicated or inserted, or an argument replaced by
    another object of the right type or (rarely) of a wrong one. Most results no longer execute."""
    steps = list(plan)
    kind = rng.choice(("swap", "drop", "duplicate", "insert", "argument", "argument", "argument", "mistype"))
    if kind in ("swap", "drop") and len(steps) < 2:
        kind = "insert"
    if kind == "swap":
        i, j = rng.sample(range(len(steps)), 2)
        steps[i], steps[j] = steps[j], steps[i]
    elif kind == "drop":
        del steps[rng.randrange(len(steps) - 1)]  # dropping the last step would keep it valid
    elif kind == "duplicate" and steps:
        i = rng.randrange(len(steps))
        steps.insert(i, steps[i])
    elif kind in ("argument", "mistype") and steps:
        i = rng.randrange(len(steps))
        steps[i] = _replace_argument(steps[i], world, rng, well_typed=kind == "argument")
    else:
        steps.insert(rng.randint(0, len(steps)), rng.choice(rng.choice(list(ground.values()))))
    return steps


def _replace_argument(action: GroundAction, world: World, rng: random.Random, well_typed: bool) -> GroundAction:
    schema = world.domain.actions[action.name]
    position = rng.randrange(len(action.args))
    type_ = schema.parameters[position].type
    fits = set(world.objects_of(type_))
    pool = fits - {action.args[position]} if well_typed else set(world.objects_of("object")) - fits
    if not pool:
        return action
    args = list(action.args)
    args[position] = rng.choice(sorted(pool))
    return GroundAction(action.name, tuple(args))


def touchable(evaluator: ActionEvaluator, world: World, plan: Sequence[GroundAction]) -> set[Fact]:
    """Every atom an effect of the plan's steps could set, whatever its condition: executing ``plan``
    from ``world`` can only change these (and ``world`` is left as it is)."""
    atoms: set[Fact] = set()
    for action in plan:
        schema = evaluator.domain.actions[action.name]
        binding = {f"?{p.name}": a for p, a in zip(schema.parameters, action.args, strict=True)}
        for effect in schema.effects:
            names = [f"?{v.name}" for v in effect.forall]
            for combo in itertools.product(*(world.objects_of(v.type) for v in effect.forall)):
                env = binding | dict(zip(names, combo, strict=True))
                atoms.add(Fact(effect.atom.predicate, tuple(env.get(t, t) for t in effect.atom.terms)))
    return atoms
