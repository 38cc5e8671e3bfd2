"""The language work of a report or a plan on the MCP client's own model (sampling).

Each model call of the configured pipeline (its prompts, its response schema) becomes one sampling
request; sampling has no schema field, so the schema is written into the system prompt and the reply
is parsed as the OpenAI client parses one (:func:`l3mp.llm.parse_json`). The completion names the
client's model (``mcp-client:<client>/<model>``), which the pipelines record in the update's meta.

Two protocol eras, two ways to ask:

* handshake era (2025-11-25 and older): :class:`ForwardedModel` sends each call to the client while
  the tool runs; the pipeline runs in a model slot's thread, so each call hops back to the event loop.
* 2026-07-28: a tool cannot ask mid-call; it answers ``input_required`` and the client retries with
  the answer. :class:`ReplayedModel` replays the answers gathered so far and stops the pipeline at the
  first call it has no answer for (:class:`NeedsSample`); the tool returns that call as the round's
  request and the answers so far in the (sealed) request state. Nothing is written before the last
  round: a pipeline records its update only once it has every answer it asked for.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import mcp.types as types
from pydantic import BaseModel, ValidationError

from l3mp.llm import Completion, MalformedOutput, Message, ModelUnavailable, Usage, parse_json

CLIENT_MODEL = "mcp-client"  # the prefix of the model name an update records
REQUEST_KEY = "l3mp-sample"  # the one sampling request of a 2026-07-28 round

Ask = Callable[[types.CreateMessageRequestParams, float], Coroutine[Any, Any, Any]]


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplingCall:
    """One model call as a sampling request, and a digest that tells it from any other call."""

    params: types.CreateMessageRequestParams
    schema: Mapping[str, Any] | None
    digest: str

    @property
    def prompt_chars(self) -> int:
        text = self.params.system_prompt or ""
        return len(text) + sum(len(_text(m.content)) for m in self.params.messages)


def render(
    messages: Sequence[Message], *, schema: Mapping[str, Any] | None, name: str, max_tokens: int
) -> SamplingCall:
    """The pipeline's conversation as a sampling request: system messages (and the schema) as the
    system prompt, the rest as the conversation."""
    system = [m.content for m in messages if m.role == "system"]
    if schema is not None:
        system.append(
            f"Reply with a single JSON value named {name!r} that conforms to this JSON schema, "
            f"and nothing else (no prose, no code fences):\n{json.dumps(schema, sort_keys=True)}"
        )
    chat = [
        types.SamplingMessage(role=m.role, content=types.TextContent(type="text", text=m.content))
        for m in messages
        if m.role != "system"
    ]
    params = types.CreateMessageRequestParams(
        messages=chat, max_tokens=max_tokens, system_prompt="\n\n".join(system) or None
    )
    rendered = params.model_dump_json(by_alias=True, exclude_none=True)
    return SamplingCall(params=params, schema=schema, digest=hashlib.sha256(rendered.encode()).hexdigest()[:32])


def model_name(client: str, model: str) -> str:
    return f"{CLIENT_MODEL}:{client}/{model}" if model else f"{CLIENT_MODEL}:{client}"


def reply_text(result: Any) -> str:
    """The text of a client's sampling answer (one text block, or several joined)."""
    content = getattr(result, "content", None)
    blocks = content if isinstance(content, list) else [content]
    texts = [b.text for b in blocks if isinstance(b, types.TextContent)]
    if not texts:
        kinds = ", ".join(sorted({type(b).__name__ for b in blocks}))
        raise MalformedOutput("", f"the client's model answered with {kinds or 'nothing'}, not text")
    return "".join(texts)


