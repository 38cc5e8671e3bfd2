"""Rankers against the real local model (llama.cpp with SmolLM2-135M, scoring on): the scorer's log-
probabilities, the likelihood ranker deciding where no word names the change, and the reader going on
with the words alone when a server cannot score."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kg_memory import UpdateStatus, WorldMemory
from l3mp.llm.base import Deadline
from l3mp.llm.local import LocalServer
from l3mp.llm.scoring import OpenAICompatibleScorer, Scores, ScoringUnsupported
from l3mp.pipelines.nl_choose import ChoosingReader
from l3mp.pipelines.ranking import LikelihoodRanker


@pytest.mark.slow
def test_the_scorer_finds_the_likely_continuation_likelier(local_server: LocalServer) -> None:
    scorer = OpenAICompatibleScorer(local_server.base_url, local_server.alias)
    scores = scorer.score("one two three four five", [" six seven", " banana apple"], deadline=Deadline.after(60))
    assert scores.logprobs[0] > scores.logprobs[1] and all(n > 0 for n in scores.tokens)
    assert scores.usage.prompt_tokens > 0


@pytest.mark.slow
def test_where_no_word_names_the_change_the_model_s_likelihood_decides(
    local_server: LocalServer, surveyed: WorldMemory
) -> None:
    # "made coffee in" is none of the household's words for filling: the readings go to the model
    ranker = LikelihoodRanker(
        scorer=OpenAICompatibleScorer(local_server.base_url, local_server.alias), domain=surveyed.domain
    )
    update, choice, usage = ChoosingReader(surveyed, ranker).read(
        "I made coffee in the grey teacup on the upstairs kitchen counter.", deadline=Deadline.after(120)
    )
    assert update.status is UpdateStatus.APPLIED, update.issues
    assert {str(f) for f in update.delta.add} == {"(filled teacup_1 coffee)"} and not update.delta.remove
    assert choice is not None and len(choice.rankings) == 1 and usage.prompt_tokens > 0


class CannotScore:
    def score(self, prompt: str, continuations: Sequence[str], *, deadline: Deadline) -> Scores:
        raise ScoringUnsupported("http://127.0.0.1:9/v1", "HTTP 500: logprobs is not supported")


def test_a_server_that_cannot_score_leaves_the_words_to_decide(surveyed: WorldMemory) -> None:
    ranker = LikelihoodRanker(scorer=CannotScore(), domain=surveyed.domain)
    reader = ChoosingReader(surveyed, ranker)
    clear, _, _ = reader.read("I opened the washer in the main laundry room.", deadline=Deadline.after(10))
    assert clear.status is UpdateStatus.APPLIED and "ranker_unavailable" not in clear.meta["choice"]
    open_question, _, _ = reader.read("I made coffee in the grey teacup.", deadline=Deadline.after(10))
    assert open_question.status is UpdateStatus.REJECTED
    assert "logprobs is not supported" in open_question.meta["choice"]["ranker_unavailable"]
