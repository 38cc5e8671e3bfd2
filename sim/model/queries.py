"""The query graphs a language model would write, derived from the truth with its noise.

A model reading "Ava put the blue mug on the table" writes nodes for what the sentence mentions
(labels, sometimes a synonym or a shortened label, not always a type) and edges for the relations
it states (the predicate's words or a paraphrase, some left out). The retrieval experiments feed
such graphs to the search retriever, and the simulated language model answers the query-graph
prompt with them. Every draw comes from the caller's ``random.Random``, in a fixed order.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kg_memory import Entity, Fact
from kg_memory.formula import And, Atom, Formula, Not, Or, Quantified
from planning.problem import goal_objects, goal_types
from planning.world import World
from retrieval import QueryEdge, QueryGraph, QueryNode, relation_phrase
from sim.events import Event
from sim.tasks import Task

# -- the noise a language model adds ---------------------------------------------------------------

# What people may call a thing instead of its label's noun (the label's last words).
SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "mug": ("cup",),
    "teacup": ("cup",),
    "tumbler": ("glass",),
    "glass": ("cup",),
    "cup": ("mug",),
    "plate": ("dish",),
    "saucepan": ("pot",),
    "serving dish": ("platter",),
    "sofa": ("couch",),
    "tv": ("television",),
    "fridge": ("refrigerator",),
    "wardrobe": ("closet",),
    "hamper": ("laundry basket",),
    "nightstand": ("bedside table",),
    "washer": ("washing machine",),
    "dryer": ("tumble dryer",),
    "faucet": ("tap",),
    "counter": ("countertop",),
    "bookshelf": ("bookcase",),
    "overhead light": ("ceiling light",),
    "ceiling light": ("light",),
    "bedside lamp": ("reading lamp",),
    "smartphone": ("phone",),
    "cell phone": ("mobile",),
    "cordless phone": ("phone",),
    "remote control": ("remote",),
    "tv remote": ("remote",),
    "novel": ("book",),
    "pencil": ("pen",),
    "hoodie": ("sweatshirt",),
    "sweater": ("jumper",),
    "t-shirt": ("tee",),
    "jacket": ("coat",),
}
_SYNONYM_KEYS = tuple(sorted(SYNONYMS, key=lambda key: (-len(key), key)))

# Relation phrases a model may use instead of the predicate's template words.
PARAPHRASES: Mapping[str, tuple[str, ...]] = {
    "on": ("on", "on top of", "sitting on", "lying on"),
    "inside": ("in", "inside", "stored in"),
    "in_hand": ("held by", "in the hand of", "carried by"),
    "held": ("held by", "carried by"),
    "person_in": ("in", "located in", "at"),
    "in_room": ("in", "located in"),
    "appliance_in": ("in", "located in"),
    "faucet_at": ("at", "over"),
    "filled": ("filled with", "full of"),
    "connected": ("leads to", "next to"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Noise:
    """How a model's query graph departs from the truth; each field is a probability.

    A mention is a synonym (``synonym``) or a shortened label (``shorten``: the first word
    dropped, "blue mug" -> "mug"; a person's first name only) or else the label; a node's type
    is left out with ``drop_type``; an edge's relation is a paraphrase with ``paraphrase`` (else
    the template's words) and the edge is left out with ``drop_edge``.
    """

    synonym: float = 0.15
    shorten: float = 0.15
    drop_type: float = 0.5
    paraphrase: float = 0.5
    drop_edge: float = 0.15


DEFAULT_NOISE = Noise()


def synonym(label: str, rng: random.Random) -> str | None:
    """``label`` with its noun swapped for a synonym ("green mug" -> "green cup"), if one is known."""
    lower = label.lower()
    for key in _SYNONYM_KEYS:
        if lower == key or lower.endswith(" " + key):
            return label[: len(label) - len(key)] + rng.choice(SYNONYMS[key])
    return None


def shorten(entity: Entity) -> str | None:
    """A shorter way to say ``entity``: without its first word, or a person's first name."""
    words = entity.label.split()
    if len(words) < 2:
        return None
    return words[0] if entity.type == "person" else " ".join(words[1:])


def mention(entity: Entity, rng: random.Random, noise: Noise) -> str:
    """How a model refers to ``entity``: its label, sometimes a synonym or a shortened label."""
    roll = rng.random()
    if roll < noise.synonym:
        return synonym(entity.label, rng) or entity.label
    if roll < noise.synonym + noise.shorten:
        return shorten(entity) or entity.label
    return entity.label


def relation(predicate: str, templates: Mapping[str, str], rng: random.Random, noise: Noise) -> str:
    """A relation phrase for ``predicate``: its template's words, or a paraphrase."""
    if predicate in PARAPHRASES and rng.random() < noise.paraphrase:
        return rng.choice(PARAPHRASES[predicate])
    return relation_phrase(predicate, templates.get(predicate))


Link = tuple[str, str, str]  # (predicate, first, second)


def query_graph(
    names: Sequence[str],
    links: Iterable[Link],
    entities: Mapping[str, Entity],
    templates: Mapping[str, str],
    rng: random.Random,
    noise: Noise,
) -> QueryGraph | None:
    """A model's query graph for the entities ``names`` and the relations ``links`` among them.

    Node ids are ``n1, n2, ...`` (never the names); mentions are labels with noise. ``None``
    when no name is a known entity.
    """
    ids = {name: f"n{i}" for i, name in enumerate(dict.fromkeys(n for n in names if n in entities), start=1)}
    if not ids:
        return None
    nodes = tuple(_node(ids[n], entities[n], rng, noise) for n in ids)
    edges = []
    for predicate, first, second in sorted(set(links)):
        if first in ids and second in ids and first != second and rng.random() >= noise.drop_edge:
            edges.append(QueryEdge(ids[first], ids[second], relation(predicate, templates, rng, noise)))
    return QueryGraph(nodes, tuple(edges))


def _node(node_id: str, entity: Entity, rng: random.Random, noise: Noise) -> QueryNode:
    text = mention(entity, rng, noise)
    return QueryNode(node_id, text, None if rng.random() < noise.drop_type else entity.type)


def fact_links(facts: Iterable[Fact]) -> list[Link]:
    return [(f.predicate, f.args[0], f.args[1]) for f in facts if len(f.args) == 2]


def goal_links(goal: Formula) -> list[Link]:
    """Binary atoms of ``goal`` between two constants (negated or not)."""
    match goal:
        case Atom(predicate=predicate, terms=(first, second)) if "?" not in (first[:1], second[:1]):
            return [(predicate, first, second)]
        case Not(arg=arg) | Quantified(body=arg):
            return goal_links(arg)
        case And(args=args) | Or(args=args):
            return [link for a in args for link in goal_links(a)]
    return []


def type_query(goal: Formula) -> QueryGraph:
    """For a goal over all objects of a type ("every light"): one node per type."""
    types = sorted(goal_types(goal)) or ["object"]
    return QueryGraph(tuple(QueryNode(f"n{i}", f"{t}s", t) for i, t in enumerate(types, start=1)))


def known_entities(world: World, names: Iterable[str]) -> dict[str, Entity]:
    return {n: e for n in names if (e := world.entity(n)) is not None}


def event_query(event: Event, world: World, rng: random.Random, noise: Noise) -> QueryGraph | None:
    """A model's query graph for ``event``: its entities and the binary facts its delta changes."""
    facts = sorted(event.delta.remove | event.delta.add, key=lambda f: (f.predicate, f.args))
    templates = world.domain.language.predicates
    return query_graph(event.entities, fact_links(facts), known_entities(world, event.entities), templates, rng, noise)


def task_names(task: Task) -> tuple[str, ...]:
    """The entities a task concerns: its own, then the goal's constants."""
    return tuple(dict.fromkeys((*task.entities, *sorted(goal_objects(task.goal)))))


def task_query(task: Task, world: World, rng: random.Random, noise: Noise) -> QueryGraph:
    """A model's query graph for ``task``: its entities and the goal's binary atoms, else its types."""
    names = task_names(task)
    templates = world.domain.language.predicates
    query = query_graph(names, goal_links(task.goal), known_entities(world, names), templates, rng, noise)
    return query or type_query(task.goal)


__all__ = [
    "DEFAULT_NOISE",
    "PARAPHRASES",
    "SYNONYMS",
    "Link",
    "Noise",
    "event_query",
    "fact_links",
    "goal_links",
    "known_entities",
    "mention",
    "query_graph",
    "relation",
    "shorten",
    "synonym",
    "task_names",
    "task_query",
    "type_query",
]
