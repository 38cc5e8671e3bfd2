"""Random household tasks: an English request and its ground-truth PDDL goal.

Each kind picks entities from the current true state so that the goal does not already
hold; whether it can be achieved is settled by planning (see ``Simulator.new_task``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kg_memory import Fact
from kg_memory.formula import And, Atom, Formula, Not, Parameter, Quantified
from planning.world import World
from sim.errors import SimulationError


@dataclass(frozen=True, slots=True)
class Task:
    kind: str
    text: str
    goal: Formula
    entities: tuple[str, ...]

    @property
    def goal_pddl(self) -> str:
        return str(self.goal)


def _atom(predicate: str, *args: str) -> Atom:
    return Atom(predicate, args)


def _forall_not(type_: str, predicate: str) -> Quantified:
    return Quantified(True, (Parameter("x", type_),), Not(Atom(predicate, ("?x",))))


class _Picker:
    """Entity choices over a world, with labels for the English text."""

    def __init__(self, world: World, rng: random.Random) -> None:
        self.world, self.rng = world, rng

    def label(self, name: str) -> str:
        entity = self.world.entity(name)
        text = entity.label if entity else name
        return text if entity is not None and entity.type == "person" else f"the {text}"

    def one(self, names: Sequence[str]) -> str | None:
        return self.rng.choice(sorted(names)) if names else None

    def reachable_items(self, type_: str) -> list[str]:
        """Items the robot can get at: on or inside a receptacle, or already in its hand."""
        return [i for i in self.world.objects_of(type_) if not self._in_a_persons_hand(i)]

    def _in_a_persons_hand(self, item: str) -> bool:
        return any(f.predicate == "in_hand" and f.args[0] == item for f in self.world.facts_about(item))

    def where(self, item: str) -> str | None:
        for fact in self.world.facts_about(item):
            if fact.predicate in ("on", "inside") and fact.args[0] == item:
                return fact.args[1]
        return None

    def holds(self, predicate: str, *args: str) -> bool:
        return self.world.holds(Fact(predicate, args))


Phrases = tuple[str, ...]
_PUT: Phrases = (
    "Please put {item} {prep} {target}.",
    "Could you move {item} to {target}?",
    "{item_cap} belongs {prep} {target}; put it back, please.",
)
_WASH: Phrases = ("Could you wash {dish}?", "{dish_cap} is dirty, please clean it.", "Please wash {dish} for me.")
_BRING: Phrases = (
    "Bring {item} to {person}.",
    "{person} needs {item}; could you take it to them?",
    "Please hand {item} to {person}.",
)
_LIGHTS: Phrases = (
    "Turn off all the lights.",
    "Switch off every light in the house, please.",
    "Could you make sure no light is left on?",
)
_LIGHTS_FAUCETS: Phrases = (
    "Turn off every light and faucet in the house.",
    "Please switch off all lights and taps.",
    "Make sure no light or faucet is left on anywhere.",
)
_WATER: Phrases = (
    "Bring {person} a glass of water.",
    "{person} is thirsty; get them a cup of water, please.",
    "Could you fill a cup with water and give it to {person}?",
)
_SWITCH_ON: Phrases = ("Turn on {appliance}.", "Please switch {appliance} on.", "Could you put {appliance} on?")
_FRIDGE: Phrases = (
    "Put {food} in {fridge}.",
    "{food_cap} should go in {fridge}, please.",
    "Could you store {food} in {fridge}?",
)
_LAUNDRY: Phrases = (
    "Wash and dry {clothes}.",
    "{clothes_cap} needs washing and drying.",
    "Please do the laundry for {clothes}: wash it and dry it.",
)
_PHONE: Phrases = (
    "Answer {phone}, it's ringing.",
    "Can you pick up {phone}? It's ringing.",
    "Please answer the call on {phone}.",
)
_CLOSE: Phrases = (
    "Close {container}.",
    "Someone left {container} open; please close it.",
    "Could you shut {container}?",
)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _say(pick: _Picker, phrases: Phrases, words: dict[str, str] | None = None, **names: str) -> str:
    """One of ``phrases`` with entity labels for ``names`` (and ``<key>_cap`` capitalized) and ``words`` verbatim."""
    values = {key: pick.label(name) for key, name in names.items()}
    values.update({f"{key}_cap": _cap(value) for key, value in list(values.items())})
    return pick.rng.choice(phrases).format(**values, **(words or {}))


def _put_item(pick: _Picker) -> Task | None:
    item = pick.one(pick.reachable_items("item"))
    if item is None:
        return None
    current = pick.where(item)
    targets = [r for r in pick.world.objects_of("receptacle") if r != current]
    target = pick.one(targets)
    if target is None:
        return None
    inside = pick.world.type_of(target) in ("container", "washer", "dryer")
    goal = _atom("inside" if inside else "on", item, target)
    text = _say(pick, _PUT, {"prep": "in" if inside else "on"}, item=item, target=target)
    return Task("put_item", text, goal, (item, target))


def _wash_dish(pick: _Picker) -> Task | None:
    dish = pick.one([d for d in pick.reachable_items("dish") if pick.holds("dirty", d)])
    if dish is None:
        return None
    return Task("wash_dish", _say(pick, _WASH, dish=dish), Not(_atom("dirty", dish)), (dish,))


def _bring_item(pick: _Picker) -> Task | None:
    item, person = pick.one(pick.reachable_items("item")), pick.one(pick.world.objects_of("person"))
    if item is None or person is None:
        return None
    return Task(
        "bring_item", _say(pick, _BRING, item=item, person=person), _atom("in_hand", item, person), (item, person)
    )


def _lights_off(pick: _Picker) -> Task | None:
    if not any(pick.holds("switched_on", light) for light in pick.world.objects_of("light")):
        return None
    return Task("lights_off", pick.rng.choice(_LIGHTS), _forall_not("light", "switched_on"), ())


def _lights_and_faucets_off(pick: _Picker) -> Task | None:
    on = [x for t in ("light", "faucet") for x in pick.world.objects_of(t) if pick.holds("switched_on", x)]
    if not any(pick.world.type_of(x) == "faucet" for x in on):
        return None
    goal = And((_forall_not("light", "switched_on"), _forall_not("faucet", "switched_on")))
    return Task("lights_and_faucets_off", pick.rng.choice(_LIGHTS_FAUCETS), goal, ())


def _water_for_person(pick: _Picker) -> Task | None:
    thirsty = [p for p in pick.world.objects_of("person") if not _holds_water(pick, p)]
    person = pick.one(thirsty)
    if person is None or not pick.reachable_items("cup"):
        return None
    cup = Parameter("c", "cup")
    goal = Quantified(False, (cup,), And((Atom("filled", ("?c", "water")), Atom("in_hand", ("?c", person)))))
    return Task("water_for_person", _say(pick, _WATER, person=person), goal, (person,))


def _holds_water(pick: _Picker, person: str) -> bool:
    held = [f.args[0] for f in pick.world.facts_about(person) if f.predicate == "in_hand" and f.args[1] == person]
    return any(pick.holds("filled", cup, "water") for cup in held)


def _switch_on(pick: _Picker) -> Task | None:
    off = [x for t in ("tv", "light") for x in pick.world.objects_of(t) if not pick.holds("switched_on", x)]
    appliance = pick.one(off)
    if appliance is None:
        return None
    text = _say(pick, _SWITCH_ON, appliance=appliance)
    return Task("switch_on", text, _atom("switched_on", appliance), (appliance,))


def _store_food(pick: _Picker) -> Task | None:
    fridges = [c for c in pick.world.objects_of("container") if "fridge" in pick.label(c)]
    fridge = pick.one(fridges)
    food = pick.one([f for f in pick.reachable_items("perishable") if pick.where(f) not in fridges])
    if fridge is None or food is None:
        return None
    return Task(
        "store_food", _say(pick, _FRIDGE, food=food, fridge=fridge), _atom("inside", food, fridge), (food, fridge)
    )


def _laundry(pick: _Picker) -> Task | None:
    if not pick.world.objects_of("washer") or not pick.world.objects_of("dryer"):
        return None
    clothes = pick.one([c for c in pick.reachable_items("clothes") if pick.holds("dirty", c)])
    if clothes is None:
        return None
    goal = And((Not(_atom("dirty", clothes)), Not(_atom("wet", clothes))))
    return Task("laundry", _say(pick, _LAUNDRY, clothes=clothes), goal, (clothes,))


def _answer_phone(pick: _Picker) -> Task | None:
    phone = pick.one([p for p in pick.reachable_items("phone") if pick.holds("ringing", p)])
    if phone is None:
        return None
    return Task("answer_phone", _say(pick, _PHONE, phone=phone), Not(_atom("ringing", phone)), (phone,))


def _close_container(pick: _Picker) -> Task | None:
    container = pick.one([c for c in pick.world.objects_of("container") if pick.holds("open", c)])
    if container is None:
        return None
    text = _say(pick, _CLOSE, container=container)
    return Task("close_container", text, Not(_atom("open", container)), (container,))


TASK_KINDS: dict[str, Callable[[_Picker], Task | None]] = {
    "put_item": _put_item,
    "wash_dish": _wash_dish,
    "bring_item": _bring_item,
    "lights_off": _lights_off,
    "lights_and_faucets_off": _lights_and_faucets_off,
    "water_for_person": _water_for_person,
    "switch_on": _switch_on,
    "store_food": _store_food,
    "laundry": _laundry,
    "answer_phone": _answer_phone,
    "close_container": _close_container,
}


class TaskGenerator:
    """Proposes tasks for the current true state; deterministic for a seed."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def propose(self, world: World, attempts: int = 50) -> Task:
        pick = _Picker(world, self.rng)
        kinds = sorted(TASK_KINDS)
        for _ in range(attempts):
            task = TASK_KINDS[self.rng.choice(kinds)](pick)
            if task is not None:
                return task
        raise SimulationError(f"no task kind applies to this home after {attempts} attempts")
