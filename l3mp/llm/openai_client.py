"""A language model behind any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp).

Structured output degrades per client instance: ``json_schema`` → ``json_object`` → plain text with the
schema in the system prompt, each step taken when the server rejects the previous ``response_format``.
Retries (exponential backoff with jitter, bounded) cover rate limits, 5xx, connection errors and
timeouts; everything else the SDK raises becomes :class:`ModelUnavailable` at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import openai

from l3mp.llm._json import parse_json, schema_instruction
from l3mp.llm.base import Completion, LLMError, Message, ModelUnavailable, Usage

Mode = Literal["json_schema", "json_object", "prompt"]
_NEXT_MODE: dict[Mode, Mode] = {"json_schema": "json_object", "json_object": "prompt"}
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format", "grammar")


class OpenAICompatibleModel:
    """``structured``: None tries json_schema and falls back; True insists on json_schema (a server that
    rejects it is a ModelUnavailable); False never sends a response_format (schema in the prompt)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 60.0,
        max_retries: int = 3,
        structured: bool | None = None,
        *,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        temperature: float | None = 0.0,
    ) -> None:
        if max_retries < 0 or timeout <= 0 or backoff < 0:
            raise LLMError(
                f"bad client limits: max_retries={max_retries} (>= 0), timeout={timeout} (> 0), "
                f"backoff={backoff} (>= 0)"
            )
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.structured = structured
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.temperature = temperature
        self.mode: Mode = "prompt" if structured is False else "json_schema"
        self._random = random.Random()
        # Local servers ignore the key but the SDK needs a non-empty one.
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout, max_retries=0)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatibleModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel(base_url={self.base_url!r}, model={self.model!r}, mode={self.mode!r})"

    def complete(
        self, messages: Sequence[Message], *, schema: Mapping[str, Any] | None = None, name: str = "response"
    ) -> Completion:
        while True:
            mode = self.mode if schema is not None else None
            try:
                response = self._with_retries(self._payload(messages, schema, name, mode))
            except openai.APIStatusError as exc:
                if mode is not None and self._falls_back(mode, exc):
                    continue
                raise self._unavailable(exc, 1) from exc
            return self._completion(response, schema)

    def _payload(
        self, messages: Sequence[Message], schema: Mapping[str, Any] | None, name: str, mode: Mode | None
    ) -> dict[str, Any]:
        sent = [m.to_dict() for m in messages]
        payload: dict[str, Any] = {"model": self.model, "messages": sent}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if schema is None or mode is None:
            return payload
        if mode == "json_schema":
            json_schema = {"name": name, "schema": dict(schema), "strict": True}
            payload["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        else:
            sent.insert(0, {"role": "system", "content": schema_instruction(schema, name)})
            if mode == "json_object":
                payload["response_format"] = {"type": "json_object"}
        return payload

    def _falls_back(self, mode: Mode, exc: openai.APIStatusError) -> bool:
        """Step down one structured-output mode if ``exc`` is the server rejecting ``response_format``."""
        if exc.status_code not in (400, 422) or self.structured is True or mode not in _NEXT_MODE:
            return False
        text = f"{exc.message} {exc.body}".lower()
        if not any(word in text for word in _FORMAT_WORDS):
            return False
        self.mode = _NEXT_MODE[mode]
        return True

    def _with_retries(self, payload: dict[str, Any]) -> Any:
        """One request, retried on 408/429/5xx, connection errors and timeouts; other 4xx propagate raw."""
        last: openai.OpenAIError | None = None
        for attempt in range(self.max_retries + 1):
            if last is not None:
                time.sleep(self._delay(attempt - 1, last))
            try:
                return self._client.chat.completions.create(**payload)
            except openai.APIStatusError as exc:
                if exc.status_code not in (408, 429) and exc.status_code < 500:
                    raise
                last = exc
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                last = exc
            except openai.OpenAIError as exc:
                raise self._unavailable(exc, attempt + 1) from exc
        assert last is not None
        raise self._unavailable(last, self.max_retries + 1) from last

    def _delay(self, attempt: int, exc: openai.OpenAIError) -> float:
        ceiling = min(self.max_backoff, self.backoff * 2**attempt)
        delay = ceiling / 2 + self._random.uniform(0, ceiling / 2)
        header = exc.response.headers.get("retry-after") if isinstance(exc, openai.APIStatusError) else None
        retry_after = _seconds(header)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return float(min(delay, self.max_backoff))

    def _unavailable(self, exc: openai.OpenAIError, attempts: int) -> ModelUnavailable:
        if isinstance(exc, openai.APIStatusError):
            cause = f"HTTP {exc.status_code}: {exc.message}"
        else:
            cause = f"{type(exc).__name__}: {exc}"
        return ModelUnavailable(self.base_url, self.model, cause, attempts)

    def _completion(self, response: Any, schema: Mapping[str, Any] | None) -> Completion:
        choices = getattr(response, "choices", None) or []
        text = (choices[0].message.content or "") if choices else ""
        usage = getattr(response, "usage", None)
        tokens = Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage is not None else Usage()
        data = parse_json(text, schema) if schema is not None else None
        return Completion(text=text, data=data, usage=tokens, model=getattr(response, "model", None) or self.model)


def _seconds(header: object) -> float | None:
    """A numeric Retry-After header in seconds (HTTP dates are ignored)."""
    try:
        return float(str(header)) if header is not None else None
    except ValueError:
        return None
