"""Natural-language updates (L3M+P Alg. 3): what a person says → verified edits of the memory.

retrieve (R-, R+ or RS) → prompt with the context and the utterance → parse REMOVE/ADD → verify →
re-prompt with the issues (bounded) → apply atomically with provenance. An answer that never
becomes a valid delta is recorded as a rejected update with its issues; the state is untouched.
Natural-language updates cannot create entities: the parser never proposes any and the verifier
names unknown ones. A model that cannot be reached raises :class:`ModelUnavailable` and changes
nothing. Each update has one deadline (``NLUpdateConfig.deadline``) for all its model calls and
re-prompts: when it passes, or when the model's server refuses the prompt as longer than its
context, the update is recorded as rejected with that reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kg_memory.errors import InvalidValue
from kg_memory.memory import DEFAULT_COMMIT_ATTEMPTS, WorldMemory
from kg_memory.model import Delta, Issue, IssueCode, Update, UpdateSource, UpdateStatus
from l3mp.llm.base import Deadline, DeadlinePassed, LanguageModel, PromptTooLong, Usage
from l3mp.llm.scoring import TextScorer
from l3mp.pipelines.context import FALLBACKS, ModelRetrieval, Retrieved
from l3mp.pipelines.conversation import Exchange, Reply, unusable
from l3mp.pipelines.edits import parse_edits
from l3mp.pipelines.errors import AnswerProblem
from l3mp.pipelines.nl_choose import ChoosingReader
from l3mp.pipelines.ranking import make_ranker
from l3mp.prompts import StateChangeInput, state_change
from l3mp.settings import Settings
from l3mp.wiring import nl_reader
from retrieval import DEFAULT_RETRIEVER, RETRIEVERS, Retriever, embedder_named
from retrieval import retriever as make_retriever

READERS: tuple[str, ...] = ("write", "choose")
RANKERS: tuple[str, ...] = ("choice", "likelihood", "none")


@dataclass(frozen=True, slots=True, kw_only=True)
class NLUpdateConfig:
    retriever: str = DEFAULT_RETRIEVER  # full (R-), entities (R+) or search (RS)
    verify: bool = True  # off only for the paper's unverified variants
    retries: int = 3  # re-prompts after the first state-change answer
    retrieval_retries: int = 2  # re-prompts for an unusable entity selection or query graph
    max_chars: int = 2_000  # a longer "utterance" is rejected unread
    conflict_attempts: int = DEFAULT_COMMIT_ATTEMPTS  # re-verifications when other writers move the memory on
    deadline: float = 120.0  # seconds for the whole update, every model call and re-prompt included
    fallback: str = "words"  # when RS gets no usable query graph: entities, words or none (context.py)
    reader: str = "write"  # write: the model writes the edits; choose: it ranks the domain's readings (nl_choose)
    ranker: str = "choice"  # how the choosing reader asks the model: choice, likelihood or none (words alone)
    max_facts: int | None = None  # facts in a retrieved context (R+, RS); None: the retriever's own

    @classmethod
    def from_settings(cls, settings: Settings, *, retriever: str | None = None, verify: bool = True) -> NLUpdateConfig:
        """The update settings as the CLI and the service use them (``verify=False`` can only turn it off)."""
        return cls(
            retriever=retriever or settings.retriever,
            verify=settings.verify_updates and verify,
            deadline=settings.update_deadline,
            fallback=settings.retrieval_fallback,
            reader=nl_reader(settings),
            ranker=settings.nl_ranker,
            max_facts=settings.context_facts,
        )

    def __post_init__(self) -> None:
        if self.reader not in READERS:
            raise InvalidValue("reader", self.reader, f"use one of {', '.join(READERS)}")
        if self.ranker not in RANKERS:
            raise InvalidValue("ranker", self.ranker, f"use one of {', '.join(RANKERS)}")
        if self.retriever not in RETRIEVERS:
            raise InvalidValue("retriever", self.retriever, f"use one of {', '.join(RETRIEVERS)}")
        if self.fallback not in FALLBACKS:
            raise InvalidValue("fallback", self.fallback, f"use one of {', '.join(FALLBACKS)}")
        if not isinstance(self.deadline, int | float) or not self.deadline > 0:
            raise InvalidValue("deadline", self.deadline, "must be a positive number of seconds")
        for name in ("retries", "retrieval_retries", "max_chars", "conflict_attempts"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < (1 if name in ("max_chars", "conflict_attempts") else 0):
                raise InvalidValue(name, value, "must be a non-negative integer (max_chars, conflict_attempts: ≥ 1)")


@dataclass(frozen=True, slots=True)
class NLUpdateResult:
    """The recorded update (applied, noop or rejected) and what it took to get there."""

    update: Update
    attempts: int  # state-change answers asked for
    usage: Usage
    timings: Mapping[str, float] = field(default_factory=dict)  # seconds: total, model, overhead

    @property
    def status(self) -> UpdateStatus:
        return self.update.status

    @property
    def issues(self) -> tuple[Issue, ...]:
        return self.update.issues


def sized_retriever(name: str, max_facts: int | None, *, embedder: str | None = None) -> Retriever:
    """The retriever ``name`` with at most ``max_facts`` facts of context (the full state has no budget);
    ``embedder`` names the search's model runtime (torch, onnx, onnx-int8; None: the L3MP_EMBEDDER setting)."""
    params: dict[str, Any] = {} if max_facts is None or name == "full" else {"max_facts": max_facts}
    if name != "search":
        return make_retriever(name, **params)
    return make_retriever(name, embedder=embedder_named(embedder or Settings().embedder), **params)


