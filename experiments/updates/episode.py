"""One simulated episode of natural-language updates, replayed through every variant (paper Sec. V.A).

The simulator draws the events once; each variant (R-, R+, RS, each with and without verification)
keeps its own memory, started from the same survey, and hears the same reports from its own
simulated model (same seed: the same injected errors at the same answers). After every step each
memory is compared with the ground truth.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kg_memory import Delta, Entity, Fact, GraphStore, UpdateSource, UpdateStatus, Verifier, WorldMemory
from l3mp.gc_freeze import gc_frozen
from l3mp.llm import Completion, LanguageModel, MalformedOutput, Message
from l3mp.pipelines import NLUpdateConfig, NLUpdater, NLUpdateResult
from l3mp.pipelines.edits import parse_edits
from l3mp.pipelines.errors import AnswerProblem
from retrieval import Embedder, SearchRetriever, retriever
from sim import Event, Home, Simulator
from sim.model import ErrorRates, SimulatedModel

DOMAIN = "household"
SHORT = {"full": "R-", "entities": "R+", "search": "RS"}


@dataclass(frozen=True, slots=True)
class Variant:
    retriever: str
    verify: bool

    @property
    def name(self) -> str:
        return SHORT[self.retriever] + ("V" if self.verify else "")


VARIANTS = tuple(Variant(r, v) for r in ("full", "entities", "search") for v in (False, True))


class FactsView:
    """A verifier's view of a set of facts (the ground truth, or nothing)."""

    def __init__(self, entities: Mapping[str, Entity], facts: Iterable[Fact]) -> None:
        self._entities = entities
        self._about: dict[str, set[Fact]] = defaultdict(set)
        for fact in facts:
            for arg in fact.args:
                self._about[arg].add(fact)

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        return {n: self._entities[n] for n in names if n in self._entities}

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        return frozenset(f for n in names for f in self._about.get(n, ()))


@dataclass(slots=True)
class Recorder:
    """Wraps the model and keeps every state-change answer of the current update, in order."""

    inner: LanguageModel
    answers: list[str | None] = field(default_factory=list)  # None: the answer held no JSON

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        try:
            completion = self.inner.complete(messages, schema=schema, name=name, timeout=timeout)
        except MalformedOutput:
            if name == "state_change":
                self.answers.append(None)
            raise
        if name == "state_change":
            self.answers.append(completion.text)
        return completion


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One variant's update at one step, judged against the truth."""

    step: int
    status: str
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    overhead: float  # seconds, model latency excluded
    seconds: float  # the whole update, model included
    reasons: tuple[str, ...]  # a rejected update's issues (code: message)
    success: bool  # the memory changed exactly as the world did
    accuracy: float  # shared facts / facts in either (Jaccard), memory vs truth, after the step
    exact: bool
    violations: int  # rule issues of the whole stored state, after the step
    injected: tuple[str, ...]  # kinds injected into this step's state-change answers
    detectable: int  # answers with an injected error that the verifier flags against the truth
    detected: int  # of those answers, the ones the pipeline refused (re-prompted or rejected)
    slipped: int  # answers with an injected error that were written to the memory


@dataclass(kw_only=True)
class Lane:
    """One variant's memory, model and pipeline."""

    variant: Variant
    memory: WorldMemory
    model: LanguageModel  # what the pipelines talk to (the oracle, a cassette, a real model)
    recorder: Recorder
    updater: NLUpdater
    oracle: SimulatedModel | None  # the simulated model behind ``model``, to brief and to audit
    steps: list[Step] = field(default_factory=list)


def make_lane(
    variant: Variant,
    store: GraphStore,
    home: Home,
    sim: Simulator,
    rates: ErrorRates,
    seed: int,
    embedder: Embedder,
    real: Callable[[Variant], LanguageModel] | None = None,
    deadline: float = 120.0,
    *,
    model: LanguageModel | None = None,
    oracle: SimulatedModel | None = None,
    prefix: str = "update_eval",
) -> Lane:
    """A variant's memory, surveyed from ``home``, and its pipeline.

    The model defaults to a fresh :class:`SimulatedModel` over ``sim``; ``real`` builds a real model per
    variant instead (it hears only the utterances). A caller that passes its own ``model`` (a cassette)
    passes the ``oracle`` behind it too, or None when there is none.
    """
    slug = f"{variant.retriever}_{'verified' if variant.verify else 'unverified'}"
    memory = WorldMemory.create(store, f"{prefix}_{slug}_{uuid.uuid4().hex[:8]}", DOMAIN)
    survey = memory.add_entities(home.entities, facts=home.facts, input="survey")
    if survey.status is not UpdateStatus.APPLIED:
        raise RuntimeError(f"the survey was not applied: {[i.message for i in survey.issues[:3]]}")
    if model is None and real is not None:
        model = real(variant)  # a real model hears only the utterances: no oracle behind it
    elif model is None:
        oracle = model = SimulatedModel(sim.world, rates, seed=seed)
    recorder = Recorder(model)
    chosen = retriever(variant.retriever, embedder=embedder) if variant.retriever == "search" else None
    if isinstance(chosen, SearchRetriever):
        chosen.embeddings(memory)  # embed the surveyed entities once, before the timed steps, as a service would
    config = NLUpdateConfig(retriever=variant.retriever, verify=variant.verify, deadline=deadline)
    updater = NLUpdater(memory, recorder, config, retriever=chosen)
    return Lane(variant=variant, memory=memory, model=model, recorder=recorder, updater=updater, oracle=oracle)


