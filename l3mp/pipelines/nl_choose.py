"""Natural-language updates and goals for small models: choose among the changes the domain allows.

The entities a report names are found by their labels (:mod:`linking`); every change the domain's
types and rules allow over them is built from the state (:mod:`candidates`); the report's own words
and a model that ranks readings pick the ones it means (:mod:`choosing`). The delta is verified and
applied as any other; a report that names no change clearly is recorded as rejected with the readings
it could not tell apart, and nothing is guessed. The model never writes a fact. A task request is read
the same way: the readings it means are what the robot should make true (:func:`choose_goal`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kg_memory.domain import Domain
from kg_memory.memory import WorldMemory
from kg_memory.model import Entity, Fact, Issue, IssueCode, Update, UpdateSource
from l3mp.llm.base import Deadline, DeadlinePassed, ModelUnavailable, Usage
from l3mp.llm.scoring import ScoringUnsupported
from l3mp.pipelines.candidates import Change, candidate_changes
from l3mp.pipelines.choosing import Choice, Mentions, Ranker, Verdict, choose, judge, labels_of
from l3mp.pipelines.linking import link


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalChoice:
    """The goal a request means, as literals (``(on mug_1 table_2)``, ``(not (open fridge_1))``), or
    none with the reason; the choice behind it."""

    literals: tuple[str, ...]
    choice: Choice
    reason: str = ""

    @property
    def goal(self) -> str | None:
        if not self.literals:
            return None
        return self.literals[0] if len(self.literals) == 1 else f"(and {' '.join(self.literals)})"


def read_choice(memory: WorldMemory, text: str, *, ranker: Ranker | None, deadline: Deadline) -> Choice:
    """The readings of ``text`` over ``memory``'s entities and state (see the module)."""
    domain = memory.domain
    entities = _with_constants(memory.entities(), domain.constant_entities())
    labels = labels_of(entities)
    links = link(text, entities, domain)
    named = [k.entity for k in links if k.part_of is None]
    facts = memory.facts()
    changes = candidate_changes(domain, facts, entities, named)
    judged = judge(domain, text, changes, Mentions.of(links), labels=labels)
    near = FactDistance((f for f in facts if f.predicate not in _between_peers(domain)), frozenset(named))
    return choose(domain, text, judged, labels=labels, ranker=ranker, deadline=deadline, distance=near.between)


def _between_peers(domain: Domain) -> frozenset[str]:
    """Predicates between things of one type (rooms connected to rooms): being next door is not being
    in the same place, so nearness does not go through them."""
    return frozenset(
        name
        for name, schema in domain.predicates.items()
        if len(schema.parameters) == 2 and schema.parameters[0].type == schema.parameters[1].type
    )


class FactDistance:
    """How many facts apart two things are in the state (the towel on the bed, the bed in the room,
    the room holding the hamper: three), searched from the things a report names, a few facts deep."""

    DEPTH = 4

    def __init__(self, facts: Iterable[Fact], sources: frozenset[str]) -> None:
        self._links: dict[str, set[str]] = {}
        for fact in facts:
            for a in fact.args:
                self._links.setdefault(a, set()).update(b for b in fact.args if b != a)
        self._sources = sources
        self._found: dict[str, dict[str, int]] = {}

    def between(self, change: Change) -> int | None:
        """Facts between a reading's first and last thing, not counting the reading's own fact."""
        args = change.fact.args
        if len(args) < 2:
            return None
        return self._reach(args[0]).get(args[-1], self.DEPTH + 2)  # not reached: far

    def _reach(self, start: str) -> dict[str, int]:
        if start not in self._found:
            seen = {start: 0}
            frontier = [start]
            for depth in range(1, self.DEPTH + 2):
                frontier = [n for f in frontier for n in self._links.get(f, ()) if n not in seen]
                for n in frontier:
                    seen.setdefault(n, depth)
            self._found[start] = seen
        return self._found[start]


