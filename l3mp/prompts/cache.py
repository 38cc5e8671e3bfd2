"""What a server's prompt cache saves: time to the first token of a prompt whose leading text the
server has not seen (cold) against the same leading text again with another tail (warm).

The prompts put everything that depends on the request last, so their leading text (the system
message) is the same from one request to the next; a server that keeps what it evaluated (llama.cpp,
vLLM's prefix caching, OpenAI) only evaluates the tail. Time to the first token is measured as the
time of a streamed one-token completion: the prompt's evaluation and one token, nothing more.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass

from l3mp.llm.base import LanguageModel, Message
from l3mp.llm.openai_client import OpenAICompatibleModel


@dataclass(frozen=True, slots=True)
class CacheRound:
    """Seconds to the first token: ``cold`` for a prefix new to the server, ``warm`` for it again."""

    cold: float
    warm: float

    @property
    def saved(self) -> float:
        return self.cold - self.warm


def first_token_client(base_url: str, model: str, *, timeout: float = 300.0) -> OpenAICompatibleModel:
    """A client whose completions stop at one streamed token: its call time is the time to the first token."""
    return OpenAICompatibleModel(
        base_url, model, output="none", max_tokens=1, stream=True, timeout=timeout, max_retries=0, temperature=0.0
    )


def first_token_seconds(model: LanguageModel, messages: Sequence[Message]) -> float:
    """Seconds ``model`` takes to answer ``messages`` (with :func:`first_token_client`, to its first token)."""
    start = time.perf_counter()
    model.complete(messages)
    return time.perf_counter() - start


def with_prefix(prefix: str, tail: str, *, nonce: str = "") -> list[Message]:
    """The conversation ``prefix`` (the system message, ``nonce`` leading it) then ``tail`` (the user's)."""
    return [Message("system", f"[{nonce}] {prefix}" if nonce else prefix), Message("user", tail)]


def cold_and_warm(model: LanguageModel, prefix: str, tails: tuple[str, str], *, nonce: str) -> CacheRound:
    """One round: ``prefix`` led by ``nonce`` (so no server has it) with the first tail, then again with the second."""
    cold = first_token_seconds(model, with_prefix(prefix, tails[0], nonce=nonce))
    warm = first_token_seconds(model, with_prefix(prefix, tails[1], nonce=nonce))
    return CacheRound(cold, warm)


def measure_cache(
    model: LanguageModel, prefix: str, tails: Sequence[tuple[str, str]], *, nonces: Sequence[str] = ()
) -> list[CacheRound]:
    """A round per pair of ``tails``, each with its own nonce (random unless given), cold then warm."""
    chosen = list(nonces) or [secrets.token_hex(8) for _ in tails]
    return [cold_and_warm(model, prefix, pair, nonce=nonce) for pair, nonce in zip(tails, chosen, strict=True)]
