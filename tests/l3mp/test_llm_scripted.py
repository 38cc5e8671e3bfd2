"""ScriptedModel: the test double every pipeline test uses."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from l3mp.llm import (
    InvalidMessage,
    LanguageModel,
    LLMError,
    MalformedOutput,
    Message,
    ModelUnavailable,
    ScriptedModel,
    ScriptExhausted,
)

SCHEMA = {"type": "object"}
HELLO = [Message("user", "hello")]


def test_replies_in_order_and_records_calls() -> None:
    model = ScriptedModel(["plain", {"add": ["(on a b)"]}])
    assert isinstance(model, LanguageModel)
    first = model.complete(HELLO)
    second = model.complete(HELLO, schema=SCHEMA, name="edits")
    assert (first.text, first.data) == ("plain", None)
    assert second.text == '{"add": ["(on a b)"]}'
    assert second.data == {"add": ["(on a b)"]}
    assert second.usage.prompt_tokens >= 1 and second.model == "scripted"
    assert [(c.messages, c.schema, c.name) for c in model.calls] == [
        (tuple(HELLO), None, "response"),
        (tuple(HELLO), SCHEMA, "edits"),
    ]
    assert model.remaining == 0


def test_exceptions_are_raised() -> None:
    down = ModelUnavailable("http://x", "m", "down")
    model = ScriptedModel([down, "ok"])
    with pytest.raises(ModelUnavailable) as caught:
        model.complete(HELLO)
    assert caught.value is down
    assert model.complete(HELLO).text == "ok"


def test_callables_see_the_messages() -> None:
    def echo(messages: Sequence[Message]) -> dict[str, str]:
        return {"echo": messages[-1].content}

    assert ScriptedModel([echo]).complete(HELLO, schema=SCHEMA).data == {"echo": "hello"}


def test_non_json_with_a_schema_is_malformed_like_a_real_backend() -> None:
    model = ScriptedModel(["not json", '```json\n{"a": 1}\n```', "[1]"])
    with pytest.raises(MalformedOutput) as caught:
        model.complete(HELLO, schema=SCHEMA)
    assert caught.value.text == "not json"
    assert model.complete(HELLO, schema=SCHEMA).data == {"a": 1}
    with pytest.raises(MalformedOutput, match="expected a JSON object"):
        model.complete(HELLO, schema=SCHEMA)


def test_running_out_of_script_fails_clearly() -> None:
    model = ScriptedModel(["only"])
    model.complete(HELLO)
    with pytest.raises(ScriptExhausted, match=r"ran out of replies after 1 call.*hello") as caught:
        model.complete(HELLO)
    assert isinstance(caught.value, LLMError)
    assert len(model.calls) == 2


@pytest.mark.parametrize(("role", "content"), [("robot", "hi"), ("user", 3)])
def test_message_validation_runs(role: object, content: object) -> None:
    with pytest.raises(InvalidMessage):
        Message(role, content)  # type: ignore[arg-type]


def test_message_is_frozen() -> None:
    with pytest.raises(AttributeError):
        HELLO[0].content = "changed"  # type: ignore[misc]
