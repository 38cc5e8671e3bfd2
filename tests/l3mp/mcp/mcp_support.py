"""Helpers for the MCP tests: services over a fresh SQLite store, a surveyed memory, the real app under
uvicorn on 127.0.0.1, and a client model answering sampling requests.

Not a conftest: a conftest here would shadow tests/conftest.py, which the tests import by name."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx2
import mcp.types as types
import pytest
from conftest import unique_name
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from l3mp.examples import survey_json
from l3mp.llm import LanguageModel
from l3mp.operations import Operations, Services
from l3mp.operations.models import EntitiesIn, MemoryIn
from l3mp.service import create_app
from l3mp.settings import Settings
from l3mp.wiring import open_store

# the edit the scripted and the client's model propose: the blue mug from the kitchen table to the shelf
MOVE = {
    "remove": [{"predicate": "on", "args": ["mug_1", "table_1"]}],
    "add": [{"predicate": "on", "args": ["mug_1", "shelf_1"]}],
}
# the mug on two things at once: verification refuses it, every time it is proposed
NO_REMOVAL = {"remove": [], "add": MOVE["add"]}
SAID = "Alex moved the blue mug from the kitchen table to the hall shelf."
# prompts/get params an agent could send, each with the words its refusal must name
MALFORMED_PROMPT_REQUESTS: list[tuple[dict[str, Any], list[str]]] = [
    ({"name": "report_a_chnage", "arguments": {"memory": "m", "text": SAID}}, ["report_a_chnage"]),
    ({"name": "report_a_change", "arguments": {"memory": "m"}}, ["report_a_change", "text"]),
    ({"name": "plan_a_task"}, ["plan_a_task", "memory", "text"]),
    ({"name": "report_a_change", "arguments": {"memory": "m", "text": SAID, "txet": SAID}}, ["txet"]),
    ({"name": "report_a_change", "arguments": {"memory": 5, "text": SAID}}, ["report_a_change", "memory"]),
    ({"name": "plan_a_task", "arguments": ["m", "put the mug away"]}, ["plan_a_task", "arguments"]),
]


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    fields: dict[str, Any] = {"sqlite_path": tmp_path / "mcp.db", "retriever": "full", "mcp_watch_poll": 0.05}
    return Settings(**{**fields, **overrides})


def surveyed(settings: Settings) -> str:
    """A new memory in ``example_home`` holding the surveyed home (version 1), written to the store; its name."""
    services = Services(settings=settings, store=open_store(settings))
    try:
        ops = Operations(services=services)
        name = unique_name("mcp")
        ops.create_memory(MemoryIn(name=name, domain="example_home"))
        ops.add_entities(name, EntitiesIn.model_validate(survey_json()))
        return name
    finally:
        services.close()


@contextmanager
def running_services(settings: Settings, model: LanguageModel | None = None) -> Iterator[Services]:
    services = Services(settings=settings, store=open_store(settings), model=model)
    try:
        yield services
    finally:
        services.close()


@dataclass
class ClientModel:
    """The MCP client's own model: answers each sampling request with the next scripted reply."""

    replies: list[dict[str, Any]]
    asked: list[types.CreateMessageRequestParams] = field(default_factory=list)

    async def __call__(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.asked.append(params)
        reply = self.replies[min(len(self.asked), len(self.replies)) - 1]
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=json.dumps(reply)),
            model="agent-llm",
            stop_reason="endTurn",
        )


class RawPromptRequest(types.Request[dict[str, Any], Literal["prompts/get"]]):
    """prompts/get with its params as given: the SDK's client would not send a malformed one."""

    method: Literal["prompts/get"] = "prompts/get"


async def assert_malformed_prompt_requests_refused(client: Client) -> None:
    """Each of MALFORMED_PROMPT_REQUESTS is answered invalid params naming what was wrong."""
    for params, named in MALFORMED_PROMPT_REQUESTS:
        with pytest.raises(MCPError) as refused:
            await client.session.send_request(RawPromptRequest(params=params), types.GetPromptResult)
        error = refused.value.error
        assert error.code == types.INVALID_PARAMS and all(word in error.message for word in named), (params, error)


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@dataclass(frozen=True)
class Served:
    base: str

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    @asynccontextmanager
    async def client(
        self, key: str | None = None, *, mode: str = "auto", bearer: bool = True, **kwargs: Any
    ) -> AsyncIterator[Client]:
        """An MCP client over streamable HTTP, sending ``key`` as a bearer token (or in X-API-Key)."""
        headers = {} if key is None else ({"Authorization": f"Bearer {key}"} if bearer else {"X-API-Key": key})
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
            transport = streamable_http_client(self.url, http_client=http)
            async with Client(transport, mode=mode, **kwargs) as client:  # type: ignore[arg-type]
                yield client


@contextmanager
def served(settings: Settings, model: LanguageModel | None = None) -> Iterator[Served]:
    """The real app (REST, dashboard and /mcp) under uvicorn on a free port of 127.0.0.1."""
    import uvicorn

    app = create_app(settings, model=model)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # uvicorn serves this very socket: no race for the port
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        ready = threading.Event()
        for _ in range(6000):  # uvicorn sets .started once the lifespan ran and the socket listens
            if server.started or not thread.is_alive():
                break
            ready.wait(0.01)
        assert server.started, "uvicorn did not start"
        yield Served(base=f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()
