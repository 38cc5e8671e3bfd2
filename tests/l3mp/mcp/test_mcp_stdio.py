"""``l3mp mcp``: the MCP server over stdio in a subprocess, on the store the settings name."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp_support import settings_for, surveyed

from l3mp.operations.models import StateOut

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_l3mp_mcp_over_stdio_lists_its_tools_and_reads_a_state(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    env = {
        "L3MP_SQLITE_PATH": str(settings.sqlite_path),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    errors = (tmp_path / "stderr.log").open("w")
    params = StdioServerParameters(command=sys.executable, args=["-m", "l3mp", "mcp"], cwd=tmp_path, env=env)
    try:
        async with Client(stdio_client(params, errlog=errors)) as client:  # logs to stderr, kept apart
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"get_state", "report", "apply_delta", "plan"} <= names
            result = await client.call_tool("get_state", {"memory": name})
            state = StateOut.model_validate(result.structured_content)
            assert state.memory == name and state.version == 1 and "(on mug_1 table_1)" in state.facts
    finally:
        errors.close()
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()
