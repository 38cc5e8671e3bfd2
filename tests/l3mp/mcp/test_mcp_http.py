"""/mcp of the real app (REST, dashboard and MCP in one) under uvicorn on 127.0.0.1, through the SDK's
streamable HTTP client: the REST keys and scopes, DNS-rebinding protection, sampling, subscriptions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp_support import (
    MOVE,
    NO_REMOVAL,
    SAID,
    ClientModel,
    Served,
    assert_malformed_prompt_requests_refused,
    errors_logged,
    served,
    settings_for,
    surveyed,
    text_of,
)

from l3mp.llm import ScriptedModel
from l3mp.operations.models import StateOut, UpdateOut

FULL, READ_ONLY = "full-secret", "read-secret"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[Served, str]]:
    """The app with a full and a read-only key, over a surveyed memory; its configured model scripted."""
    settings = settings_for(tmp_path, api_key=FULL, read_only_api_key=READ_ONLY)
    name = surveyed(settings)
    with served(settings, ScriptedModel([*[NO_REMOVAL] * 4])) as app:
        yield app, name


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


@pytest.mark.anyio
async def test_a_request_without_a_usable_key_is_refused_with_401_json(keyed: tuple[Served, str]) -> None:
    app, _ = keyed
    async with httpx2.AsyncClient() as http:
        for headers in ({}, {"X-API-Key": "wrong"}, {"Authorization": "Bearer wrong"}):
            refused = await http.post(app.url, headers={**headers, **ACCEPT}, json=PING)
            assert refused.status_code == 401
            assert refused.json()["error"]["code"] == "unauthorized"
            assert refused.headers["www-authenticate"].startswith("Bearer")
        # the REST service and the dashboard are where they were
        assert (await http.get(f"{app.base}/health")).json() == {"status": "ok"}
        assert (await http.get(f"{app.base}/v1/memories", headers={"X-API-Key": READ_ONLY})).status_code == 200
    with pytest.raises(BaseExceptionGroup) as no_key:
        async with app.client(None) as client:
            await client.list_tools()
    assert [type(e).__name__ for e in _leaves(no_key.value)] == ["MCPError"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_full_key_reads_and_writes_and_a_read_only_key_only_reads(
    keyed: tuple[Served, str], mode: str
) -> None:
    app, name = keyed
    async with app.client(READ_ONLY, mode=mode, bearer=False) as client:
        state = await client.call_tool("get_state", {"memory": name})
        assert StateOut.model_validate(state.structured_content).version == 1
        resource = await client.read_resource(f"l3mp://memories/{name}/state")
        assert resource.contents
        for tool, arguments in (
            ("apply_delta", {"memory": name, "add": ["(light_on lamp_1)"]}),
            ("report", {"memory": name, "text": SAID}),
            ("plan", {"memory": name, "goal": "(on mug_1 shelf_1)"}),
            ("revert", {"memory": name, "update_id": "any"}),
        ):
            refused = await client.call_tool(tool, arguments)
            assert refused.is_error is True and "read-only" in text_of(refused), tool
    async with app.client(FULL, mode=mode) as client:
        state = await client.call_tool("get_state", {"memory": name})
        assert StateOut.model_validate(state.structured_content).version == 1  # nothing was written
        bad = await client.call_tool("apply_delta", {"memory": name, "add": ["(on mug_1 shelf_1)"]})
        rejected = UpdateOut.model_validate(bad.structured_content)
        assert bad.is_error is False and rejected.status == "rejected" and rejected.issues
        good = await client.call_tool("apply_delta", {"memory": name, "remove": MOVE_FACTS[0], "add": MOVE_FACTS[1]})
        assert UpdateOut.model_validate(good.structured_content).status == "applied"
        moved = await client.call_tool("get_state", {"memory": name})
        assert "(on mug_1 shelf_1)" in StateOut.model_validate(moved.structured_content).facts
        await client.call_tool(
            "revert", {"memory": name, "update_id": UpdateOut.model_validate(good.structured_content).id}
        )


MOVE_FACTS = (["(on mug_1 table_1)"], ["(on mug_1 shelf_1)"])


@pytest.mark.anyio
async def test_with_only_the_full_key_reads_are_open_and_writes_need_it(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, api_key=FULL)
    name = surveyed(settings)
    with served(settings) as app:
        async with app.client(None) as client:
            read = await client.call_tool("get_state", {"memory": name})
            assert read.is_error is False
            write = await client.call_tool("apply_delta", {"memory": name, "add": ["(light_on lamp_1)"]})
            assert write.is_error is True and "API key" in text_of(write)
        async with app.client(FULL) as client:
            done = await client.call_tool("apply_delta", {"memory": name, "add": ["(light_on lamp_1)"]})
            assert UpdateOut.model_validate(done.structured_content).version == 2


@pytest.mark.anyio
async def test_dns_rebinding_protection(keyed: tuple[Served, str]) -> None:
    app, _ = keyed
    async with httpx2.AsyncClient() as http:
        auth = {"Authorization": f"Bearer {FULL}", **ACCEPT}
        bad_host = await http.post(app.url, headers={**auth, "host": "evil.example:80"}, json=PING)
        assert bad_host.status_code == 421
        bad_origin = await http.post(app.url, headers={**auth, "origin": "http://evil.example"}, json=PING)
        assert bad_origin.status_code == 403


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_report_over_http_on_the_configured_and_on_the_clients_model(
    keyed: tuple[Served, str], mode: str
) -> None:
    app, name = keyed
    async with app.client(FULL, mode=mode) as client:  # no sampling: the configured (scripted) model
        result = await client.call_tool("report", {"memory": name, "text": "The blue mug is on the hall shelf."})
        update = UpdateOut.model_validate(result.structured_content)
        assert update.status == "rejected" and update.meta["state_change"]["model"] == "scripted"
    agent = ClientModel([MOVE])
    async with app.client(FULL, mode=mode, sampling_callback=agent) as client:
        result = await client.call_tool("report", {"memory": name, "text": SAID})
        assert result.is_error is False, text_of(result)
        update = UpdateOut.model_validate(result.structured_content)
        assert update.status == "applied" and update.delta.add == ["(on mug_1 shelf_1)"]
        assert update.meta["state_change"]["model"].startswith("mcp-client:")
    assert len(agent.asked) == 1


@pytest.mark.anyio
async def test_a_subscriber_hears_of_an_update_made_through_rest(keyed: tuple[Served, str]) -> None:
    app, name = keyed
    uri = f"l3mp://memories/{name}/history"
    async with app.client(READ_ONLY) as client, client.listen(resource_subscriptions=[uri]) as subscription:
        async with httpx2.AsyncClient() as http:
            written = await http.post(
                f"{app.base}/v1/memories/{name}/deltas",
                json={"add": ["(light_on lamp_1)"]},
                headers={"X-API-Key": FULL},
            )
            assert written.status_code == 200, written.text
        with anyio.fail_after(10):
            event: Any = await subscription.__anext__()
        assert event.uri == uri


async def _rpc(http: Any, app: Served, method: str, params: Any, headers: dict[str, str]) -> dict[str, Any]:
    """One raw JSON-RPC request to /mcp; its answer (the last message of an event stream)."""
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    answer = await http.post(app.url, headers={**ACCEPT, **headers}, json=body)
    events = [line[5:].strip() for line in answer.text.splitlines() if line.startswith("data:")]
    found: dict[str, Any] = json.loads(events[-1]) if events else answer.json()
    return found


@pytest.mark.anyio
async def test_a_tool_call_naming_no_tool_is_an_invalid_request_not_a_crash(keyed: tuple[Served, str]) -> None:
    app, name = keyed
    legacy = {"mcp-protocol-version": "2025-11-25", "X-API-Key": FULL}
    async with httpx2.AsyncClient() as http:
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        opened = await http.post(
            app.url,
            headers={**ACCEPT, "X-API-Key": FULL},
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        )
        session = {**legacy, "mcp-session-id": opened.headers["mcp-session-id"]}
        await http.post(
            app.url, headers={**ACCEPT, **session}, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        for odd in (["apply_delta"], {"tool": "apply_delta"}):
            answer = await _rpc(http, app, "tools/call", {"name": odd, "arguments": {"memory": name}}, session)
            assert answer["error"]["code"] == -32602, answer
        fine = await _rpc(http, app, "tools/call", {"name": "get_state", "arguments": {"memory": name}}, session)
        assert fine["result"]["structuredContent"]["version"] == 1


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_malformed_prompt_request_is_invalid_params_naming_what_is_wrong(
    keyed: tuple[Served, str], mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    app, _ = keyed
    async with app.client(READ_ONLY, mode=mode) as client:
        await assert_malformed_prompt_requests_refused(client)
    assert errors_logged(caplog) == []


@pytest.mark.anyio
async def test_a_listen_request_with_malformed_subscriptions_is_an_invalid_request(keyed: tuple[Served, str]) -> None:
    app, _ = keyed
    version = "2026-07-28"
    meta = {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {"mcp-protocol-version": version, "mcp-method": "subscriptions/listen", "X-API-Key": FULL}
    async with httpx2.AsyncClient() as http:
        for odd in (5, True, {"uri": "l3mp://memories"}):
            params = {"notifications": {"resourceSubscriptions": odd}, "_meta": meta}
            answer = await _rpc(http, app, "subscriptions/listen", params, headers)
            assert answer["error"]["code"] == -32602, answer
