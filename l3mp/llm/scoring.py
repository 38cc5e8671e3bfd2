"""How likely a model finds a text after a prompt: the log-probabilities of its tokens.

Two ways to ask a server: ``POST /score`` (``{"prompt", "continuation"}``, served by ``l3mp model
serve`` with scoring on: the continuation's tokens, after the prompt's cached prefix), and the
OpenAI-compatible completions endpoint with ``echo`` and ``logprobs`` (vLLM, OpenAI's older
completion models). The scorer tries the first and falls back to the second when the server has no
such route. llama-cpp-python's own echo is not used: in 0.3.36 it gives each token the log-probability
of the next one, and sorts the whole vocabulary per prompt token. Each continuation is one request
sharing the prompt, so a server that reuses the longest common prefix evaluates only its tokens.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import openai

from l3mp.llm.base import Deadline, LLMError, ModelUnavailable, Usage

_NOT_SUPPORTED = ("logprobs is not supported", "logits_all", "echo", "not supported")


class ScoringUnsupported(LLMError):
    """The server answers but cannot return the log-probabilities of a prompt's tokens."""

    def __init__(self, base_url: str, cause: str) -> None:
        self.base_url = base_url
        self.cause = cause
        super().__init__(f"the model at {base_url} cannot score text: {cause}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Scores:
    """The summed log-probability of each continuation's tokens, their counts, and what it cost."""

    logprobs: tuple[float, ...]
    tokens: tuple[int, ...]
    usage: Usage
    seconds: float


@runtime_checkable
class TextScorer(Protocol):
    def score(self, prompt: str, continuations: Sequence[str], *, deadline: Deadline) -> Scores:
        """The log-probability of each continuation right after ``prompt``; raises ScoringUnsupported
        when the backend cannot score, ModelUnavailable when it cannot answer before ``deadline``."""
        ...


class OpenAICompatibleScorer:
    """Scores over ``POST {base_url}/score``, or ``/completions`` with ``echo`` and ``logprobs``."""

    def __init__(self, base_url: str, model: str, api_key: str = "", *, timeout: float = 60.0) -> None:
        if timeout <= 0:
            raise LLMError(f"bad scorer timeout {timeout!r}: must be > 0 seconds")
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout, max_retries=0)
        self._route: bool | None = None  # whether the server has POST /score (None: not asked yet)

    def close(self) -> None:
        self._client.close()

    def score(self, prompt: str, continuations: Sequence[str], *, deadline: Deadline) -> Scores:
        start = time.perf_counter()
        sums: list[float] = []
        counts: list[int] = []
        usage = Usage()
        for continuation in continuations:
            total, count, spent = self._one(prompt, continuation, deadline)
            sums.append(total)
            counts.append(count)
            usage = usage + spent
        return Scores(logprobs=tuple(sums), tokens=tuple(counts), usage=usage, seconds=time.perf_counter() - start)

    def _one(self, prompt: str, continuation: str, deadline: Deadline) -> tuple[float, int, Usage]:
        left = deadline.remaining()
        if left <= 0:
            raise ModelUnavailable(self.base_url, self.model, "no time left to score", 0, timed_out=True)
        if self._route is not False:
            scored = self._scored(prompt, continuation, min(left, self.timeout))
            if scored is not None:
                return scored
        return self._echoed(prompt, continuation, min(left, self.timeout))

    def _scored(self, prompt: str, continuation: str, timeout: float) -> tuple[float, int, Usage] | None:
        """Through ``POST /score``; None when the server has no such route (remembered)."""
        body = {"model": self.model, "prompt": prompt, "continuation": continuation}
        try:
            reply: Any = self._client.post("/score", cast_to=object, body=body, options={"timeout": timeout})
        except openai.NotFoundError:
            self._route = False
            return None
        except openai.APIStatusError as exc:
            raise ModelUnavailable(self.base_url, self.model, f"HTTP {exc.status_code}: {exc.message[:200]}") from exc
        except openai.APITimeoutError as exc:
            raise ModelUnavailable(self.base_url, self.model, "scoring timed out", 1, timed_out=True) from exc
        except openai.OpenAIError as exc:
            raise ModelUnavailable(self.base_url, self.model, f"{type(exc).__name__}: {exc}") from exc
        values = reply.get("token_logprobs") if isinstance(reply, dict) else None
        if not isinstance(values, list) or not values:
            raise ScoringUnsupported(self.base_url, f"/score answered without token_logprobs: {str(reply)[:200]}")
        self._route = True
        spent = Usage(int(reply.get("prompt_tokens", 0)) + len(values), 0)
        return float(sum(values)), len(values), spent

    def _echoed(self, prompt: str, continuation: str, left: float) -> tuple[float, int, Usage]:
        try:
            response = self._client.completions.create(
                model=self.model,
                prompt=prompt + continuation,
                max_tokens=1,
                temperature=0.0,
                echo=True,
                logprobs=1,
                timeout=left,
            )
        except openai.APIStatusError as exc:
            text = f"{exc.message} {exc.body}".lower()
            if any(word in text for word in _NOT_SUPPORTED):
                raise ScoringUnsupported(self.base_url, f"HTTP {exc.status_code}: {exc.message[:200]}") from exc
            raise ModelUnavailable(self.base_url, self.model, f"HTTP {exc.status_code}: {exc.message[:200]}") from exc
        except openai.APITimeoutError as exc:
            raise ModelUnavailable(self.base_url, self.model, "scoring timed out", 1, timed_out=True) from exc
        except openai.OpenAIError as exc:
            raise ModelUnavailable(self.base_url, self.model, f"{type(exc).__name__}: {exc}") from exc
        total, count = _continuation_logprob(response, len(prompt), len(prompt + continuation))
        spent = response.usage
        usage = Usage(spent.prompt_tokens or 0, spent.completion_tokens or 0) if spent is not None else Usage()
        return total, count, usage


def _continuation_logprob(response: Any, start: int, end: int) -> tuple[float, int]:
    """The summed log-probability of the echoed tokens that begin at or after ``start`` (and before
    ``end``, the generated token's place): the continuation's."""
    choices = getattr(response, "choices", None) or []
    logprobs = getattr(choices[0], "logprobs", None) if choices else None
    offsets = getattr(logprobs, "text_offset", None) if logprobs is not None else None
    values = getattr(logprobs, "token_logprobs", None) if logprobs is not None else None
    if not offsets or not values:
        raise ScoringUnsupported("", "the reply carries no token log-probabilities")
    total, count = 0.0, 0
    for offset, value in zip(offsets, values, strict=False):
        if start <= offset < end and value is not None and math.isfinite(value):
            total += value
            count += 1
    if count == 0:
        raise ScoringUnsupported("", "no echoed token falls within the continuation")
    return total, count


__all__ = ["OpenAICompatibleScorer", "Scores", "ScoringUnsupported", "TextScorer"]
