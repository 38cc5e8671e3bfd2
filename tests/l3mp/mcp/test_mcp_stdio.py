"""``l3mp mcp``: the MCP server over stdio in a subprocess, on the store the settings name."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp_support import assert_malformed_prompt_requests_refused, settings_for, surveyed

from l3mp.operations.models import StateOut

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def l3mp_mcp(tmp_path: Path) -> AsyncIterator[tuple[Client, str]]:
    """A client of ``l3mp mcp`` over a surveyed memory, and the memory's name; the server's log, kept
    apart in tmp_path/stderr.log, must hold no error."""
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    env = {
        "L3MP_SQLITE_PATH": str(settings.sqlite_path),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    log = tmp_path / "stderr.log"
    params = StdioServerParameters(command=sys.executable, args=["-m", "l3mp", "mcp"], cwd=tmp_path, env=env)
    with log.open("w") as errors:
        async with Client(stdio_client(params, errlog=errors)) as client:
            yield client, name
    logged = log.read_text()
    assert "Traceback" not in logged and "ERROR" not in logged, logged


@pytest.mark.anyio
async def test_l3mp_mcp_over_stdio_lists_its_tools_and_reads_a_state(tmp_path: Path) -> None:
    async with l3mp_mcp(tmp_path) as (client, name):
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"get_state", "report", "apply_delta", "plan"} <= names
        result = await client.call_tool("get_state", {"memory": name})
        state = StateOut.model_validate(result.structured_content)
        assert state.memory == name and state.version == 1 and "(on mug_1 table_1)" in state.facts


@pytest.mark.anyio
async def test_a_malformed_prompt_request_over_stdio_is_invalid_params(tmp_path: Path) -> None:
    async with l3mp_mcp(tmp_path) as (client, _):
        await assert_malformed_prompt_requests_refused(client)
