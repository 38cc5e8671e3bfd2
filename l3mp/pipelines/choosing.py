"""Choosing what a report means among the readings the domain allows (:mod:`candidates`).

Each reading is judged by what the report itself shows: which of the things it names the reading
explains (a mention of "the upstairs kitchen table" is explained by a reading that puts something
on it, or takes something off it), and whether the report's words say this way or the other
(``[cues]`` in the domain's language: "off" for a light that stops being on; :mod:`report_words`).
Readings against the words are dropped. The best reading must explain two of the things named, or
one together with a word that says which way; when several are equally good, a :class:`Ranker` (the
model) orders them, and the best is taken only by a clear margin. Otherwise the answer is "not
sure", with the readings it could not tell apart. A report that names several changes ("closed the
fridge and switched off the light") gets one reading per change, each judged on what the others left
unexplained.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from kg_memory.domain import Domain
from kg_memory.model import Delta, Entity
from l3mp.llm.base import Deadline, Usage
from l3mp.pipelines.candidates import Change
from l3mp.pipelines.linking import Link
from l3mp.pipelines.report_words import MISSING_WORDS, about, clauses, marked, words_say

MAX_CHANGES = 3  # readings taken from one report
MIN_SUPPORT = 2  # things explained, plus one for a word that says which way
_MARKED = 0.5  # the word that introduces its object is the predicate's own ("into the fridge")
_NEAR = 3  # facts between two things in one room (the towel on the bed in the room of the hamper)
_CLEARLY_NEARER = 2
MAX_TIED_FOR_RANKER = 3  # more readings alike than this is a reference to ask about, not a nuance


class Verdict(enum.StrEnum):
    CHANGE = "change"  # one or more readings that change the memory
    NO_CHANGE = "no_change"  # the report says what the memory already holds
    NOT_SURE = "not_sure"  # no reading stands out: ask, do not guess


@dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    """A reading and what the report shows for it."""

    change: Change
    explains: frozenset[str]  # the mentions (by their first entity) its own fact explains
    words_say: float  # +1 the report's words say this way, less when its predicate's words are all missing
    recalls: frozenset[str] = frozenset()  # mentions only the facts it retires explain ("from the desk")
    guessed: int = 0  # arguments the report did not name (a constant filled in)
    cues: frozenset[str] = frozenset()  # the report's words that say its way
    model: float | None = None  # the ranker's score, when it was asked

    @property
    def support(self) -> float:
        return len(self.explains) + 0.5 * len(self.recalls - self.explains) + self.words_say - self.guessed


@dataclass(frozen=True, slots=True, kw_only=True)
class Ranking:
    """The ranker's scores for some readings (higher is likelier) and what they cost."""

    scores: tuple[float, ...]
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0


@runtime_checkable
class Ranker(Protocol):
    """Orders readings a report leaves equally supported; ``margin`` is what counts as clear."""

    margin: float

    def rank(self, *, report: str, readings: Sequence[str], deadline: Deadline) -> Ranking: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    verdict: Verdict
    chosen: tuple[Judged, ...] = ()
    undecided: tuple[Judged, ...] = ()  # the readings it could not tell apart (NOT_SURE)
    reason: str = ""
    rankings: tuple[Ranking, ...] = ()

    @property
    def delta(self) -> Delta:
        removed = frozenset(f for j in self.chosen for f in j.change.delta.remove)
        added = frozenset(f for j in self.chosen for f in j.change.delta.add)
        return Delta(remove=removed, add=added)

    @property
    def usage(self) -> Usage:
        return sum((r.usage for r in self.rankings), Usage())


@dataclass(frozen=True, slots=True, kw_only=True)
class Mentions:
    """The report's mentions: each a group of linked entities it could be (one, or several alike)."""

    groups: Mapping[str, frozenset[str]]  # mention id → the entities it could be

    @classmethod
    def of(cls, links: Sequence[Link]) -> Mentions:
        grouped: dict[str, set[str]] = {}
        for found in links:
            if found.part_of is None:
                grouped.setdefault(found.head, set()).add(found.entity)
        return cls(groups={min(names): frozenset(names) for names in grouped.values()})

    def explained_by(self, names: frozenset[str]) -> frozenset[str]:
        return frozenset(m for m, group in self.groups.items() if group & names)

    @property
    def named(self) -> frozenset[str]:
        return frozenset(n for group in self.groups.values() for n in group)


def judge(
    domain: Domain,
    report: str,
    changes: Sequence[Change],
    mentions: Mentions,
    *,
    labels: Mapping[str, str],
) -> tuple[Judged, ...]:
    """Every reading the report's words do not contradict, with what supports it."""
    heard = clauses(report)
    judged = []
    for change in changes:
        said = about(heard, labels.get(change.fact.args[0], change.fact.args[0]))
        way = words_say(domain, said, change)
        if way.value == MISSING_WORDS:  # nothing said in its own clauses: what the whole report says
            way = words_say(domain, " ".join(w for c in heard for w in c), change)
        if way.value is None:
            continue
        own = frozenset(change.fact.args)
        retired = frozenset(a for f in change.retired for a in f.args)
        judged.append(
            Judged(
                change=change,
                explains=mentions.explained_by(own),
                words_say=way.value + _MARKED * marked(domain, report, change, labels),
                cues=way.cues,
                recalls=mentions.explained_by(retired),
                guessed=len(own - mentions.named),
            )
        )
    return tuple(judged)


