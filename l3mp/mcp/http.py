"""The MCP server over streamable HTTP, for mounting at ``/mcp`` in the REST service's app.

The door holds one MCP server per app (its session manager runs once); the app runs it inside its own
lifespan, after the services exist. Requests pass the API keys (:mod:`l3mp.mcp.auth`), then the SDK's
DNS-rebinding protection: only the Host and Origin headers of loopback and the configured hosts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from l3mp.mcp.auth import ApiKeys, Keys
from l3mp.mcp.server import ServicesProvider, build_mcp
from l3mp.settings import Settings

PATH = "/mcp"
METHODS = ["GET", "POST", "DELETE"]
LOOPBACK = ("127.0.0.1:*", "localhost:*", "[::1]:*")


def security(settings: Settings) -> TransportSecuritySettings:
    hosts = [*LOOPBACK, *settings.mcp_allowed_hosts]
    origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


@dataclass(frozen=True, kw_only=True)
class McpDoor:
    """The server, its ASGI endpoint (keys checked first) and what runs while the app runs."""

    server: MCPServer
    asgi: ASGIApp

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield


def mcp_door(settings: Settings, services: ServicesProvider) -> McpDoor:
    server = build_mcp(services)
    # builds server.session_manager (SSE responses, stateful sessions: the handshake era's sampling
    # and subscriptions need both); the Starlette app it returns is not used
    server.streamable_http_app(json_response=False, transport_security=security(settings))
    endpoint = StreamableHTTPASGIApp(server.session_manager)
    return McpDoor(server=server, asgi=ApiKeys(endpoint, keys=Keys.of(settings)))
