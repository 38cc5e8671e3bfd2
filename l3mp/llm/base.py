"""The language-model protocol, its value types and its exceptions.

Model output that is malformed is an expected outcome for the update pipeline (it is fed back to the
model), but a backend asked for JSON that cannot find any raises :class:`MalformedOutput`; the pipeline
catches it. :class:`ModelUnavailable` is infrastructure: the endpoint could not answer.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from kg_memory.errors import L3mpError

Role = Literal["system", "user", "assistant"]
ROLES: tuple[str, ...] = get_args(Role)


class LLMError(L3mpError):
    """Root of the language-model layer's exceptions."""


class InvalidMessage(LLMError):
    """A message built from a bad role or content (misuse)."""

    def __init__(self, value: object, problem: str) -> None:
        self.value = value
        super().__init__(f"invalid message {value!r}: {problem}")


class ModelUnavailable(LLMError):
    """The endpoint could not answer (down, timing out, overloaded, refusing) after bounded retries."""

    def __init__(self, base_url: str, model: str, cause: str, attempts: int = 1, *, timed_out: bool = False) -> None:
        self.base_url = base_url
        self.model = model
        self.cause = cause
        self.attempts = attempts
        self.timed_out = timed_out  # reachable but too slow: the caller's deadline, not an outage
        super().__init__(f"model {model!r} at {base_url} unavailable after {attempts} attempt(s): {cause}")


class PromptTooLong(LLMError):
    """The server refused the prompt as longer than its context window: an answer no retry can change.

    The pipelines record it as a rejected update (or a plan's issue) with this reason."""

    def __init__(self, base_url: str, model: str, cause: str) -> None:
        self.base_url = base_url
        self.model = model
        self.cause = cause
        super().__init__(f"the prompt is longer than the context of model {model!r} at {base_url}: {cause}")


class DeadlinePassed(LLMError):
    """An operation's total time budget ran out (raised by the pipelines between and during model calls);
    the pipelines turn it into a recorded outcome."""

    def __init__(self, seconds: float, what: str = "operation") -> None:
        self.seconds = seconds
        self.what = what
        super().__init__(f"the {what}'s deadline of {seconds:g} s passed")


class MalformedOutput(LLMError):
    """JSON was requested but the reply holds none, or JSON of the wrong shape; carries the raw text
    and what the reply cost (a reply that cannot be used still spent tokens)."""

    def __init__(self, text: str, problem: str, usage: Usage | None = None, model: str = "") -> None:
        self.text = text
        self.problem = problem
        self.usage = usage if usage is not None else Usage()
        self.model = model
        excerpt = text if len(text) <= 200 else text[:200] + "..."
        super().__init__(f"malformed model output ({problem}): {excerpt!r}")


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InvalidMessage(self.role, f"role must be one of {', '.join(ROLES)}")
        if not isinstance(self.content, str):
            raise InvalidMessage(self.content, "content must be a string")

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens spent; ``estimated`` when a server did not report them and they were counted here."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.estimated or other.estimated,
        )


@dataclass(frozen=True, slots=True)
class Deadline:
    """One total time budget for an operation (an update, a plan request, a model call), on the
    monotonic clock: every step asks what is left instead of holding its own timeout."""

    at: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.at


@dataclass(frozen=True, slots=True)
class Completion:
    """A reply: its text, the parsed JSON when a schema was requested (else None), tokens and model."""

    text: str
    data: Any | None
    usage: Usage
    model: str


@runtime_checkable
class LanguageModel(Protocol):
    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        """Answer the conversation; with a JSON schema, return its parsed JSON in ``Completion.data``.

        ``timeout`` is what is left of the caller's deadline, in seconds: a backend that waits on a
        server ends the call by then (retries included). Raises MalformedOutput when JSON was requested
        and none could be parsed, PromptTooLong when the server refuses the prompt's length, and
        ModelUnavailable when the endpoint could not answer in time.
        """
        ...
