"""OpenAICompatibleModel against a scripted fake OpenAI-compatible server on 127.0.0.1 (no network)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest
from pydantic import SecretStr

from l3mp.llm import (
    LanguageModel,
    LLMError,
    MalformedOutput,
    Message,
    ModelUnavailable,
    OpenAICompatibleModel,
    PromptTooLong,
    Usage,
)
from l3mp.llm._json import schema_instruction
from l3mp.settings import Settings
from l3mp.wiring import configured_model

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
ASK = [Message("system", "You add numbers."), Message("user", "What is 2 + 2?")]


@dataclass(kw_only=True)
class Reply:
    status: int = 200
    content: str | None = '{"answer": 4}'
    body: dict[str, Any] | None = None  # replaces the whole response body when given
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    usage: bool = True


def chat_body(content: str | None, usage: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model-2024",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    return body


def error_body(message: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.stopping = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:  # quiet: clients may hang up on timeouts
        pass


class _Handler(BaseHTTPRequestHandler):
    server: FakeServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        payload = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append({"path": self.path, "json": payload})
        if self.path != "/v1/chat/completions":
            reply = Reply(status=404, body=error_body(f"no route {self.path}"))
        elif self.server.script:
            reply = self.server.script.popleft()
        else:
            reply = Reply(status=500, body=error_body("fake server: script exhausted"))
        if reply.delay and self.server.stopping.wait(reply.delay):
            return
        body = reply.body if reply.body is not None else chat_body(reply.content, reply.usage)
        data = json.dumps(body).encode()
        try:
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    thread = threading.Thread(target=fake.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.stopping.set()
        fake.shutdown()
        fake.server_close()
        thread.join(timeout=5)


@pytest.fixture
def make_client(server: FakeServer) -> Iterator[Callable[..., OpenAICompatibleModel]]:
    clients: list[OpenAICompatibleModel] = []

    def make(**overrides: Any) -> OpenAICompatibleModel:
        options: dict[str, Any] = {"base_url": server.base_url, "model": "fake-model", "api_key": "sk-test"}
        options.update({"timeout": 2.0, "max_retries": 2, "backoff": 0.01, "max_backoff": 0.05})
        options.update(overrides)
        client = OpenAICompatibleModel(**options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def sent_format(server: FakeServer, index: int) -> Any:
    return server.requests[index]["json"].get("response_format")


def test_it_is_a_language_model(make_client: Callable[..., OpenAICompatibleModel]) -> None:
    assert isinstance(make_client(), LanguageModel)


def test_json_schema_reply_is_parsed_with_usage_and_model(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.append(Reply(content='{"answer": 4}'))
    completion = make_client().complete(ASK, schema=SCHEMA, name="sum")
    assert completion.data == {"answer": 4}
    assert completion.text == '{"answer": 4}'
    assert completion.usage == Usage(11, 7)
    assert completion.model == "fake-model-2024"
    sent = server.requests[0]["json"]
    assert sent["model"] == "fake-model"
    assert sent["messages"] == [m.to_dict() for m in ASK]
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "sum", "schema": SCHEMA, "strict": True},
    }


def test_plain_text_without_schema(server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]) -> None:
    server.script.append(Reply(content="Four.", usage=False))
    completion = make_client().complete(ASK)
    # the server reported no usage: the tokens are counted here, and say so
    assert (completion.text, completion.data) == ("Four.", None)
    assert completion.usage.estimated and completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens == 2
    assert sent_format(server, 0) is None


def test_fenced_json_is_parsed(server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]) -> None:
    server.script.append(Reply(content='Sure! Here it is:\n```json\n{"answer": 4}\n```\nAnything else?'))
    assert make_client().complete(ASK, schema=SCHEMA).data == {"answer": 4}


def test_non_json_reply_raises_malformed_output_with_raw_text(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.append(Reply(content="I think it is four."))
    with pytest.raises(MalformedOutput) as caught:
        make_client().complete(ASK, schema=SCHEMA)
    assert caught.value.text == "I think it is four."
    assert isinstance(caught.value, LLMError)


def test_json_of_the_wrong_shape_raises_malformed_output(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.append(Reply(content="[4]"))
    with pytest.raises(MalformedOutput, match="expected a JSON object"):
        make_client().complete(ASK, schema=SCHEMA)


def test_rejected_json_schema_falls_back_to_json_object_and_remembers(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    rejection = error_body("response_format type json_schema is not supported", param="response_format")
    server.script.extend([Reply(status=400, body=rejection), Reply(), Reply(content='{"answer": 5}')])
    client = make_client()
    assert client.complete(ASK, schema=SCHEMA).data == {"answer": 4}
    # the next mode is JSON mode with the schema (llama.cpp's grammar-constrained output)
    assert client.mode == "json_object_schema"
    assert client.complete(ASK, schema=SCHEMA).data == {"answer": 5}
    assert [sent_format(server, i)["type"] for i in range(3)] == ["json_schema", "json_object", "json_object"]
    assert sent_format(server, 1)["schema"] == SCHEMA
    system = server.requests[1]["json"]["messages"][0]
    assert system["role"] == "system" and '"answer"' in system["content"]
    assert len(server.requests) == 3


def test_falls_back_to_schema_in_prompt_when_json_mode_is_rejected_too(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.extend(
        [
            Reply(status=400, body=error_body("Unknown field: json_schema")),
            Reply(status=500, body=error_body("response_format: unexpected key schema")),
            Reply(status=400, body=error_body("response_format not supported")),
            Reply(content='```\n{"answer": 4}\n```'),
        ]
    )
    client = make_client()
    assert client.complete(ASK, schema=SCHEMA).data == {"answer": 4}
    assert client.mode == "none"
    assert sent_format(server, 3) is None
    assert "JSON schema" in server.requests[3]["json"]["messages"][0]["content"]
    assert len(server.requests) == 4  # a 500 naming response_format is a fallback, not retried


def test_unrelated_bad_request_is_not_a_fallback(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.append(Reply(status=400, body=error_body("messages must not be empty")))
    client = make_client()
    with pytest.raises(ModelUnavailable, match="HTTP 400") as caught:
        client.complete(ASK, schema=SCHEMA)
    assert isinstance(caught.value.__cause__, openai.BadRequestError)
    assert client.mode == "json_schema"
    assert len(server.requests) == 1


def test_a_prompt_over_the_context_is_prompt_too_long_not_retried(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.append(Reply(status=400, body=error_body("Requested tokens (9000) exceed context window of 8192")))
    with pytest.raises(PromptTooLong, match="exceed context window"):
        make_client().complete(ASK, schema=SCHEMA)
    assert len(server.requests) == 1


def test_structured_true_does_not_fall_back(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.append(Reply(status=400, body=error_body("json_schema is not supported")))
    with pytest.raises(ModelUnavailable):
        make_client(structured=True).complete(ASK, schema=SCHEMA)
    assert len(server.requests) == 1


def test_structured_false_puts_the_schema_in_the_prompt(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.append(Reply())
    assert make_client(structured=False).complete(ASK, schema=SCHEMA).data == {"answer": 4}
    assert sent_format(server, 0) is None
    sent = server.requests[0]["json"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert "JSON schema" in sent[0]["content"] and '"answer"' in sent[0]["content"]


@pytest.mark.parametrize("output", ["json_object_schema", "json_object", "none"])
def test_the_schema_paragraph_follows_the_prompts_own_system_text(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel], output: str
) -> None:
    """The prompt's static system text leads, byte for byte, so a server's cached prefix survives across
    requests and prompt kinds; the paragraph (the same for every request of a kind) comes after it."""
    other = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
    server.script.extend([Reply(), Reply(), Reply(content='{"sum": 4}')])
    client = make_client(output=output)
    client.complete(ASK, schema=SCHEMA, name="answer")
    client.complete([ASK[0], Message("user", "What is 3 + 3?")], schema=SCHEMA, name="answer")
    client.complete(ASK, schema=other, name="sum")
    sent = [r["json"]["messages"] for r in server.requests]
    assert all([m["role"] for m in messages] == ["system", "user"] for messages in sent)
    systems = [messages[0]["content"] for messages in sent]
    assert all(s.startswith(ASK[0].content + "\n\n") for s in systems)
    assert systems[0].endswith(schema_instruction(SCHEMA, "answer"))
    assert systems[0] == systems[1]  # the same kind: the whole system message is byte-identical
    assert systems[2] != systems[0] and systems[2].endswith(schema_instruction(other, "sum"))
    assert [m["content"] for m in sent[1][1:]] == ["What is 3 + 3?"]


def test_without_a_system_message_the_schema_paragraph_leads(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.append(Reply())
    make_client(output="json_object_schema").complete([ASK[1]], schema=SCHEMA, name="answer")
    sent = server.requests[0]["json"]["messages"]
    assert sent == [
        {"role": "system", "content": schema_instruction(SCHEMA, "answer")},
        {"role": "user", "content": ASK[1].content},
    ]


def test_json_schema_mode_leaves_the_messages_as_they_are(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.append(Reply())
    make_client(output="json_schema").complete(ASK, schema=SCHEMA)
    assert server.requests[0]["json"]["messages"] == [m.to_dict() for m in ASK]


def test_rate_limit_is_retried(server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]) -> None:
    server.script.extend([Reply(status=429, body=error_body("slow down"), headers={"retry-after": "0"}), Reply()])
    assert make_client().complete(ASK, schema=SCHEMA).data == {"answer": 4}
    assert len(server.requests) == 2


def test_server_errors_exhaust_bounded_retries(
    server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]
) -> None:
    server.script.extend(Reply(status=500, body=error_body("boom")) for _ in range(5))
    client = make_client(max_retries=2)
    with pytest.raises(ModelUnavailable) as caught:
        client.complete(ASK, schema=SCHEMA)
    error = caught.value
    assert (error.attempts, error.base_url, error.model) == (3, server.base_url, "fake-model")
    assert "HTTP 500" in error.cause
    assert isinstance(error.__cause__, openai.InternalServerError)
    assert len(server.requests) == 3


def test_slow_reply_times_out(server: FakeServer, make_client: Callable[..., OpenAICompatibleModel]) -> None:
    server.script.extend(Reply(delay=600.0) for _ in range(2))  # replies held until the server stops
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as caught:
        make_client(timeout=0.2, max_retries=1).complete(ASK)
    assert time.monotonic() - started < 60  # the client's deadline ended the wait, not a reply
    assert caught.value.attempts == 2
    assert isinstance(caught.value.__cause__, openai.APITimeoutError)


def test_endpoint_down_is_model_unavailable() -> None:
    with socket.socket() as probe:  # a loopback port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = OpenAICompatibleModel(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, backoff=0.01, timeout=1.0)
    with client, pytest.raises(ModelUnavailable) as caught:
        client.complete(ASK)
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)
    assert caught.value.attempts == 2


def test_bad_limits_are_rejected() -> None:
    with pytest.raises(LLMError, match="max_retries"):
        OpenAICompatibleModel("http://127.0.0.1:1/v1", "m", max_retries=-1)


def test_the_configured_model_follows_the_settings() -> None:
    settings = Settings(
        llm_base_url="http://127.0.0.1:9/v1",
        llm_model="llama",
        llm_api_key=SecretStr("secret"),
        llm_timeout=3,
        llm_max_retries=1,
    )
    client = configured_model(settings)
    assert isinstance(client, OpenAICompatibleModel)
    with client:
        assert (client.base_url, client.model, client.timeout, client.max_retries) == (
            "http://127.0.0.1:9/v1",
            "llama",
            3.0,
            1,
        )
        assert "secret" not in repr(client)
