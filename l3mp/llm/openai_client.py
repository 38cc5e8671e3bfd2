"""A language model behind any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp).

Output constraints (``output``): ``json_schema`` (OpenAI, vLLM), ``json_object_schema`` (JSON mode with
the schema, which llama.cpp turns into a grammar), ``json_object`` (plain JSON mode), ``none`` (the
schema in the system prompt only), or ``auto``: try them in that order, stepping down when the server
rejects a ``response_format`` (with a 400, a 422, or a 500 as llama-cpp-python answers).

Every call has one total deadline (``timeout``, or less when the caller's deadline is nearer), retries
included: the request runs on a worker thread, and when time is up the connection is shut down and
the caller gets :class:`ModelUnavailable` at once, whatever the server is doing (stalling, trickling).
With ``stream`` the reply is read as it is generated, so closing the connection stops a runaway
generation on the server (llama.cpp keeps generating for a client that left a non-streamed request).
Output is capped in tokens (``max_tokens``) and in characters (``max_reply_chars``).
"""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import openai

from l3mp.llm._json import MAX_REPLY_CHARS, parse_json, schema_instruction
from l3mp.llm.base import (
    Completion,
    Deadline,
    LLMError,
    MalformedOutput,
    Message,
    ModelUnavailable,
    PromptTooLong,
    Usage,
)

Mode = Literal["json_schema", "json_object_schema", "json_object", "none"]
Output = Literal["auto", "json_schema", "json_object_schema", "json_object", "none"]
OUTPUTS: tuple[str, ...] = ("auto", "json_schema", "json_object_schema", "json_object", "none")
_NEXT_MODE: dict[Mode, Mode] = {
    "json_schema": "json_object_schema",
    "json_object_schema": "json_object",
    "json_object": "none",
}
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format", "grammar")
# How servers say a prompt does not fit: OpenAI, vLLM, llama.cpp (both servers), Ollama.
_CONTEXT_WORDS = ("context length", "context window", "maximum context", "exceed", "too many tokens", "n_ctx")


@dataclass(slots=True, kw_only=True)
class _Call:
    """One request on its worker thread: what it produced, and the socket to shut when time is up."""

    result: Any = None
    error: BaseException | None = None
    sock: socket.socket | None = None
    cancelled: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self.cancelled = True
        if self.sock is not None:
            with contextlib.suppress(OSError):  # shutdown (not close) wakes a read blocked on another thread
                self.sock.shutdown(socket.SHUT_RDWR)


