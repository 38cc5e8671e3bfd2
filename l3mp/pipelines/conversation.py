"""One prompt's conversation with a language model: ask, read the answer, feed back what was wrong.

Shared by the update and planning pipelines, which differ only in how they check an answer. Model
time and tokens are added up here, so a pipeline can report its own overhead without the model's
latency.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from l3mp.llm.base import Deadline, DeadlinePassed, LanguageModel, MalformedOutput, Message, ModelUnavailable, Usage
from l3mp.pipelines.errors import AnswerProblem
from l3mp.prompts import follow_up

T = TypeVar("T")
# A previous answer is echoed into a re-prompt at most this long: a huge reply is never sent back whole.
ECHO_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class Reply:
    """One answer: its text, and its JSON, or why there is none."""

    text: str
    data: Any | None
    problem: str | None = None


@dataclass(slots=True, kw_only=True)
class Exchange:
    model: LanguageModel
    messages: list[Message]
    schema: Mapping[str, Any]
    name: str
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0  # spent waiting for the model
    calls: int = 0
    model_name: str = ""
    deadline: Deadline | None = None  # the whole operation's, shared by its exchanges
    budget: float = 0.0  # its length in seconds, for the message when it passes
    what: str = "update"

    def ask(self) -> Reply:
        """The model's answer to the conversation so far; an answer without JSON is a reply too.

        Raises DeadlinePassed when the operation's deadline has passed (before or during the call),
        PromptTooLong and ModelUnavailable as the model does."""
        if self.deadline is not None and self.deadline.expired:
            raise DeadlinePassed(self.budget, self.what)
        start = time.perf_counter()
        self.calls += 1
        timeout = self.deadline.remaining() if self.deadline is not None else None
        try:
            completion = self.model.complete(self.messages, schema=self.schema, name=self.name, timeout=timeout)
        except MalformedOutput as exc:
            self.usage += exc.usage
            return Reply(exc.text, None, f"the answer was not the JSON asked for ({exc.problem})")
        except ModelUnavailable as exc:
            if self.deadline is not None and self.deadline.expired:
                raise DeadlinePassed(self.budget, self.what) from exc
            if exc.timed_out:  # reachable but slower than a call may take: an outcome, not an outage
                raise DeadlinePassed(time.perf_counter() - start, "model call") from exc
            raise
        finally:
            self.seconds += time.perf_counter() - start
        self.usage += completion.usage
        self.model_name = completion.model
        return Reply(completion.text, completion.data)

    def feedback(self, reply: Reply, problems: Sequence[str]) -> None:
        """Continue the conversation with the model's answer (cut to ECHO_CHARS) and what was wrong with it."""
        text = reply.text
        if len(text) > ECHO_CHARS:
            text = text[:ECHO_CHARS] + f" [... {len(text) - ECHO_CHARS:,} more characters cut]"
        self.messages = follow_up(self.messages, text, problems)

    def stats(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "model_seconds": round(self.seconds, 6),
            "model": self.model_name,
        }


@dataclass(frozen=True, slots=True)
class Parsed(Generic[T]):
    """The outcome of asking until an answer parses: the value, or the last problems."""

    value: T | None
    problems: tuple[str, ...] = ()
    reply: Reply | None = None


def ask_parsed(exchange: Exchange, parse: Callable[[Any], T], retries: int) -> Parsed[T]:
    """Ask, parse, and re-prompt with the parser's problems, up to ``retries`` times."""
    problems: tuple[str, ...] = ()
    reply: Reply | None = None
    for attempt in range(retries + 1):
        if attempt:
            assert reply is not None
            exchange.feedback(reply, problems)
        reply = exchange.ask()
        if reply.problem is not None:
            problems = (reply.problem,)
            continue
        try:
            return Parsed(parse(reply.data), (), reply)
        except AnswerProblem as exc:
            problems = exc.problems
    return Parsed(None, problems, reply)


@dataclass(frozen=True, slots=True)
class Wanted:
    """What a person's words should be, for the issue that says they are not: ``what`` they are
    and what ``to_say`` instead."""

    what: str
    to_say: str


UPDATE = Wanted("the update", "say what changed")
TASK = Wanted("the request", "say what the robot should do (or give a PDDL goal)")


def unusable(utterance: object, max_chars: int, wanted: Wanted = UPDATE) -> str | None:
    """Why ``utterance`` (an update or a request) is not worth a model call, or None."""
    what, to_say = wanted.what, wanted.to_say
    if not isinstance(utterance, str) or not utterance.strip():
        return f"{what} is empty: {to_say}"
    if len(utterance) > max_chars:
        return f"{what} is {len(utterance)} characters long; the limit is {max_chars}: {to_say}, briefly"
    words = [w for w in utterance.split() if sum(c.isalpha() for c in w) >= 2]
    if len(words) < 2 or sum(len(w) for w in words) < len(utterance.strip()) / 2:
        return f"{what} does not read as a sentence: {to_say}, in words"
    return None
