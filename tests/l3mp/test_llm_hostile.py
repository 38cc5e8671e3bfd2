"""Misbehaving model servers: small HTTP servers on 127.0.0.1 started by the tests. Every
reply ends as a Completion, an unusable answer (MalformedOutput, with its tokens) or ModelUnavailable,
within the call's one deadline; through the update pipeline, as a recorded outcome."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kg_memory import WorldMemory
from kg_memory.model import IssueCode, UpdateStatus
from l3mp.llm import MalformedOutput, Message, ModelUnavailable, OpenAICompatibleModel
from l3mp.pipelines import NLUpdateConfig, NLUpdater

SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
ASK = [Message("user", "What is 2 + 2?")]
Behaviour = Callable[[BaseHTTPRequestHandler], None]


def chat(content: str) -> bytes:
    message = {"role": "assistant", "content": content}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    usage = {"prompt_tokens": 9, "completion_tokens": 5}
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "hostile",
        "choices": [choice],
        "usage": usage,
    }
    return json.dumps(body).encode()


def send(handler: BaseHTTPRequestHandler, body: bytes, content_type: str = "application/json") -> None:
    handler.send_response(200)
    handler.send_header("content-type", content_type)
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def garbage(handler: BaseHTTPRequestHandler) -> None:
    send(handler, b"<html>definitely not json</html>")


def deep(handler: BaseHTTPRequestHandler) -> None:
    send(handler, chat("[" * 200_000))


def deep_but_short(handler: BaseHTTPRequestHandler) -> None:
    send(handler, chat("[" * 5_000 + "]" * 5_000))


def huge(handler: BaseHTTPRequestHandler) -> None:
    send(handler, chat('{"answer": 4, "pad": "' + "x" * 5_000_000 + '"}'))


def trickle(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", "1000")
    handler.end_headers()
    for _ in range(1000):  # one byte every 0.3 s: each read is quick, the whole is not
        handler.wfile.write(b" ")
        handler.wfile.flush()
        if stopping(handler).wait(0.3):
            return


def stall(handler: BaseHTTPRequestHandler) -> None:
    stopping(handler).wait()  # no answer, ever, while the test runs


def stopping(handler: BaseHTTPRequestHandler) -> threading.Event:
    server = handler.server
    assert isinstance(server, Hostile)
    return server.stopping


class Hostile(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour: Behaviour) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.behaviour = behaviour
        self.bodies: list[dict[str, Any]] = []
        self.stopping = threading.Event()  # set when the test ends: stalled replies give up then

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def handle_error(self, request: Any, client_address: Any) -> None:  # clients hang up on purpose
        pass


class _Handler(BaseHTTPRequestHandler):
    server: Hostile

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.server.bodies.append(json.loads(self.rfile.read(int(self.headers.get("content-length", "0")))))
        self.server.behaviour(self)


@pytest.fixture
def hostile() -> Iterator[Callable[[Behaviour], Hostile]]:
    servers: list[Hostile] = []

    def start(behaviour: Behaviour) -> Hostile:
        server = Hostile(behaviour)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stopping.set()
        server.shutdown()
        server.server_close()


def model(url: str, **options: Any) -> OpenAICompatibleModel:
    return OpenAICompatibleModel(url, "hostile", **({"timeout": 3.0, "max_retries": 1, "backoff": 0.1} | options))


def test_a_200_with_a_non_json_body_is_model_unavailable(hostile: Callable[[Behaviour], Hostile]) -> None:
    with pytest.raises(ModelUnavailable, match="unreadable response"):
        model(hostile(garbage).url).complete(ASK, schema=SCHEMA)


@pytest.mark.parametrize("behaviour", [deep, deep_but_short], ids=["200k", "5k"])
def test_deeply_nested_json_is_an_unusable_answer_with_its_tokens(
    hostile: Callable[[Behaviour], Hostile], behaviour: Behaviour
) -> None:
    with pytest.raises(MalformedOutput, match=r"nests deeper|over the 100,000 limit") as caught:
        model(hostile(behaviour).url).complete(ASK, schema=SCHEMA)
    assert caught.value.usage.prompt_tokens == 9 and len(caught.value.text) <= 100_000


def test_a_huge_reply_is_unusable_and_cut(hostile: Callable[[Behaviour], Hostile]) -> None:
    with pytest.raises(MalformedOutput, match="over the 20,000 limit") as caught:
        model(hostile(huge).url, max_reply_chars=20_000).complete(ASK, schema=SCHEMA)
    assert len(caught.value.text) == 20_000


@pytest.mark.parametrize("behaviour", [trickle, stall], ids=["trickle", "stall"])
def test_one_deadline_per_call_whatever_the_server_does(
    hostile: Callable[[Behaviour], Hostile], behaviour: Behaviour
) -> None:
    start = time.monotonic()
    with pytest.raises(ModelUnavailable, match="deadline"):
        model(hostile(behaviour).url, timeout=2.0, max_retries=3).complete(ASK, schema=SCHEMA)
    # 2 s budget, retries included; without it: 300 s of trickle, a stall without end (a loose bound: busy cores)
    assert time.monotonic() - start < 60


def test_through_the_pipeline_every_hostile_reply_is_a_recorded_outcome(
    hostile: Callable[[Behaviour], Hostile], home: WorldMemory
) -> None:
    server = hostile(huge)
    huge_model = model(server.url, max_reply_chars=20_000)
    result = NLUpdater(home, huge_model, NLUpdateConfig(retriever="full", retries=1)).update(
        "Alex moved the blue mug to the hall shelf."
    )
    assert result.status is UpdateStatus.REJECTED
    assert {i.code for i in result.issues} == {IssueCode.MALFORMED_ANSWER}
    assert result.usage.prompt_tokens == 18  # two unusable answers, both counted
    # the 5 MB answer went back into the re-prompt cut to a few thousand characters
    assert len(server.bodies) == 2 and len(json.dumps(server.bodies[1])) < len(json.dumps(server.bodies[0])) + 3_000


def test_an_update_stalled_past_its_deadline_is_rejected_with_the_reason(
    hostile: Callable[[Behaviour], Hostile], home: WorldMemory
) -> None:
    stalled = model(hostile(stall).url, timeout=60.0, max_retries=5)
    start = time.monotonic()
    result = NLUpdater(home, stalled, NLUpdateConfig(retriever="full", deadline=2.0)).update(
        "Alex moved the blue mug to the hall shelf."
    )
    assert time.monotonic() - start < 60  # a 2 s deadline, against stalls without end
    assert result.status is UpdateStatus.REJECTED
    assert [i.code for i in result.issues] == [IssueCode.DEADLINE]
    assert "deadline of 2 s passed" in result.issues[0].message


def test_a_model_call_slower_than_its_timeout_is_a_recorded_rejection_not_an_outage(
    hostile: Callable[[Behaviour], Hostile], home: WorldMemory
) -> None:
    slow = model(hostile(stall).url, timeout=1.0, max_retries=0)
    result = NLUpdater(home, slow, NLUpdateConfig(retriever="full", deadline=30.0)).update(
        "Alex moved the blue mug to the hall shelf."
    )
    assert result.status is UpdateStatus.REJECTED
    assert [i.code for i in result.issues] == [IssueCode.DEADLINE]
    assert "model call" in result.issues[0].message


def test_a_server_that_is_down_is_still_model_unavailable(home: WorldMemory) -> None:
    from l3mp.llm.local import free_port

    down = model(f"http://127.0.0.1:{free_port()}/v1", max_retries=0)
    with pytest.raises(ModelUnavailable):
        NLUpdater(home, down, NLUpdateConfig(retriever="full")).update("Alex moved the blue mug to the hall shelf.")
