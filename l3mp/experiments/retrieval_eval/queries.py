"""The query graphs a language model would write: derived from the truth, with its noise."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from kg_memory import Entity, Fact
from kg_memory.formula import And, Atom, Formula, Not, Or, Quantified
from retrieval import (
    QueryEdge,
    QueryGraph,
    QueryNode,
    relation_phrase,
)

DOMAIN = "household"
RETRIEVER_NAMES = ("full", "entities", "search")
PLACES = ("on", "inside", "in_hand", "held")  # where an item is
HOLDER_PLACES = ("in_room", "person_in")  # where what holds it is
StepKind = Literal["event", "task"]

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


@dataclass(frozen=True, slots=True)
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
