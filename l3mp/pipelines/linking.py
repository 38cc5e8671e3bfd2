"""Which entities a sentence speaks of, found by their labels (no model needed).

An entity is linked when the head of its label (the last word: "lamp" in "west bedroom bedside
lamp") or its type appears in the sentence; its strength is the share of its label's words that
appear. Among entities named by the same word, those matching the most of the sentence's words win
(all of them on a tie: the state or the model may still tell them apart, or the pipeline asks which
one). A label said whole, as one phrase ("guest living room"), owns its words: another entity
whose words lie scattered over the sentence does not match with them ("guest" for the guest
bathroom), unless the phrase is part of its own label ("the side table in the upstairs hallway").
A name said only inside a longer one ("upstairs kitchen" in "upstairs kitchen table") is marked
``part_of`` it. Words follow :func:`l3mp.pipelines.mentions.words`: lower case, without articles,
plural ``s`` dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from kg_memory.domain import Domain
from kg_memory.model import Entity
from l3mp.pipelines.mentions import words

_GENERIC_TYPES = frozenset({"object", "item", "receptacle", "agent", "appliance", "room"})
_TYPE_STRENGTH = 0.5  # named by its type only ("the phone" for the brown cell phone): a weaker link


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """An entity the sentence names, how strongly (the share of its label's words), and by which words."""

    entity: str
    strength: float
    head: str  # the group it competes in: its label's last word, or its type
    matched: frozenset[str]
    label: tuple[str, ...] = ()
    phrases: tuple[tuple[int, int], ...] = ()  # where the whole label is said, word positions [start, end)
    part_of: str | None = None  # said only inside a longer name ("upstairs kitchen" in "upstairs kitchen table")

    @property
    def whole(self) -> bool:
        return bool(self.phrases)


def label_words(entity: Entity) -> list[str]:
    return words(entity.label or entity.name.replace("_", " "))


def link(sentence: str, entities: Mapping[str, Entity], domain: Domain) -> tuple[Link, ...]:
    """The entities ``sentence`` names, strongest first (see the module)."""
    tokens = tuple(words(sentence))
    said = set(tokens) - _only_indefinite(sentence)
    found = [k for name, e in entities.items() if (k := _link_one(name, e, tokens, said, domain)) is not None]
    phrases = [k for k in found if k.whole and len(k.label) > 1]
    found = [k if k.whole else _without_borrowed(k, phrases, tokens) for k in found]
    best: dict[str, int] = {}
    for found_link in found:
        best[found_link.head] = max(best.get(found_link.head, 0), len(found_link.matched))
    kept = [k for k in found if k.matched and len(k.matched) >= best[k.head]]
    kept = [_with_whole(k, kept, tokens) for k in kept]
    return tuple(sorted(kept, key=lambda k: (-k.strength, k.entity)))


_INDEFINITE = frozenset({"a", "an", "another"})  # not "some": "some juice" is the juice


def _only_indefinite(sentence: str) -> set[str]:
    """Words said only after "a" ("to look for a saucepan"): a kind, not one of the home's things."""
    raw = re.findall(r"[a-z0-9]+", sentence.lower())
    indefinite: set[str] = set()
    definite: set[str] = set()
    for i, word in enumerate(raw):
        (indefinite if _INDEFINITE & set(raw[max(0, i - 2) : i]) else definite).update(words(word))
    return indefinite - definite


def _link_one(name: str, entity: Entity, tokens: Sequence[str], said: set[str], domain: Domain) -> Link | None:
    label = tuple(label_words(entity))
    if not label:
        return None
    if label[-1] in said:
        matched = frozenset(w for w in label if w in said)
        return Link(
            entity=name,
            strength=len(matched) / len(set(label)),
            head=label[-1],
            matched=matched,
            label=label,
            phrases=_occurrences(label, tokens),
        )
    types = [t for t in domain.lineage(entity.type) if t not in _GENERIC_TYPES]
    named = [t for t in types if set(words(t.replace("_", " "))) <= said]
    if not named:
        return None
    type_words = frozenset(words(named[0].replace("_", " ")))
    matched = frozenset(w for w in label if w in said) | type_words
    strength = _TYPE_STRENGTH * len(matched) / len(set(label) | type_words)
    return Link(entity=name, strength=strength, head=sorted(type_words)[-1], matched=matched, label=label)


def _occurrences(phrase: Sequence[str], tokens: Sequence[str]) -> tuple[tuple[int, int], ...]:
    n = len(phrase)
    return tuple((i, i + n) for i in range(len(tokens) - n + 1) if tuple(tokens[i : i + n]) == tuple(phrase))


def _inside(part: Sequence[str], whole: Sequence[str]) -> bool:
    return bool(_occurrences(part, whole))


def _without_borrowed(found: Link, phrases: Sequence[Link], tokens: Sequence[str]) -> Link:
    """``found`` without the words it can only have taken from another entity's phrase."""
    owned = {
        i
        for p in phrases
        if p.entity != found.entity and not _inside(p.label, found.label)
        for start, end in p.phrases
        for i in range(start, end)
    }
    if not owned:
        return found
    free = {w for i, w in enumerate(tokens) if i not in owned}
    matched = frozenset(w for w in found.matched if w in free or w == found.head)
    if matched == found.matched:
        return found
    share = found.strength * len(matched) / len(found.matched)
    return replace(found, matched=matched, strength=share)


def _with_whole(part: Link, links: Sequence[Link], tokens: Sequence[str]) -> Link:
    """``part`` marked as said only within a longer name: every place it is said lies inside a run of
    another entity's words longer than it ("coffee" in "the coffee table", "upstairs kitchen" in "the
    upstairs kitchen table")."""
    if not part.whole:
        return part
    for whole in links:
        if whole.entity == part.entity or len(whole.label) <= len(part.label):
            continue
        runs = [r for r in _runs(whole.matched, tokens) if r[1] - r[0] > len(part.label)]
        if runs and all(any(rs <= s and e <= re_ for rs, re_ in runs) for s, e in part.phrases):
            return replace(part, part_of=whole.entity)
    return part


def _runs(matched: frozenset[str], tokens: Sequence[str]) -> list[tuple[int, int]]:
    """The stretches of the sentence made only of ``matched`` words, as [start, end) positions."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i, token in enumerate((*tokens, "")):
        if token in matched and start is None:
            start = i
        elif token not in matched and start is not None:
            runs.append((start, i))
            start = None
    return runs


def strongest(links: Sequence[Link]) -> dict[str, Link]:
    """The links by entity name."""
    return {k.entity: k for k in links}


__all__ = ["Link", "label_words", "link", "strongest"]