def choose_goal(memory: WorldMemory, request: str, *, ranker: Ranker | None, deadline: Deadline) -> GoalChoice:
    """What the robot should make true for ``request``: the chosen readings' facts (a reading that
    already holds stays in the goal, so the plan says so)."""
    choice = read_choice(memory, request, ranker=ranker, deadline=deadline)
    if choice.verdict is Verdict.NOT_SURE:
        return GoalChoice(literals=(), choice=choice, reason=choice.reason or "no goal stands out")
    literals = []
    for judged in choice.chosen:
        fact = judged.change.fact
        literals.append(str(fact) if judged.change.becomes else f"(not {fact})")
    return GoalChoice(literals=tuple(literals), choice=choice)


class ChoosingReader:
    """Reads one report into a recorded update (see the module); ``ranker`` None is words alone."""

    def __init__(self, memory: WorldMemory, ranker: Ranker | None, *, verify: bool = True, attempts: int = 3) -> None:
        self.memory = memory
        self.ranker = ranker
        self.verify = verify
        self.attempts = attempts

    def read(self, text: str, *, deadline: Deadline) -> tuple[Update, Choice | None, Usage]:
        start = time.perf_counter()
        unranked = ""
        try:
            try:
                choice = read_choice(self.memory, text, ranker=self.ranker, deadline=deadline)
            except ScoringUnsupported as exc:  # the words and the state still read what they can
                unranked = str(exc)
                choice = read_choice(self.memory, text, ranker=None, deadline=deadline)
        except (DeadlinePassed, ModelUnavailable) as exc:
            if isinstance(exc, ModelUnavailable) and not exc.timed_out:
                raise
            issue = Issue(IssueCode.DEADLINE, None, f"{exc}: say it again, or more simply")
            meta = self._meta(None, start=start)
            return self.memory.reject(source=UpdateSource.NL, input=text, issues=[issue], meta=meta), None, Usage()
        meta = self._meta(choice, start=start)
        if unranked:
            meta["choice"]["ranker_unavailable"] = unranked
        return self._record(text, choice, meta), choice, choice.usage

    def _record(self, text: str, choice: Choice, meta: dict[str, Any]) -> Update:
        if choice.verdict is Verdict.NOT_SURE:
            issue = Issue(IssueCode.NOT_SURE, None, f"{choice.reason}: say which, or say it another way")
            return self.memory.reject(source=UpdateSource.NL, input=text, issues=[issue], meta=meta)
        outcome = self.memory.try_apply(
            choice.delta,
            source=UpdateSource.NL,
            input=text,
            meta=meta,
            attempts=self.attempts,
            verify=self.verify,
        )
        if isinstance(outcome, Update):
            return outcome
        return self.memory.reject(
            source=UpdateSource.NL, input=text, issues=outcome.issues, delta=choice.delta, meta=meta
        )

    def _meta(self, choice: Choice | None, *, start: float) -> dict[str, Any]:
        usage = choice.usage if choice is not None else Usage()
        model_seconds = sum(r.seconds for r in choice.rankings) if choice is not None else 0.0
        meta: dict[str, Any] = {
            "pipeline": "nl",
            "reader": "choose",
            "verified": self.verify,
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
            "timings": {"total": round(time.perf_counter() - start, 6), "model": round(model_seconds, 6)},
        }
        if choice is not None:
            meta["choice"] = {
                "verdict": str(choice.verdict),
                "chosen": [str(j.change) for j in choice.chosen],
                "undecided": [str(j.change) for j in choice.undecided],
                "ranked": len(choice.rankings),
            }
        return meta


def _with_constants(entities: Mapping[str, Entity], constants: tuple[Entity, ...]) -> dict[str, Entity]:
    """The memory's entities and the domain's constants ("water", "robot_1"), which can be named too."""
    return {**{c.name: c for c in constants}, **entities}


__all__ = ["ChoosingReader", "GoalChoice", "choose_goal", "read_choice"]