def completion(call: SamplingCall, text: str, model: str) -> Completion:
    """A reply as the pipelines take it: the JSON parsed when a schema was asked for."""
    usage = Usage(call.prompt_chars // 4, len(text) // 4, estimated=True)
    if call.schema is None:
        return Completion(text=text, data=None, usage=usage, model=model)
    try:
        data = parse_json(text, call.schema)
    except MalformedOutput as exc:
        raise MalformedOutput(exc.text, exc.problem, usage, model) from None
    return Completion(text=text, data=data, usage=usage, model=model)


# -- the handshake era: ask while the tool runs ----------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ForwardedModel:
    """A :class:`~l3mp.llm.LanguageModel` whose calls are the MCP client's sampling requests.

    Called from a model slot's thread: each call is run on ``loop`` (where the session lives) and
    waited for, within the call's timeout."""

    ask: Ask
    loop: asyncio.AbstractEventLoop
    client: str
    max_tokens: int
    timeout: float  # a call's longest wait when the pipeline gives none

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        call = render(messages, schema=schema, name=name, max_tokens=self.max_tokens)
        wait = self.timeout if timeout is None else max(0.0, min(timeout, self.timeout))
        future: concurrent.futures.Future[Any] = asyncio.run_coroutine_threadsafe(
            self.ask(call.params, wait), self.loop
        )
        try:
            result = future.result(wait)
        except concurrent.futures.TimeoutError:
            future.cancel()
            cause = f"no answer within {wait:g} s"
            raise ModelUnavailable(CLIENT_MODEL, self.client, cause, timed_out=True) from None
        except (MalformedOutput, ModelUnavailable):
            raise
        except Exception as exc:  # the session's errors: the client refused, or went away
            raise ModelUnavailable(CLIENT_MODEL, self.client, str(exc) or type(exc).__name__) from exc
        return completion(call, reply_text(result), model_name(self.client, getattr(result, "model", "")))


# -- 2026-07-28: one answer a round ----------------------------------------------------------------


class NeedsSample(Exception):
    """The pipeline reached a call no answer is known for: ``call`` is the next round's request.

    Deliberately not an :class:`~l3mp.llm.LLMError`: no pipeline may catch it and go on."""

    def __init__(self, call: SamplingCall, index: int) -> None:
        self.call = call
        self.index = index
        super().__init__(f"model call {index} needs the client's answer")


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """A call's answer, pinned to the call (``digest``) it answered."""

    digest: str
    text: str
    model: str


class _Asked(BaseModel):
    digest: str
    index: int


class RoundState(BaseModel):
    """What one round hands the next (inside the SDK's sealed request state)."""

    answers: list[dict[str, str]] = []
    asked: _Asked | None = None

    @classmethod
    def decode(cls, text: str | None) -> RoundState:
        if not text:
            return cls()
        try:
            return cls.model_validate_json(text)
        except ValidationError:  # another version's state: start again
            return cls()

    def gathered(self, responses: Mapping[str, Any] | None, client: str) -> list[Answer]:
        """The answers so far, with the client's answer to the question asked last round."""
        answers = [Answer(**a) for a in self.answers]
        response = (responses or {}).get(REQUEST_KEY)
        if self.asked is None or response is None:
            return answers
        reply = Answer(
            digest=self.asked.digest,
            text=reply_text(response),
            model=model_name(client, getattr(response, "model", "") or ""),
        )
        return [*answers[: self.asked.index], reply]


def next_round(answers: Sequence[Answer], pending: NeedsSample) -> types.InputRequiredResult:
    """Ask the client for ``pending``'s call; the answers before it ride along."""
    state = RoundState(
        answers=[asdict(a) for a in answers[: pending.index]],
        asked=_Asked(digest=pending.call.digest, index=pending.index),
    )
    request = types.CreateMessageRequest(params=pending.call.params)
    return types.InputRequiredResult(input_requests={REQUEST_KEY: request}, request_state=state.model_dump_json())


class ReplayedModel:
    """The answers of earlier rounds, in order; the first call without one stops the pipeline."""

    def __init__(self, answers: Sequence[Answer], *, max_tokens: int) -> None:
        self.answers = tuple(answers)
        self.max_tokens = max_tokens
        self._calls = 0

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        call = render(messages, schema=schema, name=name, max_tokens=self.max_tokens)
        index = self._calls
        self._calls += 1
        # an answer counts only for the very call it answered: a memory changed between rounds
        # gives other prompts, and the calls from there on are asked again
        if index < len(self.answers) and self.answers[index].digest == call.digest:
            answer = self.answers[index]
            return completion(call, answer.text, answer.model)
        raise NeedsSample(call, index)


def _text(content: Any) -> str:
    return content.text if isinstance(content, types.TextContent) else ""
