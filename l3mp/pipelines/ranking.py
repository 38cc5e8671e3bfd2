"""Rankers: a model orders the readings a report leaves equally supported (:mod:`choosing`).

:class:`LikelihoodRanker` asks how much likelier the model finds each reading after the report than
without it (the pointwise mutual information of reading and report, summed over the reading's
tokens): a reading the report makes likely wins, and one that is likely anyway (short, common
words) gains nothing from being so. The prompt's start is fixed (instructions and the domain's
examples), so a server that keeps the longest common prefix evaluates it once.
:class:`ChoiceRanker` needs no scores: the model copies out one reading under a schema that allows
only the readings, which any server with JSON schemas (llama.cpp, vLLM, OpenAI) can enforce. It is
the one to use with llama-cpp-python's server, whose scoring converts every prompt token's logits
to Python lists and takes seconds per reading.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from kg_memory.domain import Domain
from kg_memory.errors import InvalidValue
from l3mp.llm.base import Deadline, LanguageModel, Message, Usage
from l3mp.llm.scoring import OpenAICompatibleScorer, TextScorer
from l3mp.pipelines.choosing import Ranker, Ranking

_INSTRUCTIONS = "A person tells a home robot what changed in the home. After each report, what is true now."
_NOTHING = "(nothing)"


def ranking_prefix(domain: Domain) -> str:
    """The fixed start of every ranking prompt for ``domain``."""
    shown = "".join(f"Report: {report}\nNow: {now}\n\n" for report, now in domain.language.examples)
    return f"{_INSTRUCTIONS}\n\n{shown}"


@dataclass(slots=True, kw_only=True)
class LikelihoodRanker:
    scorer: TextScorer
    domain: Domain
    # nats: how much likelier the best must be than the next; on the hand-written reports SmolLM2's
    # wrong picks won by 0.3-4.5, its right ones mostly by 14 or more
    margin: float = 5.0

    def rank(self, *, report: str, readings: Sequence[str], deadline: Deadline) -> Ranking:
        start = time.perf_counter()
        prefix = ranking_prefix(self.domain)
        # a leading space: the reading is scored as the words that follow "Now:"
        options = [f" {r}" for r in readings]
        given = self.scorer.score(f"{prefix}Report: {' '.join(report.split())}\nNow:", options, deadline=deadline)
        alone = self.scorer.score(f"{prefix}Report: {_NOTHING}\nNow:", options, deadline=deadline)
        scores = tuple(g - a for g, a in zip(given.logprobs, alone.logprobs, strict=True))
        return Ranking(scores=scores, usage=given.usage + alone.usage, seconds=time.perf_counter() - start)


@dataclass(slots=True, kw_only=True)
class ChoiceRanker:
    """The model copies out the reading the report means, under a schema that allows only the
    readings' own words; asked twice, with the readings listed in opposite orders, a reading wins
    only when both answers agree (a small model's pull towards the first or last option otherwise
    passes for a preference)."""

    model: LanguageModel
    domain: Domain
    margin: float = 2.0  # votes: both askings must agree

    def rank(self, *, report: str, readings: Sequence[str], deadline: Deadline) -> Ranking:
        start = time.perf_counter()
        votes = [0.0] * len(readings)
        usage = Usage()
        for order in (list(range(len(readings))), list(reversed(range(len(readings))))):
            picked, spent = self._ask(report, [readings[i] for i in order], deadline)
            usage = usage + spent
            if picked is not None:
                votes[order[picked]] += 1.0
        return Ranking(scores=tuple(votes), usage=usage, seconds=time.perf_counter() - start)

    def _ask(self, report: str, listed: Sequence[str], deadline: Deadline) -> tuple[int | None, Usage]:
        messages = choice_messages(self.domain, report, listed)
        schema = {
            "type": "object",
            "properties": {"now": {"type": "string", "enum": list(listed)}},
            "required": ["now"],
            "additionalProperties": False,
        }
        completion = self.model.complete(messages, schema=schema, name="reading", timeout=deadline.remaining())
        answer = completion.data.get("now") if isinstance(completion.data, dict) else None
        return (listed.index(answer) if answer in listed else None), completion.usage


def choice_messages(domain: Domain, report: str, listed: Sequence[str]) -> list[Message]:
    """A fixed system message (instructions and the domain's examples), then the report and its readings."""
    shown = "\n".join(f'Report: {r}\nAnswer: {{"now": "{n}"}}' for r, n in domain.language.examples)
    system = f"{_INSTRUCTIONS} Answer with the one reading that the report means, copied exactly.\n\n{shown}"
    options = "\n".join(f"- {r}" for r in listed)
    return [Message("system", system), Message("user", f"Report: {' '.join(report.split())}\nReadings:\n{options}")]


def make_ranker(name: str, model: LanguageModel, domain: Domain, *, scorer: TextScorer | None = None) -> Ranker | None:
    """The ranker ``name`` (choice, likelihood, none) over ``model``; likelihood scores through
    ``scorer``, or through the completions endpoint of the model's own server."""
    if name == "none":
        return None
    if name == "choice":
        return ChoiceRanker(model=model, domain=domain)
    if name == "likelihood":
        if scorer is None:
            base_url = getattr(model, "base_url", None)
            if not isinstance(base_url, str):
                raise InvalidValue("ranker", name, "likelihood needs a model behind an OpenAI-compatible server")
            scorer = OpenAICompatibleScorer(base_url, str(getattr(model, "model", "")))
        return LikelihoodRanker(scorer=scorer, domain=domain)
    raise InvalidValue("ranker", name, "use one of choice, likelihood, none")


__all__ = ["ChoiceRanker", "LikelihoodRanker", "choice_messages", "make_ranker", "ranking_prefix"]