def choose(
    domain: Domain,
    report: str,
    judged: Sequence[Judged],
    *,
    labels: Mapping[str, str],
    ranker: Ranker | None,
    deadline: Deadline,
    distance: Callable[[Change], int | None] | None = None,
) -> Choice:
    """The readings the report means (see the module)."""
    chosen: list[Judged] = []
    rankings: list[Ranking] = []
    left = list(judged)
    while len(chosen) < MAX_CHANGES:
        explained = frozenset(m for j in chosen for m in j.explains | j.recalls)
        fresh = [_minus(j, explained, chosen) for j in left if _fits_with(j, chosen)]
        fresh = [j for j in fresh if _acceptable(j)]
        if not fresh:
            break
        top = max(j.support for j in fresh)
        tied = [j for j in fresh if j.support == top]
        if any(not j.change.already for j in tied):
            tied = [j for j in tied if not j.change.already]  # a report is news before it is a confirmation
        if len(tied) > 1 and _apart(tied):
            chosen.extend(tied)  # "the bedside lamp and the overhead light": each its own change
            left = [j for j in left if j not in tied and j.change not in {t.change for t in tied}]
            continue
        if len(tied) > 1 and distance is not None:
            tied = _nearest(tied, distance)
        if len(tied) > MAX_TIED_FOR_RANKER:
            if chosen:
                break
            return Choice(verdict=Verdict.NOT_SURE, undecided=tuple(tied), reason=_unsure(domain, tied, labels))
        if len(tied) > 1:
            picked, ranking = _break_tie(domain, report, tied, labels=labels, ranker=ranker, deadline=deadline)
            if ranking is not None:
                rankings.append(ranking)
            if picked is None:
                if chosen:
                    break  # what was clear stays; the rest is left unsaid
                return Choice(
                    verdict=Verdict.NOT_SURE,
                    undecided=tuple(tied),
                    reason=_unsure(domain, tied, labels),
                    rankings=tuple(rankings),
                )
            tied = [picked]
        chosen.append(tied[0])
        left = [j for j in left if j.change != tied[0].change]
    if not chosen:
        return _when_words_fail(domain, report, judged, labels=labels, ranker=ranker, deadline=deadline)
    if all(j.change.already for j in chosen):
        return Choice(verdict=Verdict.NO_CHANGE, chosen=tuple(chosen), rankings=tuple(rankings))
    changing = [j for j in chosen if not j.change.already]
    changing.extend(_beside(judged, changing))
    return Choice(verdict=Verdict.CHANGE, chosen=tuple(changing), rankings=tuple(rankings))


NOTHING_CHANGED = "none of these: nothing here changed"
MAX_ASKED = 4  # readings shown to the model when the words name no change


def _when_words_fail(
    domain: Domain,
    report: str,
    judged: Sequence[Judged],
    *,
    labels: Mapping[str, str],
    ranker: Ranker | None,
    deadline: Deadline,
) -> Choice:
    """No reading has the words' support ("Anna wandered off to the office"): the model may pick one
    of the changes that explain the most of what the report names, or none of them, by a clear margin."""
    unsure = Choice(verdict=Verdict.NOT_SURE, reason="the report names no change clearly enough")
    changes = [j for j in judged if not j.change.already and j.explains and j.guessed == 0]
    if ranker is None or not changes:
        return unsure
    most = max(len(j.explains) for j in changes)
    asked = sorted((j for j in changes if len(j.explains) == most), key=lambda j: -j.support)
    if most < MIN_SUPPORT or len(asked) > MAX_ASKED:
        return unsure
    texts = [j.change.english(domain, labels) for j in asked] + [NOTHING_CHANGED]
    ranking = ranker.rank(report=report, readings=texts, deadline=deadline)
    order = sorted(range(len(texts)), key=lambda i: -ranking.scores[i])
    if order[0] == len(asked) or ranking.scores[order[0]] - ranking.scores[order[1]] < ranker.margin:
        return replace(unsure, undecided=tuple(asked), rankings=(ranking,))
    picked = replace(asked[order[0]], model=ranking.scores[order[0]])
    return Choice(verdict=Verdict.CHANGE, chosen=(picked,), rankings=(ranking,))


