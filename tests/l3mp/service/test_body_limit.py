"""The body limit reads a request's whole body before the app sees it, and passes on only whole bodies."""

from __future__ import annotations

import asyncio

import pytest
from starlette._utils import get_route_path
from starlette.types import Message, Receive, Scope, Send

from l3mp.service.limits import BodyLimit, route_path

SCOPE: Scope = {"type": "http", "method": "POST", "path": "/v1/memories/home/deltas", "headers": []}


class _Recorder:
    """An app that records the body it was handed and answers 204."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        self.bodies.append(message.get("body", b""))
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _run(messages: list[Message], *, limit: int = 1_000) -> tuple[_Recorder, list[Message]]:
    app, sent, pending = _Recorder(), [], list(messages)

    async def receive() -> Message:
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(BodyLimit(app, limit=limit)(SCOPE, receive, send))
    return app, sent


def test_a_body_in_chunks_reaches_the_app_whole() -> None:
    app, sent = _run(
        [
            {"type": "http.request", "body": b'{"remove": [], ', "more_body": True},
            {"type": "http.request", "body": b'"add": []}', "more_body": False},
        ]
    )
    assert app.bodies == [b'{"remove": [], "add": []}']
    assert sent[0]["status"] == 204


def test_a_client_that_leaves_mid_body_gets_nothing_done() -> None:
    # a prefix can be a valid body of its own ("12" of "123"), so none is passed on
    app, sent = _run([{"type": "http.request", "body": b"12", "more_body": True}, {"type": "http.disconnect"}])
    assert app.bodies == [] and sent == []


def test_a_chunked_body_over_the_limit_is_413_and_never_reaches_the_app() -> None:
    app, sent = _run(
        [
            {"type": "http.request", "body": b"x" * 600, "more_body": True},
            {"type": "http.request", "body": b"x" * 600, "more_body": False},
        ]
    )
    assert app.bodies == []
    assert sent[0]["status"] == 413


def test_a_streamed_route_behind_a_proxys_prefix_keeps_its_own_limit() -> None:
    """A proxy that mounts the service under a prefix: the server may put the prefix in front of the
    path, and the route that streams its body is still known by its path without it."""
    app = _Recorder()
    limit = BodyLimit(app, limit=1_000, streamed=("/v1/memories/import.jsonl",))

    def status(path: str) -> int:
        sent: list[Message] = []
        pending: list[Message] = [{"type": "http.request", "body": b"x" * 1_200, "more_body": False}]

        async def receive() -> Message:
            return pending.pop(0) if pending else {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            sent.append(message)

        asyncio.run(limit({**SCOPE, "path": path, "root_path": "/memory"}, receive, send))
        return int(sent[0]["status"])

    assert status("/memory/v1/memories/import.jsonl") == 204  # the prefix in front, as uvicorn puts it
    assert status("/v1/memories/import.jsonl") == 204
    assert status("/memory/v1/memories/home/deltas") == 413  # any other route keeps the service's limit
    assert app.bodies == [b"x" * 1_200] * 2


@pytest.mark.parametrize(
    ("path", "root"),
    [
        ("/memory/v1/x", "/memory"),
        ("/memory", "/memory"),
        ("/memoryx/v1/x", "/memory"),
        ("/v1/x", "/memory"),
        ("/v1/x", ""),
        ("/memory/", "/memory"),
        ("/memory/v1", "/memory/"),
    ],
)
def test_the_route_path_is_the_one_starlettes_routing_matches(path: str, root: str) -> None:
    assert route_path({"path": path, "root_path": root}) == get_route_path({"path": path, "root_path": root})
