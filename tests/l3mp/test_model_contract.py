"""The LanguageModel contract, run against every implementation (see model_backends.py): what
``complete`` returns, what it raises, how it counts tokens and how it keeps a deadline.

The pipelines rely on exactly this: a Completion whose ``data`` is the JSON asked for, read from its
``text``; MalformedOutput (with what the answer cost) when the answer holds none; an LLMError, never a
library's exception, when no answer can come; and a call ending by its ``timeout`` when it waits on a
server. Deadlines are decided by mechanism: a call with no time left, and a server that is stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from model_backends import BACKENDS, JSON, TEXT, WAITING, Backend, Case, LocalClient

from l3mp.llm import (
    Completion,
    LanguageModel,
    LLMError,
    MalformedOutput,
    Message,
    ModelUnavailable,
    PromptTooLong,
    parse_json,
)


def _params(names: tuple[str, ...]) -> list[Any]:
    # the real server takes a while to start and to answer: slow, like the other real-model tests
    return [pytest.param(n, marks=pytest.mark.slow) if n in WAITING else n for n in names]


def _backend(request: pytest.FixtureRequest, folder: Path) -> Iterator[Backend]:
    made = BACKENDS[request.param](folder, lambda: request.getfixturevalue("local_server"))
    yield made
    if isinstance(made, LocalClient):
        made.close()


@pytest.fixture(params=_params(tuple(BACKENDS)))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from _backend(request, tmp_path)


@pytest.fixture(params=_params(WAITING))
def waiting(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from _backend(request, tmp_path)


def answers_the_schema(data: object) -> bool:
    """``data`` is valid for model_backends.SCHEMA: an object of exactly one string, at most 60 long."""
    if not isinstance(data, dict) or set(data) != {"goal"}:
        return False
    return isinstance(data["goal"], str) and len(data["goal"]) <= 60


def test_it_is_a_language_model(backend: Backend) -> None:
    assert isinstance(backend.answering(JSON), LanguageModel)


def test_with_a_schema_the_answer_is_json_valid_for_it_read_from_the_text(backend: Backend) -> None:
    completion = JSON.ask(backend.answering(JSON))
    assert isinstance(completion, Completion) and isinstance(completion.text, str)
    assert answers_the_schema(completion.data), completion.text
    assert parse_json(completion.text, JSON.schema) == completion.data
    assert isinstance(completion.model, str) and completion.model


def test_without_a_schema_the_answer_is_text_and_no_data(backend: Backend) -> None:
    completion = TEXT.ask(backend.answering(TEXT))
    assert isinstance(completion.text, str) and completion.data is None
    assert completion.usage.prompt_tokens > 0 and completion.model


def test_usage_counts_the_tokens_of_both_sides_and_a_longer_prompt_costs_more(backend: Backend) -> None:
    model = backend.answering(JSON)
    first = JSON.ask(model)
    usage = first.usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    # the re-prompt a pipeline sends (the answer and its problems) is answered, and costs more to read
    again = model.complete(JSON.follow_up(first.text), schema=JSON.schema, name=JSON.name)
    assert answers_the_schema(again.data), again.text
    assert again.usage.prompt_tokens > usage.prompt_tokens


def test_an_answer_without_json_is_malformed_output_carrying_the_text_and_its_cost(backend: Backend) -> None:
    with pytest.raises(MalformedOutput) as caught:
        JSON.ask(backend.unusable(JSON))
    unusable = caught.value
    assert isinstance(unusable, LLMError) and isinstance(unusable.text, str) and unusable.problem
    assert unusable.usage.prompt_tokens > 0 and unusable.usage.completion_tokens > 0
    assert unusable.model  # which model spent them


def test_a_model_that_cannot_answer_raises_its_llm_error(backend: Backend) -> None:
    model, error = backend.unavailable(JSON)
    assert issubclass(error, LLMError)
    with pytest.raises(error):
        JSON.ask(model)


def test_the_callers_conversation_is_left_as_it_was(backend: Backend) -> None:
    messages = list(JSON.messages)
    backend.answering(JSON).complete(messages, schema=JSON.schema, name=JSON.name)
    assert messages == list(JSON.messages)


def test_no_time_left_never_waits_on_a_server(backend: Backend) -> None:
    model = backend.answering(JSON)
    if not backend.waits:  # nothing to wait on: the answer comes whatever the timeout
        assert answers_the_schema(JSON.ask(model, timeout=0.0).data)
        return
    with pytest.raises(ModelUnavailable) as caught:
        JSON.ask(model, timeout=0.0)
    assert caught.value.timed_out and caught.value.attempts == 0  # the caller's deadline, no request sent


def test_a_call_to_a_server_that_does_not_answer_ends_at_its_timeout(waiting: Backend) -> None:
    model = waiting.answering(TEXT)
    with waiting.frozen(), pytest.raises(ModelUnavailable) as caught:
        TEXT.ask(model, timeout=0.5)  # the server cannot answer: only the timeout can end this call
    assert caught.value.timed_out


def test_a_prompt_longer_than_the_servers_context_is_prompt_too_long(waiting: Backend) -> None:
    assert waiting.context is not None
    padding = Message("user", "mug " * (waiting.context + 200))
    long = Case(schema=None, reply="", messages=(padding, *TEXT.messages))
    with pytest.raises(PromptTooLong):
        long.ask(waiting.answering(long))
