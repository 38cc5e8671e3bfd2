"""``l3mp mcp``: the MCP server over stdio, for an agent that starts l3mp as its tool server."""

from __future__ import annotations

import click

from l3mp.cli._base import CliState, pass_state


@click.command()
@pass_state
def mcp(state: CliState) -> int:
    """Serve l3mp's tools, resources and prompts over stdio (MCP); logs go to stderr."""
    from l3mp.mcp.stdio import serve_stdio

    serve_stdio(state.settings())
    return 0
