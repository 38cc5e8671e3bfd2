"""Cassettes: record a live run's model traffic to JSONL, replay it offline and deterministically.

Each line is ``{"key", "request", "response"}``; the key is the SHA-256 of the request's canonical JSON
(messages, schema, name). Replay serves identical requests in recorded order and fails loudly on a
request that was never recorded. A reply the backend rejected as malformed is recorded as such and
replayed as the same MalformedOutput; ModelUnavailable is infrastructure and is not recorded.
Scores (a TextScorer's answers) have cassettes of their own, keyed by prompt and continuation:
:class:`ScoreRecorder` and :class:`ScorePlayer`.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from l3mp.llm.base import Completion, Deadline, LanguageModel, LLMError, MalformedOutput, Message, Usage
from l3mp.llm.scoring import Scores, TextScorer


class UnrecordedRequest(LLMError):
    """Replay met a request the cassette does not hold (or holds fewer times than asked)."""

    def __init__(self, path: Path, key: str, excerpt: str, recorded: int = 0) -> None:
        self.path = path
        self.key = key
        self.excerpt = excerpt
        times = f"recorded only {recorded} time(s)" if recorded else "not recorded"
        super().__init__(f"request {key[:16]} {times} in cassette {path}; first user message: {excerpt!r}")


class CassetteError(LLMError):
    def __init__(self, path: Path, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {problem}")


def request_json(messages: Sequence[Message], schema: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    return {"messages": [m.to_dict() for m in messages], "schema": schema, "name": name}


def request_key(messages: Sequence[Message], schema: Mapping[str, Any] | None = None, name: str = "response") -> str:
    canonical = json.dumps(request_json(messages, schema, name), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _excerpt(messages: Sequence[Message]) -> str:
    user = next((m.content for m in messages if m.role == "user"), "")
    return user if len(user) <= 120 else user[:120] + "..."


class CassetteRecorder:
    """Passes every call to ``inner`` and appends the exchange to ``path`` (created or truncated)."""

    def __init__(self, inner: LanguageModel, path: Path | str) -> None:
        self.inner = inner
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("", encoding="utf-8")

    @property
    def mode(self) -> str | None:
        """The inner client's output mode (prompts pick their schema dialect by it), so a recorded
        run asks exactly what a live one would."""
        mode = getattr(self.inner, "mode", None)
        return mode if isinstance(mode, str) else None

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        response: dict[str, Any]
        try:
            completion = self.inner.complete(messages, schema=schema, name=name, timeout=timeout)
        except MalformedOutput as exc:
            usage = {"prompt_tokens": exc.usage.prompt_tokens, "completion_tokens": exc.usage.completion_tokens}
            malformed = {"text": exc.text, "problem": exc.problem, "usage": usage, "model": exc.model}
            self._write(messages, schema, name, {"malformed": malformed})
            raise
        usage = {
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
        }
        response = {"text": completion.text, "data": completion.data, "usage": usage, "model": completion.model}
        self._write(messages, schema, name, response)
        return completion

    def _write(
        self, messages: Sequence[Message], schema: Mapping[str, Any] | None, name: str, response: dict[str, Any]
    ) -> None:
        record = {"key": request_key(messages, schema, name), "request": request_json(messages, schema, name)}
        record["response"] = response
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")


class CassettePlayer:
    """Replays a cassette; identical requests are served in recorded order. ``mode`` is the output
    mode of the client that was recorded, which the prompts asked by (see :class:`CassetteRecorder`)."""

    def __init__(self, path: Path | str, *, mode: str | None = None) -> None:
        self.path = Path(path)
        self.mode = mode
        self._responses: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self._served: dict[str, int] = defaultdict(int)
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                self._responses[record["key"]].append(record["response"])
            except (ValueError, KeyError, TypeError) as exc:
                raise CassetteError(self.path, number, f"not a cassette record: {exc}") from exc

    @property
    def remaining(self) -> int:
        return sum(len(queue) for queue in self._responses.values())

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        key = request_key(messages, schema, name)
        queue = self._responses.get(key)
        if not queue:
            raise UnrecordedRequest(self.path, key, _excerpt(messages), self._served[key])
        response = queue.popleft()
        self._served[key] += 1
        if "malformed" in response:
            bad = response["malformed"]
            spent = bad.get("usage") or {}
            usage = Usage(spent.get("prompt_tokens", 0), spent.get("completion_tokens", 0))
            raise MalformedOutput(bad["text"], bad["problem"], usage, bad.get("model", ""))
        usage = Usage(response["usage"]["prompt_tokens"], response["usage"]["completion_tokens"])
        return Completion(text=response["text"], data=response["data"], usage=usage, model=response["model"])


# -- scores (a TextScorer's traffic), for runs that rank readings by likelihood ---------------------


def score_key(prompt: str, continuation: str) -> str:
    canonical = json.dumps({"prompt": prompt, "continuation": continuation}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ScoreRecorder:
    """Passes every scoring to ``inner`` (a TextScorer) and appends each continuation's score to ``path``."""

    def __init__(self, inner: TextScorer, path: Path | str) -> None:
        self.inner = inner
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("", encoding="utf-8")

    def score(self, prompt: str, continuations: Sequence[str], *, deadline: Deadline) -> Scores:
        scores = self.inner.score(prompt, continuations, deadline=deadline)
        with self.path.open("a", encoding="utf-8") as out:
            for continuation, logprob, tokens in zip(continuations, scores.logprobs, scores.tokens, strict=True):
                record = {
                    "key": score_key(prompt, continuation),
                    "continuation": continuation,
                    "response": {"logprob": logprob, "tokens": tokens},
                }
                out.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")
        return scores


class ScorePlayer:
    """Replays recorded scores; a continuation never scored after its prompt is :class:`UnrecordedRequest`."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._scores: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                self._scores[record["key"]] = {"logprob": float(record["response"]["logprob"]), **record["response"]}
            except (ValueError, KeyError, TypeError) as exc:
                raise CassetteError(self.path, number, f"not a score record: {exc}") from exc

    def score(self, prompt: str, continuations: Sequence[str], *, deadline: Deadline) -> Scores:
        found = []
        for continuation in continuations:
            key = score_key(prompt, continuation)
            if key not in self._scores:
                raise UnrecordedRequest(self.path, key, continuation)
            found.append(self._scores[key])
        return Scores(
            logprobs=tuple(s["logprob"] for s in found),
            tokens=tuple(int(s["tokens"]) for s in found),
            usage=Usage(),
            seconds=0.0,
        )
