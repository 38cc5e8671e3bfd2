"""A simulated language model for the household simulator: the ground truth, with injected errors.

The simulator briefs it on each utterance (:meth:`SimulatedModel.brief_event`) and task
(:meth:`SimulatedModel.brief_task`); it answers the project's prompts from that truth, looked up by
the request text of the first user message. Like a real model it reads only the prompt: a removal
the context does not show is left out and an entity it does not list gets a name guessed from its
label (recorded as ``context_miss``; the retriever's fault, so they happen at any error rate). With
probability ``ErrorRates.rate`` an answer carries one injected error; a re-prompt is answered
error-free with probability ``correct_on_reprompt``. Every departure from the truth is recorded in
:attr:`SimulatedModel.injected`, and every completion is labelled as simulated.

Each answer draws from ``random.Random(f"{seed}|{prompt}|{text}|{attempt}")``: two pipelines over
the same utterances (verified and not) meet the same errors at the same steps, in any process.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from kg_memory.formula import Formula
from kg_memory.model import Fact
from l3mp.llm import Completion, LLMError, MalformedOutput, Message, Usage, parse_json
from l3mp.prompts import entity_selection, goal, query_graph, state_change
from planning.world import World
from retrieval.context import count_tokens
from sim.events import Event
from sim.model._errors import (
    ERROR_KINDS,
    Applier,
    Departure,
    Situation,
    draw_error,
    edit_appliers,
    malformed,
    visible_edits,
)
from sim.model._goal import GOAL_ERROR_KINDS, goal_appliers
from sim.model._prompt import NoGroundTruth, PromptView, collapse, read_prompt
from sim.model.queries import DEFAULT_NOISE, Noise, event_query, task_names, task_query
from sim.tasks import Task

Truth = Event | Task
T = TypeVar("T", Event, Task)
A = TypeVar("A")
Answer = tuple[str, list[Departure]]  # the reply text, and how it departs from the truth


class InvalidErrorRates(LLMError):
    """An :class:`ErrorRates` field out of range or of the wrong kind; carries the value."""

    def __init__(self, name: str, value: object, problem: str) -> None:
        self.name = name
        self.value = value
        super().__init__(f"invalid error rates: {name}={value!r}: {problem}")


def _probability(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise InvalidErrorRates(name, value, "must be a probability in [0, 1]")
    return float(value)


@dataclass(frozen=True, slots=True)
class ErrorRates:
    """How often and how the simulated model errs.

    ``rate`` is the probability that an answer carries one injected error, of a kind drawn by the
    relative weights ``kinds`` (all of :data:`ERROR_KINDS`, equally, by default; a kind left out is
    never drawn). A re-prompted answer is error-free with probability ``correct_on_reprompt``, else
    carries a fresh error; at ``rate == 0`` the model never errs, re-prompted or not. ``noise`` is
    the query-graph noise.
    """

    rate: float = 0.2
    kinds: Mapping[str, float] = field(default_factory=lambda: dict.fromkeys(ERROR_KINDS, 1.0), hash=False)
    correct_on_reprompt: float = 0.75
    noise: Noise = DEFAULT_NOISE

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate", _probability("rate", self.rate))
        object.__setattr__(self, "correct_on_reprompt", _probability("correct_on_reprompt", self.correct_on_reprompt))
        if not isinstance(self.kinds, Mapping) or not self.kinds:
            raise InvalidErrorRates("kinds", self.kinds, f"must map some of {', '.join(ERROR_KINDS)} to weights")
        for kind, weight in self.kinds.items():
            if kind not in ERROR_KINDS:
                raise InvalidErrorRates("kinds", kind, f"unknown error kind; known: {', '.join(ERROR_KINDS)}")
            if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 < weight < math.inf:
                raise InvalidErrorRates(f"kinds[{kind!r}]", weight, "a weight must be a positive number")
        ordered = {k: float(self.kinds[k]) for k in ERROR_KINDS if k in self.kinds}
        object.__setattr__(self, "kinds", MappingProxyType(ordered))
        if not isinstance(self.noise, Noise):
            raise InvalidErrorRates("noise", self.noise, "must be a sim.model.queries.Noise")


DEFAULT_RATES = ErrorRates()


@dataclass(frozen=True, slots=True, kw_only=True)
class InjectedError:
    """One departure of an answer from the truth: an injected error, or a ``context_miss``."""

    prompt: str  # the prompt's name
    text: str  # the utterance or task it answered
    attempt: int  # 0 for the first answer, 1.. for re-prompts
    kind: str  # one of ERROR_KINDS, or "context_miss"
    dropped: tuple[Fact, ...]  # true facts the answer leaves out
    inserted: tuple[Fact, ...]  # wrong facts the answer puts in (in remove or add)
    detail: str


class SimulatedModel:
    """A :class:`~l3mp.llm.LanguageModel` answering from the simulator's ground truth (see the module)."""

    model = "simulated"
    simulated = True

    def __init__(self, world: World, rates: ErrorRates = DEFAULT_RATES, *, seed: int = 0) -> None:
        if not isinstance(rates, ErrorRates):
            raise InvalidErrorRates("rates", rates, "must be an ErrorRates")
        self.world = world  # read at every answer: the simulator mutates it
        self.rates = rates
        self.seed = seed
        self.injected: list[InjectedError] = []
        self._truth: dict[str, Truth] = {}
        self._answers: dict[str, Callable[[PromptView, Truth, random.Random], Answer]] = {
            state_change.NAME: self._state_change,
            query_graph.NAME: self._query_graph,
            entity_selection.NAME: self._entity_selection,
            goal.NAME: self._goal,
        }

    @property
    def label(self) -> str:
        return f"simulated (ground truth, {self.rates.rate:.0%} injected errors)"

    def brief_event(self, event: Event) -> None:
        """The truth behind an utterance; a later briefing with the same text replaces it."""
        self._truth[collapse(event.text)] = event

    def brief_task(self, task: Task) -> None:
        """The truth behind a task's request; a later briefing with the same text replaces it."""
        self._truth[collapse(task.text)] = task

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        """Answer one of the project's prompts, chosen by ``name``; raises NoGroundTruth for anything
        it was not briefed on and MalformedOutput for an injected malformed reply (given a schema)."""
        answer = self._answers.get(name)
        if answer is None:
            raise NoGroundTruth(name, None, f"unknown prompt; it answers {', '.join(sorted(self._answers))}")
        view = read_prompt(messages, name)
        truth = self._truth.get(view.text)
        if truth is None:
            raise NoGroundTruth(name, view.text, "no event or task with this text was briefed")
        rng = random.Random(f"{self.seed}|{name}|{view.text}|{view.attempt}")
        text, departures = answer(view, truth, rng)
        self.injected.extend(
            InjectedError(
                prompt=name,
                text=view.text,
                attempt=view.attempt,
                kind=d.kind,
                dropped=d.dropped,
                inserted=d.inserted,
                detail=d.detail,
            )
            for d in departures
        )
        usage = Usage(sum(count_tokens(m.content) for m in messages), count_tokens(text))
        try:
            data = parse_json(text, schema) if schema is not None else None
        except MalformedOutput as exc:  # an unparseable reply spent its tokens too
            raise MalformedOutput(exc.text, exc.problem, usage, self.label) from None
        return Completion(text=text, data=data, usage=usage, model=self.label)

    # -- answers ---------------------------------------------------------------------------------------

    def _errs(self, rng: random.Random, attempt: int) -> bool:
        """Whether this answer carries an injected error (always one draw, so the stream stays aligned)."""
        roll = rng.random()
        if self.rates.rate == 0.0:
            return False
        return roll < self.rates.rate if attempt == 0 else roll >= self.rates.correct_on_reprompt

    def _inject(
        self, rng: random.Random, attempt: int, weights: Mapping[str, float], appliers: Mapping[str, Applier[A]]
    ) -> A | None:
        """One error drawn by ``weights`` when this answer errs, else (or when none applies) None."""
        return draw_error(rng, weights, appliers) if self._errs(rng, attempt) else None

    def _state_change(self, view: PromptView, truth: Truth, rng: random.Random) -> Answer:
        event = _expect(truth, Event, state_change.NAME, view.text)
        situation = Situation(event.delta, view, self.world)
        edits, departures = visible_edits(situation)
        applied = self._inject(rng, view.attempt, self.rates.kinds, edit_appliers(edits, situation))
        if applied is not None:
            edits, departure = applied
            departures.append(departure)
        return self._reply(edits.to_json(), departures, rng)

    def _query_graph(self, view: PromptView, truth: Truth, rng: random.Random) -> Answer:
        noise = self.rates.noise
        if isinstance(truth, Event):
            query = event_query(truth, self.world, rng, noise)
        else:
            query = task_query(truth, self.world, rng, noise)
        if query is None:
            raise NoGroundTruth(query_graph.NAME, view.text, "the event names no entity of the world")
        return json.dumps(query.to_json()), []

    def _entity_selection(self, view: PromptView, truth: Truth, rng: random.Random) -> Answer:
        names = truth.entities if isinstance(truth, Event) else task_names(truth)
        chosen = sorted(n for n in set(names) if n in view.entities)
        departures: list[Departure] = []
        others = sorted(set(view.entities) - set(chosen))
        if self._errs(rng, view.attempt) and others and "wrong_entity" in self.rates.kinds:
            wrong = rng.choice(others)
            chosen = sorted([*chosen, wrong])
            departures.append(Departure("wrong_entity", detail=f"selected {wrong}, which the request does not concern"))
        return json.dumps({"entities": chosen}), departures

    def _goal(self, view: PromptView, truth: Truth, rng: random.Random) -> Answer:
        task = _expect(truth, Task, goal.NAME, view.text)
        formula: Formula = task.goal
        departures: list[Departure] = []
        weights = {k: w for k, w in self.rates.kinds.items() if k in GOAL_ERROR_KINDS}
        applied = self._inject(rng, view.attempt, weights, goal_appliers(formula, view, self.world))
        if applied is not None:
            formula, departure = applied
            departures.append(departure)
        return self._reply({"goal": str(formula)}, departures, rng)

    def _reply(self, value: dict[str, Any], departures: list[Departure], rng: random.Random) -> Answer:
        """The JSON text of ``value``, broken if the injected error is malformed JSON."""
        text = json.dumps(value)
        if departures and departures[-1].kind == "malformed_json":
            text = malformed(text, rng)
        return text, departures


def _expect(truth: Truth, kind: type[T], prompt: str, text: str) -> T:
    if not isinstance(truth, kind):
        briefed = "an event" if isinstance(truth, Event) else "a task"
        raise NoGroundTruth(prompt, text, f"this text was briefed as {briefed}, which this prompt does not take")
    return truth


__all__ = ["ERROR_KINDS", "ErrorRates", "InjectedError", "InvalidErrorRates", "NoGroundTruth", "SimulatedModel"]
