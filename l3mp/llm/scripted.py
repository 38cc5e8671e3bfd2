"""A scripted language model for tests: replies in order, records the calls it receives."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from l3mp.llm._json import parse_json
from l3mp.llm.base import Completion, LLMError, MalformedOutput, Message, Usage

Reply = str | dict[str, Any]
Step = str | dict[str, Any] | BaseException | Callable[[Sequence[Message]], Reply]


class ScriptExhausted(LLMError):
    """The scripted model was called more often than its script allows."""

    def __init__(self, calls: int, messages: Sequence[Message]) -> None:
        self.calls = calls
        self.messages = tuple(messages)
        last = messages[-1].content[:120] if messages else ""
        super().__init__(f"scripted model ran out of replies after {calls} call(s); unexpected call ending {last!r}")


@dataclass(frozen=True, slots=True)
class Call:
    messages: tuple[Message, ...]
    schema: Mapping[str, Any] | None
    name: str


class ScriptedModel:
    """Returns the scripted replies in order.

    Each step is a string (the reply text), a dict (serialized to JSON), an exception (raised) or a
    callable given the messages and returning a string or dict. With a schema, the text is parsed like a
    real backend does, so a non-JSON step raises MalformedOutput. Usage counts characters / 4 per side.
    """

    def __init__(self, responses: Iterable[Step], *, model: str = "scripted") -> None:
        self._script: deque[Step] = deque(responses)
        self.model = model
        self.calls: list[Call] = []

    @property
    def remaining(self) -> int:
        return len(self._script)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        self.calls.append(Call(tuple(messages), schema, name))
        if not self._script:
            raise ScriptExhausted(len(self.calls) - 1, messages)
        step = self._script.popleft()
        if isinstance(step, BaseException):
            raise step
        reply = step(messages) if callable(step) else step
        text = reply if isinstance(reply, str) else json.dumps(reply)
        prompt_chars = sum(len(m.content) for m in messages)
        usage = Usage(prompt_chars // 4, len(text) // 4)
        try:
            data = parse_json(text, schema) if schema is not None else None
        except MalformedOutput as exc:  # an unusable reply spent its tokens too
            raise MalformedOutput(exc.text, exc.problem, usage, self.model) from None
        return Completion(text=text, data=data, usage=usage, model=self.model)