class OpenAICompatibleModel:
    """``structured`` (older switch, kept): None is ``output="auto"``, True ``"json_schema"`` (a server that
    rejects it is a ModelUnavailable), False ``"none"``. ``output`` wins when given."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 60.0,
        max_retries: int = 3,
        structured: bool | None = None,
        *,
        output: Output | None = None,
        max_tokens: int | None = None,
        max_reply_chars: int = MAX_REPLY_CHARS,
        stream: bool = False,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        temperature: float | None = 0.0,
    ) -> None:
        if max_retries < 0 or timeout <= 0 or backoff < 0 or (max_tokens is not None and max_tokens < 1):
            raise LLMError(
                f"bad client limits: max_retries={max_retries} (>= 0), timeout={timeout} (> 0), "
                f"backoff={backoff} (>= 0), max_tokens={max_tokens} (>= 1 or None)"
            )
        if output is None:
            output = "auto" if structured is None else ("json_schema" if structured else "none")
        if output not in OUTPUTS:
            raise LLMError(f"bad output mode {output!r}: use one of {', '.join(OUTPUTS)}")
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.output: Output = output
        self.max_tokens = max_tokens
        self.max_reply_chars = max_reply_chars
        self.stream = stream
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.temperature = temperature
        self.mode: Mode = "json_schema" if output == "auto" else output
        self._random = random.Random()
        # Local servers ignore the key but the SDK needs a non-empty one.
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout, max_retries=0)
        # The SDK imports its chat resources (and builds their pydantic models) on first use: here,
        # once, rather than inside the first request (a service's first burst held the GIL ~0.2 s).
        _ = self._client.chat.completions

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatibleModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OpenAICompatibleModel(base_url={self.base_url!r}, model={self.model!r}, mode={self.mode!r})"

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        deadline = Deadline.after(self.timeout if timeout is None else max(0.0, min(timeout, self.timeout)))
        while True:
            mode = self.mode if schema is not None else None
            try:
                text, usage, model = self._with_retries(self._payload(messages, schema, name, mode), deadline)
            except openai.APIStatusError as exc:
                if mode is not None and self._falls_back(mode, exc):
                    continue
                if exc.status_code == 400 and _says(exc, _CONTEXT_WORDS):
                    raise PromptTooLong(self.base_url, self.model, _cause(exc)) from exc
                raise self._unavailable(exc, 1) from exc
            if usage is None:  # the server did not say: count them here
                usage = _estimate(messages, text)
            if schema is None:
                return Completion(text=text, data=None, usage=usage, model=model)
            try:
                data = parse_json(text, schema, max_chars=self.max_reply_chars)
            except MalformedOutput as exc:
                raise MalformedOutput(exc.text, exc.problem, usage, model) from None
            return Completion(text=text, data=data, usage=usage, model=model)

    def _payload(
        self, messages: Sequence[Message], schema: Mapping[str, Any] | None, name: str, mode: Mode | None
    ) -> dict[str, Any]:
        sent = [m.to_dict() for m in messages]
        payload: dict[str, Any] = {"model": self.model, "messages": sent}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        if self.stream:
            payload["stream"] = True
            payload["stream_options"] = {"include_usage": True}
        if schema is None or mode is None:
            return payload
        if mode == "json_schema":
            json_schema = {"name": name, "schema": dict(schema), "strict": True}
            payload["response_format"] = {"type": "json_schema", "json_schema": json_schema}
            return payload
        _add_instruction(sent, schema_instruction(schema, name))
        if mode == "json_object_schema":
            payload["response_format"] = {"type": "json_object", "schema": dict(schema)}
        elif mode == "json_object":
            payload["response_format"] = {"type": "json_object"}
        return payload

    def _falls_back(self, mode: Mode, exc: openai.APIStatusError) -> bool:
        """Step down one output mode if ``exc`` is the server rejecting ``response_format``."""
        if exc.status_code not in (400, 422, 500) or self.output != "auto" or mode not in _NEXT_MODE:
            return False
        if not _says(exc, _FORMAT_WORDS):
            return False
        self.mode = _NEXT_MODE[mode]
        return True

    def _with_retries(self, payload: dict[str, Any], deadline: Deadline) -> tuple[str, Usage | None, str]:
        """One request, retried on 408/429/5xx (a 5xx naming response_format is not retried: it is the
        fallback's), connection errors and timeouts, while the deadline allows; other 4xx propagate raw."""
        last: BaseException | None = None
        for attempt in range(self.max_retries + 1):
            if last is not None:
                delay = self._delay(attempt - 1, last)
                if delay >= deadline.remaining():
                    break
                time.sleep(delay)
            if deadline.expired:
                break
            try:
                return self._request(payload, deadline)
            except openai.APIStatusError as exc:
                if exc.status_code not in (408, 429) and exc.status_code < 500:
                    raise
                if "response_format" in payload and _says(exc, _FORMAT_WORDS):
                    raise
                last = exc
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                last = exc
            except openai.OpenAIError as exc:
                raise self._unavailable(exc, attempt + 1) from exc
        if last is None:
            # the caller's deadline, not an outage: no request was sent
            raise ModelUnavailable(self.base_url, self.model, "no time left for the request", 0, timed_out=True)
        timed_out = deadline.expired or isinstance(last, openai.APITimeoutError)
        cause = last if not deadline.expired else TimeoutError(f"the call's deadline of {self.timeout:g} s passed")
        unavailable = self._unavailable(cause, attempt + 1)
        unavailable.timed_out = timed_out
        raise unavailable from last

    def _delay(self, attempt: int, exc: BaseException) -> float:
        ceiling = min(self.max_backoff, self.backoff * 2**attempt)
        delay = ceiling / 2 + self._random.uniform(0, ceiling / 2)
        header = exc.response.headers.get("retry-after") if isinstance(exc, openai.APIStatusError) else None
        retry_after = _seconds(header)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return float(min(delay, self.max_backoff))

    def _unavailable(self, exc: BaseException, attempts: int) -> ModelUnavailable:
        return ModelUnavailable(self.base_url, self.model, _cause(exc), attempts)

    def _request(self, payload: dict[str, Any], deadline: Deadline) -> tuple[str, Usage | None, str]:
        """Run the request on a worker thread and wait for it no longer than the deadline."""
        call = _Call()
        worker = threading.Thread(target=self._run, args=(payload, deadline, call), daemon=True)
        worker.start()
        if not call.done.wait(deadline.remaining()):
            call.cancel()
            raise openai.APITimeoutError(request=_request_stub(self.base_url))
        if call.error is not None:
            raise call.error
        result: tuple[str, Usage | None, str] = call.result
        return result

    def _run(self, payload: dict[str, Any], deadline: Deadline, call: _Call) -> None:
        try:
            timeout = max(0.05, deadline.remaining())
            if self.stream:
                call.result = self._read_stream(payload, timeout, call)
            else:
                response = self._client.chat.completions.create(**payload, timeout=timeout)
                call.result = _reply(response, self.model)
        except openai.OpenAIError as exc:
            call.error = exc
        except Exception as exc:  # a 200 whose body is not JSON, a broken stream: the server's fault
            message = f"unreadable response: {type(exc).__name__}: {str(exc)[:300]}"
            call.error = openai.APIConnectionError(message=message, request=_request_stub(self.base_url))
        finally:
            call.done.set()

    def _read_stream(self, payload: dict[str, Any], timeout: float, call: _Call) -> tuple[str, Usage | None, str]:
        parts: list[str] = []
        size = chunks = 0
        usage: Usage | None = None
        model = self.model
        with self._client.chat.completions.create(**payload, timeout=timeout) as stream:
            call.sock = _socket_of(stream.response)
            if call.cancelled:
                call.cancel()
            for chunk in stream:
                model = getattr(chunk, "model", None) or model
                if getattr(chunk, "usage", None) is not None:
                    usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                for choice in chunk.choices or ():
                    piece = getattr(choice.delta, "content", None) or ""
                    parts.append(piece)
                    size += len(piece)
                    chunks += 1 if piece else 0
                if size > self.max_reply_chars:
                    break  # leaving the block closes the connection: the server stops generating
        text = "".join(parts)
        return text, usage, model


def _add_instruction(sent: list[dict[str, str]], instruction: str) -> None:
    """Append the schema paragraph to the first system message (or lead with it when there is none).

    After the prompt's own text, so the prompt's static prefix stays first and byte-identical across
    its requests: a server reusing the longest cached prefix then shares it between prompt kinds that
    start alike. Merged rather than a second system message: several chat formats read only the first."""
    if sent and sent[0]["role"] == "system":
        sent[0] = {"role": "system", "content": f"{sent[0]['content']}\n\n{instruction}"}
    else:
        sent.insert(0, {"role": "system", "content": instruction})


def _reply(response: Any, model: str) -> tuple[str, Usage | None, str]:
    choices = getattr(response, "choices", None) or []
    text = (choices[0].message.content or "") if choices else ""
    usage = getattr(response, "usage", None)
    tokens = Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage is not None else None
    return text, tokens, getattr(response, "model", None) or model


def _estimate(messages: Sequence[Message], text: str) -> Usage:
    """Tokens counted here (OpenAI's cl100k encoding) for a server that reports none."""
    from retrieval.context import count_tokens

    prompt = sum(count_tokens(m.content) + 4 for m in messages)
    return Usage(prompt, count_tokens(text), estimated=True)


def _socket_of(response: Any) -> socket.socket | None:
    stream = getattr(response, "extensions", {}).get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    return sock if isinstance(sock, socket.socket) else None


def _request_stub(base_url: str) -> Any:
    # the SDK's own HTTP package (already loaded by it; plain httpx would be a first import, with
    # rich and pygments, inside a timed-out request)
    import httpx2

    return httpx2.Request("POST", base_url.rstrip("/") + "/chat/completions")


def _says(exc: openai.APIStatusError, words: Sequence[str]) -> bool:
    text = f"{exc.message} {exc.body}".lower()
    return any(word in text for word in words)


def _cause(exc: BaseException) -> str:
    if isinstance(exc, openai.APIStatusError):
        message = exc.message if len(exc.message) <= 300 else exc.message[:300] + "..."
        return f"HTTP {exc.status_code}: {message}"
    text = str(exc)
    return f"{type(exc).__name__}: {text if len(text) <= 300 else text[:300] + '...'}"


def _seconds(header: object) -> float | None:
    """A numeric Retry-After header in seconds (HTTP dates are ignored)."""
    try:
        return float(str(header)) if header is not None else None
    except ValueError:
        return None