def whole_state_issues(verifier: Verifier, entities: Mapping[str, Entity], facts: frozenset[Fact]) -> int:
    """Rule issues of a whole state, checked as if it were built from nothing."""
    constants = set(verifier.domain.constants)  # the domain's own objects are not created
    whole = Delta(add=facts, new_entities=tuple(e for n, e in entities.items() if n not in constants))
    return len(verifier.verify(whole, FactsView({}, ()), UpdateSource.SENSOR))


def _answer_delta(answer: str | None, lane: Lane) -> Delta | None:
    if answer is None:
        return None
    try:
        return parse_edits(json.loads(answer), lane.memory.domain)
    except (AnswerProblem, ValueError):
        return None


def _detection(
    lane: Lane, event: Event, result: NLUpdateResult, first_error: int, truth: FactsView
) -> tuple[tuple[str, ...], int, int, int]:
    """Judge the answers that carried an injected error: flaggable against the truth, refused, written.

    Without an oracle (a replayed or real model) nothing is known to be injected: all zeros.
    """
    if lane.oracle is None:
        return (), 0, 0, 0
    errors = [e for e in lane.oracle.injected[first_error:] if e.prompt == "state_change" and e.kind != "context_miss"]
    kinds = tuple(e.kind for e in errors)
    detectable = detected = slipped = 0
    last = result.attempts - 1
    written = result.update.status is UpdateStatus.APPLIED
    for attempt in sorted({e.attempt for e in errors}):
        if attempt >= len(lane.recorder.answers):
            continue
        delta = _answer_delta(lane.recorder.answers[attempt], lane)
        flagged = delta is None or bool(lane.updater.memory.verifier.verify(delta, truth, UpdateSource.NL))
        refused = attempt < last or not written
        detectable += flagged
        detected += flagged and refused
        slipped += not refused
    return kinds, detectable, detected, slipped


def run_step(
    lane: Lane, step: int, event: Event, before: FactsView, truth: frozenset[Fact], *, audit: bool = True
) -> Step:
    """One event through one lane; ``audit`` False skips the whole-state rule check (``violations`` 0)."""
    if lane.oracle is not None:
        lane.oracle.brief_event(event)
    lane.recorder.answers.clear()
    first_error = len(lane.oracle.injected) if lane.oracle is not None else 0
    result = lane.updater.update(event.text)
    memory = lane.memory.facts()
    union = memory | truth
    update = result.update
    changed = update.delta if update.status is UpdateStatus.APPLIED else Delta()
    kinds, detectable, detected, slipped = _detection(lane, event, result, first_error, before)
    return Step(
        step=step,
        status=update.status.value,
        attempts=result.attempts,
        prompt_tokens=result.usage.prompt_tokens,
        completion_tokens=result.usage.completion_tokens,
        overhead=result.timings["overhead"],
        seconds=result.timings["total"],
        reasons=tuple(f"{i.code.value}: {i.message}" for i in update.issues)
        if update.status.value == "rejected"
        else (),
        success=(changed.remove, changed.add) == (event.delta.remove, event.delta.add),
        accuracy=len(memory & truth) / len(union) if union else 1.0,
        exact=memory == truth,
        violations=whole_state_issues(lane.memory.verifier, lane.memory.entities(), memory) if audit else 0,
        injected=kinds,
        detectable=detectable,
        detected=detected,
        slipped=slipped,
    )


def run_episode(
    home: Home,
    store: GraphStore,
    embedder: Embedder,
    *,
    steps: int = 100,
    rates: ErrorRates | None = None,
    seed: int = 0,
    variants: Sequence[Variant] = VARIANTS,
    on_step: Callable[[int], None] | None = None,
    freeze_gc: bool = True,
    real: Callable[[Variant], LanguageModel] | None = None,
    deadline: float = 120.0,
) -> list[Lane]:
    """Every variant through ``steps`` events of one home; the memories are deleted afterwards."""
    sim = Simulator(home, seed=seed)
    rates = rates or ErrorRates()
    lanes: list[Lane] = []
    try:
        for variant in variants:
            lanes.append(make_lane(variant, store, home, sim, rates, seed, embedder, real, deadline))
        entities = {e.name: e for e in home.entities}
        with gc_frozen(freeze_gc):
            for step in range(1, steps + 1):
                before = FactsView(entities, sim.state)
                event = sim.next_event()
                for lane in lanes:
                    lane.steps.append(run_step(lane, step, event, before, sim.state))
                if on_step is not None:
                    on_step(step)
        return lanes
    finally:
        for lane in lanes:
            store.delete_memory(lane.memory.name)