def _malformed(problems: tuple[str, ...]) -> tuple[Issue, ...]:
    return tuple(Issue(IssueCode.MALFORMED_ANSWER, None, p) for p in problems)


class NLUpdater:
    def __init__(
        self,
        memory: WorldMemory,
        model: LanguageModel,
        config: NLUpdateConfig | None = None,
        *,
        retriever: Retriever | None = None,
        scorer: TextScorer | None = None,
    ) -> None:
        self.memory = memory
        self.model = model
        self.config = config or NLUpdateConfig()
        chosen = retriever or sized_retriever(self.config.retriever, self.config.max_facts)
        fallback: Any = self.config.fallback
        self.retrieval = ModelRetrieval(chosen, model, retries=self.config.retrieval_retries, fallback=fallback)
        self.reader = (
            ChoosingReader(
                memory,
                make_ranker(self.config.ranker, model, memory.domain, scorer=scorer),
                verify=self.config.verify,
                attempts=self.config.conflict_attempts,
            )
            if self.config.reader == "choose"
            else None
        )

    def update(self, utterance: str) -> NLUpdateResult:
        start = time.perf_counter()
        problem = unusable(utterance, self.config.max_chars)
        if problem is not None:
            update = self.memory.reject(
                source=UpdateSource.NL,
                input=utterance if isinstance(utterance, str) else repr(utterance),
                issues=[Issue(IssueCode.INVALID_INPUT, None, problem)],
                meta={"pipeline": "nl", "verified": self.config.verify},
            )
            return NLUpdateResult(update, 0, Usage(), {"total": time.perf_counter() - start, "model": 0.0})
        text = " ".join(utterance.split())
        deadline = Deadline.after(self.config.deadline)
        budget = self.config.deadline
        if self.reader is not None:
            return self._choose(text, deadline, start)
        empty = Retrieved(context=None, exchange=None, seconds=0.0)
        try:
            retrieved = self.retrieval.retrieve(self.memory, text, deadline=deadline, budget=budget)
        except (DeadlinePassed, PromptTooLong) as exc:
            # the retrieval stage's own conversation is lost with the exception; its time is in the total
            return self._limit(exc, text, empty, None, start)
        if retrieved.context is None:
            problems = retrieved.problems or ("no context could be retrieved for the update",)
            meta = self._meta(retrieved, None, start)
            update = self.memory.reject(source=UpdateSource.NL, input=text, issues=_malformed(problems), meta=meta)
            return self._result(update, retrieved, None, start)
        context = retrieved.context
        inputs = StateChangeInput(self.memory.domain, text, tuple(context.entities.values()), context.facts)
        exchange = Exchange(
            model=self.model,
            messages=state_change.render(inputs),
            schema=state_change.schema(inputs, model=self.model),
            name=state_change.NAME,
            deadline=deadline,
            budget=budget,
        )
        try:
            update = self._converse(exchange, text, retrieved, start)
        except (DeadlinePassed, PromptTooLong) as exc:
            return self._limit(exc, text, retrieved, exchange, start)
        return self._result(update, retrieved, exchange, start)

    def _choose(self, text: str, deadline: Deadline, start: float) -> NLUpdateResult:
        assert self.reader is not None
        update, choice, usage = self.reader.read(text, deadline=deadline)
        total = time.perf_counter() - start
        model_seconds = sum(r.seconds for r in choice.rankings) if choice is not None else 0.0
        timings = {"total": total, "model": model_seconds, "overhead": total - model_seconds}
        return NLUpdateResult(update, len(choice.rankings) if choice is not None else 0, usage, timings)

    def _limit(
        self,
        exc: DeadlinePassed | PromptTooLong,
        text: str,
        retrieved: Retrieved,
        exchange: Exchange | None,
        start: float,
    ) -> NLUpdateResult:
        """Record an update stopped by a limit (its deadline, the model's context) as rejected, with why."""
        if isinstance(exc, DeadlinePassed):
            issue = Issue(IssueCode.DEADLINE, None, f"{exc}: say it again, or more simply")
        else:
            issue = Issue(
                IssueCode.PROMPT_TOO_LONG, None, f"{exc}: use a smaller context (retriever) or a larger model"
            )
        meta = self._meta(retrieved, exchange, start)
        update = self.memory.reject(source=UpdateSource.NL, input=text, issues=[issue], meta=meta)
        return self._result(update, retrieved, exchange, start)

    # -- the re-prompt loop ----------------------------------------------------------------

    def _converse(self, exchange: Exchange, text: str, retrieved: Retrieved, start: float) -> Update:
        issues: tuple[Issue, ...] = ()
        reply: Reply | None = None
        delta: Delta | None = None
        for attempt in range(self.config.retries + 1):
            if attempt:
                assert reply is not None
                exchange.feedback(reply, [i.message for i in issues])
            reply = exchange.ask()
            if reply.problem is not None:
                issues = _malformed((reply.problem,))
                continue
            try:
                delta = parse_edits(reply.data, self.memory.domain)
            except AnswerProblem as exc:
                issues = _malformed(exc.problems)
                continue
            outcome = self._commit(delta, text, lambda: self._meta(retrieved, exchange, start))
            if isinstance(outcome, Update):
                return outcome
            issues = outcome
        meta = self._meta(retrieved, exchange, start)
        return self.memory.reject(source=UpdateSource.NL, input=text, issues=issues, delta=delta, meta=meta)

    def _commit(self, delta: Delta, text: str, meta: Callable[[], dict[str, Any]]) -> Update | tuple[Issue, ...]:
        """Verify and apply once (the memory re-verifies if another writer came first); the issues if
        the delta does not apply, so the model can be asked again."""
        outcome = self.memory.try_apply(
            delta,
            source=UpdateSource.NL,
            input=text,
            meta=meta(),
            attempts=self.config.conflict_attempts,
            verify=self.config.verify,
        )
        return outcome if isinstance(outcome, Update) else outcome.issues

    # -- provenance --------------------------------------------------------------------------

    def _meta(self, retrieved: Retrieved, exchange: Exchange | None, start: float) -> dict[str, Any]:
        usage, model_seconds = _costs(retrieved, exchange)
        total = time.perf_counter() - start
        meta: dict[str, Any] = {
            "pipeline": "nl",
            "verified": self.config.verify,
            "retrieval": retrieved.stats(),
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
            "timings": {"total": round(total, 6), "model": round(model_seconds, 6)},
        }
        if exchange is not None:
            meta["state_change"] = exchange.stats()
            meta["attempts"] = exchange.calls
        return meta

    def _result(self, update: Update, retrieved: Retrieved, exchange: Exchange | None, start: float) -> NLUpdateResult:
        usage, model_seconds = _costs(retrieved, exchange)
        total = time.perf_counter() - start
        timings = {"total": total, "model": model_seconds, "overhead": total - model_seconds}
        return NLUpdateResult(update, exchange.calls if exchange else 0, usage, timings)


def _costs(retrieved: Retrieved, exchange: Exchange | None) -> tuple[Usage, float]:
    parts = [*retrieved.exchanges, *((exchange,) if exchange is not None else ())]
    usage = sum((e.usage for e in parts), Usage())
    return usage, sum(e.seconds for e in parts)