def _nearest(tied: Sequence[Judged], distance: Callable[[Change], int | None]) -> list[Judged]:
    """Of readings that put one thing in alternative places, the one place clearly nearest it in the
    home ("the hamper" for a towel on the east bedroom's bed is that bedroom's), else all of them."""
    if len({j.change.fact.args[:-1] for j in tied}) > 1 or len({j.change.fact.predicate for j in tied}) > 1:
        return list(tied)  # which thing is meant, not where it went: nearness says nothing of that
    measured = [(d, j) for j in tied if (d := distance(j.change)) is not None]
    if len(measured) < len(tied):
        return list(tied)
    measured.sort(key=lambda pair: pair[0])
    best, second = measured[0][0], measured[1][0]
    if best <= _NEAR and second - best >= _CLEARLY_NEARER:
        return [measured[0][1]]
    return list(tied)


def _acceptable(judged: Judged) -> bool:
    """Enough support, and, for a reading that changes nothing, words that say so."""
    if not judged.explains or judged.support < MIN_SUPPORT:
        return False
    return not judged.change.already or judged.words_say > 0


def _apart(tied: Sequence[Judged]) -> bool:
    """Changes of different subjects that do not overlap, each explaining something no other does
    ("came into the hallway and was handed the album")."""
    for i, one in enumerate(tied):
        others = [t for t in tied if t is not one]
        if one.change.already or not one.explains - frozenset(m for t in others for m in t.explains):
            return False
        if not _fits_with(one, tied[i + 1 :]):
            return False
    return True


def _beside(judged: Sequence[Judged], chosen: Sequence[Judged]) -> list[Judged]:
    """More changes of a chosen subject that the report's own words name ("empty and dirty now"):
    a fact that simply starts or stops, of another predicate, touching none of the chosen facts."""
    taken = {(j.change.fact.args[0], j.change.fact.predicate) for j in chosen}
    subjects = {subject for subject, _ in taken}
    extra: list[Judged] = []
    for candidate in judged:
        change = candidate.change
        if change.already or change.retired or candidate.words_say < 1 or change.fact.args[0] not in subjects:
            continue
        if (change.fact.args[0], change.fact.predicate) in taken:
            continue
        facts = change.delta.remove | change.delta.add
        if any(facts & (j.change.delta.remove | j.change.delta.add) for j in [*chosen, *extra]):
            continue
        extra.append(candidate)
        taken.add((change.fact.args[0], change.fact.predicate))
    return extra


def _minus(judged: Judged, explained: frozenset[str], chosen: Sequence[Judged]) -> Judged:
    """``judged`` for what is left to explain: the mentions and the words a chosen reading of the
    same predicate has used do not support it again ("Ben's gone to the TV room with James")."""
    used = frozenset(c for j in chosen if j.change.fact.predicate == judged.change.fact.predicate for c in j.cues)
    words_say = judged.words_say
    if judged.cues and judged.cues <= used:
        words_say = min(words_say, 0.0)
    return Judged(
        change=judged.change,
        explains=judged.explains - explained,
        words_say=words_say,
        recalls=judged.recalls - explained,
        guessed=judged.guessed,
        cues=judged.cues,
    )


def _fits_with(candidate: Judged, chosen: Sequence[Judged]) -> bool:
    """A further reading is of another subject or another predicate, and touches none of the facts of
    one taken (two places for one item retire the same old place, and so do not fit)."""
    mine = candidate.change.delta
    for taken in chosen:
        same_subject = candidate.change.fact.args[:1] == taken.change.fact.args[:1]
        if same_subject and candidate.change.fact.predicate == taken.change.fact.predicate:
            return False
        theirs = taken.change.delta
        if (mine.remove | mine.add) & (theirs.remove | theirs.add):
            return False
    return True


def _break_tie(
    domain: Domain,
    report: str,
    tied: Sequence[Judged],
    *,
    labels: Mapping[str, str],
    ranker: Ranker | None,
    deadline: Deadline,
) -> tuple[Judged | None, Ranking | None]:
    if ranker is None:
        return None, None
    texts = [j.change.english(domain, labels) for j in tied]
    ranking = ranker.rank(report=report, readings=texts, deadline=deadline)
    order = sorted(range(len(tied)), key=lambda i: -ranking.scores[i])
    best, second = ranking.scores[order[0]], ranking.scores[order[1]]
    if best - second < ranker.margin:
        return None, ranking
    winner = tied[order[0]]
    scored = replace(winner, model=ranking.scores[order[0]])
    return scored, ranking


def _unsure(domain: Domain, tied: Sequence[Judged], labels: Mapping[str, str]) -> str:
    shown = sorted({j.change.english(domain, labels) for j in tied})
    listed = "; ".join(f'"{s}"' for s in shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")
    return f"not sure which is meant: {listed}"


def labels_of(entities: Mapping[str, Entity]) -> dict[str, str]:
    """What to call each entity in English: ``the purple mug``; a capitalised label is a name."""
    named: dict[str, str] = {}
    for name, entity in entities.items():
        label = entity.label or name.replace("_", " ")
        named[name] = label if label[:1].isupper() else f"the {label}"  # a name, or a thing
    return named


__all__ = ["Choice", "Judged", "Mentions", "Ranker", "Ranking", "Verdict", "choose", "judge", "labels_of"]
