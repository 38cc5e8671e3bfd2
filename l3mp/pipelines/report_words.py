"""How a report's words speak of a reading: the domain's cue words, markers and negations, clause by clause.

A reading's words are those of the clauses that name its subject (and of the clauses right after
that refer back to it: "it", "them"), or of the whole report when those say nothing of it. Words for
the fact becoming true (``[cues]`` add) or stopping (remove) support the reading that way and drop
the other; a cue after "not" says the other way ("isn't dirty"). ``[markers]`` are the words that
introduce a two-place fact's second argument ("into the fridge": inside, not on).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kg_memory.domain import Domain
from l3mp.pipelines.candidates import Change
from l3mp.pipelines.mentions import words

MISSING_WORDS = -1.0  # a reading whose predicate has words, none of which the report uses

_CLAUSE_BREAK = re.compile(r"[.;,:!?]|\b(?:and|but|so|then|while|because)\b")
_BACK_REFERENCE = frozenset({"it", "them", "they"})
_STILL = ("still", "already", "as before", "same as before", "as it was", "nobody touched")


def clauses(report: str) -> list[list[str]]:
    """The report's clauses (split at punctuation and at "and", "but", "so"...), as words."""
    return [w for part in _CLAUSE_BREAK.split(report.lower()) if (w := words(part))]


def about(parts: Sequence[Sequence[str]], label: str) -> str:
    """The words said about the thing labelled ``label``: the clauses that name it (by its last word)
    and those right after that refer back to it; the whole report when none names it."""
    head = words(label)[-1:] or [""]
    picked: list[str] = []
    following = False
    for clause in parts:
        if head[0] in clause:
            picked.extend(clause)
            following = True
        elif following and _BACK_REFERENCE & set(clause):
            picked.extend(clause)
        else:
            following = False
    return " ".join(picked or [w for c in parts for w in c])


def marked(domain: Domain, report: str, change: Change, labels: Mapping[str, str]) -> int:
    """1 when one of the predicate's ``[markers]`` stands right before (within three words of) the
    last word of its second argument's name in the report, else 0."""
    markers = domain.language.markers.get(change.fact.predicate)
    if not markers or len(change.fact.args) < 2 or not change.becomes or change.already:
        return 0
    head = words(labels.get(change.fact.args[1], change.fact.args[1]))[-1:]
    tokens = re.findall(r"[a-z0-9]+", report.lower())
    for i, token in enumerate(tokens):
        if head and _singular(token) == head[0] and set(tokens[max(0, i - 4) : i]) & set(markers):
            return 1
    return 0


def _singular(word: str) -> str:
    return words(word)[0] if words(word) else word


@dataclass(frozen=True, slots=True)
class Said:
    """What the report's words say of a reading: ``value`` (None: the other way) and the cues used."""

    value: float | None
    cues: frozenset[str] = frozenset()


def words_say(domain: Domain, said: str, change: Change) -> Said:
    """+1 when the report's words say this way, None when they say the other way (the reading is
    dropped), a penalty when the predicate has words and the report uses none, else 0. Words for
    both ways: the way said more often; as often, the change (the other way is what holds now). A
    word after "not" says the other way ("isn't dirty"). A reading that changes nothing is supported
    only by words that say so ("still", "already")."""
    if change.already:
        return Said(1.0, frozenset(_STILL)) if _found(said, _STILL, ()) else Said(0.0)
    cues = domain.language.cues.get(change.fact.predicate)
    if cues is None:
        return Said(0.0)
    add, remove = _found(said, cues.add, cues.remove), _found(said, cues.remove, cues.add)
    becoming = [at for at, negated, _ in add if not negated] + [at for at, negated, _ in remove if negated]
    stopping = [at for at, negated, _ in remove if not negated] + [at for at, negated, _ in add if negated]
    if not becoming and not stopping:
        return Said(MISSING_WORDS)
    if len(becoming) != len(stopping) and (len(becoming) > len(stopping)) != change.becomes:
        return Said(None)
    # as often one way as the other ("Answer the phone, it's ringing"; "left the light on, so I switched
    # it off"): one way is said of the present, and the change is the other
    return Said(1.0, frozenset(cue for _, _, cue in add + remove))


_NEGATIONS = frozenset({"not", "isn", "aren", "wasn", "weren", "no", "never", "hasn", "haven", "didn", "don", "doesn"})


def _found(said: str, cues: Sequence[str], others: Sequence[str]) -> list[tuple[int, bool, str]]:
    """Where ``cues`` are said, whether after a negation, and which; a cue inside a longer one that
    is also said counts only as that one ("off" in "shut off"; "ringing" in "stopped ringing")."""
    mine = _spans(said, cues)
    every = set(mine) | set(_spans(said, others))
    found = []
    for (start, end), cue in sorted(mine.items()):
        if any(o != (start, end) and o[0] <= start and end <= o[1] for o in every):
            continue
        before = said[:start].split()[-2:]
        found.append((start, bool(_NEGATIONS & set(before)), cue))
    return found


def _spans(said: str, cues: Sequence[str]) -> dict[tuple[int, int], str]:
    spans: dict[tuple[int, int], str] = {}
    for cue in cues:
        phrase = " ".join(words(cue))
        if phrase:
            pattern = rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])"
            spans.update({(m.start(), m.end()): cue for m in re.finditer(pattern, said)})
    return spans


__all__ = ["MISSING_WORDS", "Said", "about", "clauses", "marked", "words_say"]
