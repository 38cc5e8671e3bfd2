"""The mistakes the simulated model makes in a state change: what it cannot see, and injected errors.

Every function draws from the caller's ``random.Random`` in a fixed order over sorted inputs, so an
answer depends only on its seed string, never on set iteration order.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kg_memory.domain import Domain
from kg_memory.model import Delta, Fact
from planning.world import World
from sim.model._prompt import PromptView

ERROR_KINDS: tuple[str, ...] = (
    "wrong_predicate",
    "wrong_entity",
    "missing_removal",
    "hallucinated_fact",
    "malformed_json",
)
CONTEXT_MISS = "context_miss"
NONEXISTENT_ENTITY = 0.1  # share of wrong entities that name nothing at all
SAME_TYPE_ENTITY = 0.5  # of the others, share of the same type as the right one

# Names a model plausibly writes instead of a predicate; real predicate names are filtered out.
_WRONG_NAMES: Mapping[str, tuple[str, ...]] = {
    "on": ("is_on", "placed_on", "on_top_of"),
    "inside": ("is_inside", "placed_in", "contained_in"),
    "in_hand": ("holding", "held_by", "carried_by"),
    "held": ("held_by", "holding"),
    "person_in": ("located_in", "is_in"),
    "switched_on": ("is_on", "turned_on", "powered_on"),
    "open": ("is_open", "opened"),
    "dirty": ("is_dirty", "unclean"),
    "wet": ("is_wet", "damp"),
    "ringing": ("is_ringing", "rings"),
    "filled": ("filled_with", "contains"),
}
_PROSE = (
    "Sure! Here is my answer:",
    "Here are the changes:",
    "Based on the request, the answer is as follows.",
)


@dataclass(frozen=True, slots=True)
class Edits:
    """A state-change answer: the facts to remove and to add, each sorted."""

    remove: tuple[Fact, ...] = ()
    add: tuple[Fact, ...] = ()

    @classmethod
    def of(cls, remove: Iterable[Fact], add: Iterable[Fact]) -> Edits:
        return cls(_sorted(remove), _sorted(add))

    @property
    def facts(self) -> frozenset[Fact]:
        return frozenset((*self.remove, *self.add))

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "remove": [{"predicate": f.predicate, "args": list(f.args)} for f in self.remove],
            "add": [{"predicate": f.predicate, "args": list(f.args)} for f in self.add],
        }


@dataclass(frozen=True, slots=True)
class Departure:
    """One way an answer differs from the truth (the model adds prompt, text and attempt)."""

    kind: str
    dropped: tuple[Fact, ...] = ()
    inserted: tuple[Fact, ...] = ()
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Situation:
    """What an error is drawn from: the true change, the prompt as read, and the current world."""

    truth: Delta
    view: PromptView
    world: World


T = TypeVar("T")
Applier = Callable[[random.Random], T | None]  # applies one error kind, or None where it cannot
EditApplier = Applier[tuple[Edits, Departure]]


def _sorted(facts: Iterable[Fact]) -> tuple[Fact, ...]:
    return tuple(sorted(set(facts), key=lambda f: (f.predicate, f.args)))


def guess_name(label: str) -> str:
    """The name a model makes up for an entity it only knows by label: "blue mug" -> ``blue_mug``."""
    name = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
    return name if name[:1].isalpha() else f"x_{name}".rstrip("_")


def visible_edits(situation: Situation) -> tuple[Edits, list[Departure]]:
    """The true change as far as the prompt shows it, and a context miss for each departure.

    A removal whose fact is not shown is left out; an added fact naming an entity the model cannot
    see uses a name guessed from the entity's label.
    """
    truth, view, world = situation.truth, situation.view, situation.world
    misses: list[Departure] = []
    for fact in _sorted(truth.remove - view.facts):
        misses.append(Departure(CONTEXT_MISS, (fact,), (), f"removal {fact.display()} is not in the context"))
    visible = view.visible
    add: list[Fact] = []
    for fact in _sorted(truth.add):
        args = tuple(a if a in visible else _guess(world, a) for a in fact.args)
        guessed = Fact(fact.predicate, args)
        if guessed != fact:
            unseen = ", ".join(a for a in fact.args if a not in visible)
            detail = f"{unseen} not in the context: {fact.display()} written as {guessed.display()}"
            misses.append(Departure(CONTEXT_MISS, (fact,), (guessed,), detail))
        add.append(guessed)
    return Edits.of(truth.remove & view.facts, add), misses


def _guess(world: World, name: str) -> str:
    entity = world.entity(name)
    return guess_name(entity.label) if entity is not None else name


def draw_error(rng: random.Random, weights: Mapping[str, float], appliers: Mapping[str, Applier[T]]) -> T | None:
    """Apply one error of a kind drawn by weight; a kind that does not apply here is set aside and
    another drawn. ``None`` when no kind applies."""
    remaining = [k for k in ERROR_KINDS if weights.get(k, 0.0) > 0 and k in appliers]
    while remaining:
        kind = rng.choices(remaining, weights=[weights[k] for k in remaining])[0]
        applied = appliers[kind](rng)
        if applied is not None:
            return applied
        remaining.remove(kind)
    return None


def edit_appliers(edits: Edits, situation: Situation) -> dict[str, EditApplier]:
    """One applier per error kind, over a state-change answer."""
    return {
        "wrong_predicate": lambda rng: _wrong_predicate(edits, situation, rng),
        "wrong_entity": lambda rng: _wrong_entity(edits, situation, rng),
        "missing_removal": lambda rng: _missing_removal(edits, rng),
        "hallucinated_fact": lambda rng: _hallucinated_fact(edits, situation, rng),
        "malformed_json": lambda rng: (edits, Departure("malformed_json", detail="prose and a truncated JSON object")),
    }


def wrong_predicate_name(predicate: str, domain: Domain, rng: random.Random) -> str:
    """A plausible but wrong name for ``predicate``, never a real predicate of ``domain``."""
    options = (*_WRONG_NAMES.get(predicate, ()), f"is_{predicate}", f"{predicate}_state")
    return rng.choice([o for o in dict.fromkeys(options) if o not in domain.predicates])


def _wrong_predicate(edits: Edits, situation: Situation, rng: random.Random) -> tuple[Edits, Departure] | None:
    choices = [("remove", f) for f in edits.remove] + [("add", f) for f in edits.add]
    if not choices:
        return None
    side, fact = rng.choice(choices)
    wrong = Fact(wrong_predicate_name(fact.predicate, situation.world.domain, rng), fact.args)
    detail = f"{side} {fact.display()} written with predicate {wrong.predicate}"
    return _swap(edits, side, fact, wrong), Departure("wrong_predicate", (fact,), (wrong,), detail)


def wrong_entity_name(original: str, avoid: Sequence[str], view: PromptView, world: World, rng: random.Random) -> str:
    """Another name for ``original``: a listed entity, half the time of its type, or a made-up name."""
    kind = world.type_of(original) or (view.entities[original].type if original in view.entities else "thing")
    listed = [e for _, e in sorted(view.entities.items()) if e.name not in avoid]
    same = [e.name for e in listed if e.type == kind]
    other = [e.name for e in listed if e.type != kind]
    if rng.random() < NONEXISTENT_ENTITY or not (same or other):
        return _made_up_name(kind, world, rng)
    first, second = (same, other) if rng.random() < SAME_TYPE_ENTITY else (other, same)
    return rng.choice(first or second)


def _made_up_name(kind: str, world: World, rng: random.Random) -> str:
    for _ in range(20):
        name = f"{kind}_{rng.randint(2, 99)}"
        if world.entity(name) is None:
            return name
    return f"{kind}_unknown"


def _wrong_entity(edits: Edits, situation: Situation, rng: random.Random) -> tuple[Edits, Departure] | None:
    if not edits.add:
        return None
    fact = rng.choice(edits.add)
    if not fact.arity:
        return None
    index = rng.randrange(fact.arity)
    name = wrong_entity_name(fact.args[index], fact.args, situation.view, situation.world, rng)
    wrong = Fact(fact.predicate, (*fact.args[:index], name, *fact.args[index + 1 :]))
    if wrong in edits.facts:
        return None
    detail = f"add {fact.display()} written as {wrong.display()} ({fact.args[index]} replaced by {name})"
    return _swap(edits, "add", fact, wrong), Departure("wrong_entity", (fact,), (wrong,), detail)


def _missing_removal(edits: Edits, rng: random.Random) -> tuple[Edits, Departure] | None:
    if not edits.remove:
        return None
    fact = rng.choice(edits.remove)
    kept = Edits.of((f for f in edits.remove if f != fact), edits.add)
    return kept, Departure("missing_removal", (fact,), (), f"removal {fact.display()} left out")


def _hallucinated_fact(edits: Edits, situation: Situation, rng: random.Random) -> tuple[Edits, Departure] | None:
    fact = _made_up_fact(edits, situation, rng)
    if fact is None:
        return None
    return Edits.of(edits.remove, (*edits.add, fact)), Departure(
        "hallucinated_fact", (), (fact,), f"added {fact.display()}, which the request does not say"
    )


def _made_up_fact(edits: Edits, situation: Situation, rng: random.Random) -> Fact | None:
    """A false fact over listed entities: well-typed if any fits, else a unary one of any listed entity."""
    world, view = situation.world, situation.view
    domain = world.domain
    known = edits.facts | situation.truth.remove | situation.truth.add | view.facts
    names = sorted(view.entities)
    if not names:
        return None
    predicates = [p for _, p in sorted(domain.predicates.items()) if not p.static]
    rng.shuffle(predicates)
    for schema in predicates:
        pools = [[n for n in names if domain.is_subtype(view.entities[n].type, p.type)] for p in schema.parameters]
        if not all(pools):
            continue
        for _ in range(5):
            fact = Fact(schema.name, tuple(rng.choice(pool) for pool in pools))
            if len(set(fact.args)) == fact.arity and fact not in known and not world.holds(fact):
                return fact
    for schema in (p for p in predicates if p.arity == 1):  # nothing fits: an ill-typed guess
        fact = Fact(schema.name, (rng.choice(names),))
        if fact not in known and not world.holds(fact):
            return fact
    return None


def _swap(edits: Edits, side: str, old: Fact, new: Fact) -> Edits:
    remove = [new if side == "remove" and f == old else f for f in edits.remove]
    return Edits.of(remove, (new if side == "add" and f == old else f for f in edits.add))


def malformed(reply: str, rng: random.Random) -> str:
    """Prose, then ``reply`` cut off before its first closing bracket, so no JSON can be found in it."""
    close = min((i for i in (reply.find("]"), reply.find("}")) if i >= 0), default=len(reply))
    return f"{rng.choice(_PROSE)}\n{reply[: rng.randint(1, max(1, close))]}"
