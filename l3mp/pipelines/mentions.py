"""Resolving a request's mentions ("the mug", "Alice") against the memory's entities, lexically.

A mention matches an entity by the share of its words found in the entity's label, name and type,
and the last word (the head noun: "mug" in "the blue mug") must be among them. Several entities
within ``margin`` of the best make the mention ambiguous; a best score under ``threshold`` makes it
unknown. Both become machine-readable questions instead of a guess.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kg_memory.domain import Domain
from kg_memory.model import Entity
from l3mp.outcomes import Ambiguous, Question, Unrecognised

_STOP = frozenset(
    {"the", "a", "an", "my", "your", "his", "her", "their", "our", "its", "me", "some", "this", "that"}
    | {"these", "those", "please", "of", "to", "for", "with"}
)
_QUANTIFIERS = frozenset({"all", "every", "each", "any", "both", "everything"})
_GENERIC_TYPES = frozenset({"object", "item", "receptacle", "agent", "appliance"})


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def words(text: str) -> list[str]:
    return [_singular(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP]


def _entity_words(entity: Entity, domain: Domain) -> set[str]:
    found = set(words(entity.label)) | {w for w in words(entity.name.replace("_", " ")) if not w.isdigit()}
    return found | {t for t in domain.lineage(entity.type) if t not in _GENERIC_TYPES}


@dataclass(frozen=True, slots=True)
class Resolution:
    mention: str
    chosen: str | None  # the entity, when the mention is clear
    candidates: tuple[str, ...] = ()  # several almost equally good: ask which
    closest: tuple[str, ...] = ()  # none good enough: the nearest names

    @property
    def question(self) -> Question | None:
        if self.candidates:
            return Ambiguous(about=self.mention, candidates=self.candidates)
        if self.chosen is None:
            return Unrecognised(unknown=self.mention, closest=self.closest)
        return None


def resolve(
    mention: str,
    entities: Mapping[str, Entity],
    domain: Domain,
    *,
    threshold: float = 0.75,
    margin: float = 0.1,
    closest: int = 3,
) -> Resolution:
    """How ``mention`` maps onto ``entities`` (see the module)."""
    tokens = words(mention)
    if not tokens or tokens[0] in _QUANTIFIERS:
        return Resolution(mention, mention)  # "all the dishes" is about a type, not one entity
    exact = mention.strip().lower()
    if exact in entities:
        return Resolution(mention, exact)
    scores = {name: _score(tokens, _entity_words(e, domain)) for name, e in entities.items()}
    best = max(scores.values(), default=0.0)
    if best < threshold:
        return Resolution(mention, None, closest=_closest(mention, entities, scores, closest))
    near = sorted((n for n, s in scores.items() if s >= best - margin), key=lambda n: (-scores[n], n))
    if len(near) > 1:
        return Resolution(mention, None, candidates=tuple(near))
    return Resolution(mention, near[0])


def _score(tokens: Sequence[str], entity_words: set[str]) -> float:
    share = sum(1 for t in tokens if t in entity_words) / len(tokens)
    return share if tokens[-1] in entity_words else share / 2


def _closest(mention: str, entities: Mapping[str, Entity], scores: Mapping[str, float], n: int) -> tuple[str, ...]:
    """The ``n`` nearest entities: by word overlap, then by spelling of the label."""
    text = " ".join(words(mention))

    def key(name: str) -> tuple[float, float, str]:
        label = " ".join(words(entities[name].label or name))
        return (-scores[name], -difflib.SequenceMatcher(None, text, label).ratio(), name)

    return tuple(sorted(entities, key=key)[:n])


__all__ = ["Resolution", "resolve", "words"]
