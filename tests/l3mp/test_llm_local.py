"""OpenAICompatibleModel against the real llama.cpp server with SmolLM2-135M (127.0.0.1 only).

Short prompts and small ``max_tokens`` keep these to seconds each on two busy cores. Nothing here
assumes how fast the machine is: races are decided by events (the server stops once the reply has
begun), retries are counted, and "the server stopped generating" is judged against the server's
own rate measured in the same test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from l3mp.llm import MalformedOutput, Message, ModelUnavailable, OpenAICompatibleModel, PromptTooLong, openai_client
from l3mp.llm.local import LocalServer, free_port, packaged_gguf

pytestmark = pytest.mark.slow

# The room is one of a few names: under the grammar the answer is complete within a few tokens,
# whatever spacing the model chooses (a free string may run on to the token limit unclosed).
SCHEMA = {
    "type": "object",
    "properties": {"room": {"type": "string", "enum": ["kitchen", "bedroom", "hall"]}},
    "required": ["room"],
    "additionalProperties": False,
}
ASK = [
    Message("system", "You answer in JSON."),
    Message("user", "The mug is in the kitchen. Which room is the mug in?"),
]
STORY = [Message("user", "Write a very long story about a robot who tidies a house, room by room.")]


def client(server: LocalServer, **options: object) -> OpenAICompatibleModel:
    defaults: dict[str, object] = {"max_tokens": 24, "timeout": 60.0, "max_retries": 0}
    return OpenAICompatibleModel(server.base_url, server.alias, **(defaults | options))  # type: ignore[arg-type]


def test_auto_steps_down_from_llama_cpps_500_to_json_mode_with_the_schema(local_server: LocalServer) -> None:
    model = client(local_server)
    completion = model.complete(ASK, schema=SCHEMA, name="answer")
    # llama-cpp-python answers HTTP 500 for json_schema; JSON mode with the schema is a grammar: always valid
    assert model.mode == "json_object_schema"
    assert isinstance(completion.data, dict) and isinstance(completion.data["room"], str)
    assert completion.usage.prompt_tokens > 0 and 0 < completion.usage.completion_tokens <= 24
    assert not completion.usage.estimated and completion.model == local_server.alias


@pytest.mark.parametrize("output", ["json_object", "none"])
def test_unconstrained_modes_end_as_a_completion_or_an_unusable_answer_with_its_tokens(
    local_server: LocalServer, output: str
) -> None:
    model = client(local_server, output=output)
    try:
        completion = model.complete(ASK, schema=SCHEMA, name="answer")
    except MalformedOutput as exc:  # a small model may well answer prose: still counted
        assert exc.usage.prompt_tokens > 0 and exc.usage.completion_tokens > 0
    else:
        assert completion.usage.prompt_tokens > 0
    sent = model._payload(ASK, SCHEMA, "answer", model.mode)
    assert sent.get("response_format") == ({"type": "json_object"} if output == "json_object" else None)


def counted(model: OpenAICompatibleModel, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The payloads ``model`` sends, one per HTTP request (retries included)."""
    sent: list[dict[str, Any]] = []
    request = model._request

    def counting(payload: dict[str, Any], deadline: Any) -> Any:
        sent.append(payload)
        return request(payload, deadline)

    monkeypatch.setattr(model, "_request", counting)
    return sent


def test_json_schema_insisted_on_is_unavailable_not_retried_forever(
    local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = client(local_server, output="json_schema", max_retries=3)
    sent = counted(model, monkeypatch)
    with pytest.raises(ModelUnavailable, match="HTTP 500"):
        model.complete(ASK, schema=SCHEMA)
    assert len(sent) == 1 and "response_format" in sent[0]  # a 500 naming response_format is not retried


def test_max_tokens_caps_the_reply(local_server: LocalServer) -> None:
    completion = client(local_server, max_tokens=5).complete(STORY)
    assert completion.usage.completion_tokens <= 5


def test_streamed_replies_count_their_tokens(local_server: LocalServer) -> None:
    completion = client(local_server, stream=True, max_tokens=24).complete(ASK, schema=SCHEMA)
    # llama.cpp does not report usage in a stream: counted here, and marked so
    assert completion.usage.estimated and completion.usage.prompt_tokens > 0
    assert completion.data is not None


def tokens_per_second(server: LocalServer) -> float:
    """The server's generation rate now, on this machine under whatever load it has."""
    start = time.monotonic()
    completion = client(server, max_tokens=64).complete(STORY)
    return completion.usage.completion_tokens / (time.monotonic() - start)


def test_a_runaway_generation_is_cut_at_the_deadline_and_the_server_stops(local_server: LocalServer) -> None:
    rate = tokens_per_second(local_server)
    runaway_tokens = 1800
    # the deadline ends the reply after about a tenth of it, however fast this machine generates
    deadline = runaway_tokens / rate / 10
    runaway = client(local_server, stream=True, max_tokens=runaway_tokens, timeout=deadline)
    with pytest.raises(ModelUnavailable, match="deadline") as cut:
        runaway.complete(STORY)
    assert cut.value.timed_out
    # the connection was closed, so the server stopped generating: the next request is not queued behind
    # the rest of the runaway reply (nine tenths of it, at the rate just measured) but answers at once
    rest_of_the_runaway = 0.9 * runaway_tokens / rate
    start = time.monotonic()
    client(local_server, max_tokens=4).complete(ASK)
    assert time.monotonic() - start < rest_of_the_runaway / 2


def test_a_prompt_over_the_context_is_prompt_too_long(local_server: LocalServer) -> None:
    long = [Message("user", "mug " * (local_server.ctx + 200))]
    with pytest.raises(PromptTooLong, match="context"):
        client(local_server).complete(long)


def stop_once_the_reply_begins(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> threading.Thread:
    """A thread that stops ``server`` as soon as a streamed reply's first bytes have come back."""
    replying = threading.Event()
    socket_of: Callable[[Any], Any] = openai_client._socket_of

    def noting_the_reply(response: Any) -> Any:
        replying.set()
        return socket_of(response)

    monkeypatch.setattr(openai_client, "_socket_of", noting_the_reply)
    stopper = threading.Thread(target=lambda: replying.wait(120) and server.stop(), daemon=True)
    stopper.start()
    return stopper


def test_a_server_stopped_mid_request_is_model_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    server = LocalServer(gguf=packaged_gguf(), port=free_port(), ctx=512).start(wait=180)
    try:
        model = client(server, stream=True, max_tokens=400, timeout=120.0)
        stopper = stop_once_the_reply_begins(server, monkeypatch)
        with pytest.raises(ModelUnavailable) as gone:
            model.complete(STORY)
            model.complete(STORY)  # if the first finished before the stop, the second meets a dead server
        stopper.join(120)
        assert not stopper.is_alive() and server.process is not None and server.process.poll() is not None
        assert not gone.value.timed_out  # the server went away: not a request that merely ran out of time
    finally:
        server.stop()
