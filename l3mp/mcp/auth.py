"""Who may call what over HTTP: the REST service's keys and scopes, at /mcp.

The rules are the REST service's (``l3mp.service.deps``): reads are open unless a read-only key is
configured; writes and plans need the full key whenever any key is configured. A key comes as
``Authorization: Bearer <key>`` or ``X-API-Key``. A request whose key is wrong, or that has none where
reads need one, is refused with 401 before the MCP transport sees it; a write tool called without the
full key is refused (an error result) before it runs. Over stdio and in-process there is no key: the
local user is trusted.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware, get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import Context
from pydantic import SecretStr
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from l3mp.operations.gate import client_key
from l3mp.settings import Settings

READ = "memory:read"
WRITE = "memory:write"
# the tools that change state or spend model calls and planner time (REST: the write key)
WRITE_TOOLS = frozenset({"report", "observe", "apply_delta", "revert", "plan"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Keys:
    full: SecretStr | None
    read_only: SecretStr | None

    @classmethod
    def of(cls, settings: Settings) -> Keys:
        return cls(full=settings.api_key, read_only=settings.read_only_api_key)

    def scopes(self, presented: str | None) -> tuple[str, ...] | None:
        """What a request with ``presented`` (or no key) may do; None: refuse it."""
        if presented:
            if _matches(presented, self.full):
                return (READ, WRITE)
            return (READ,) if _matches(presented, self.read_only) else None
        if self.read_only is not None:
            return None  # reads need a key too
        return (READ,) if self.full is not None else (READ, WRITE)


def _matches(given: str, key: SecretStr | None) -> bool:
    return key is not None and secrets.compare_digest(given.encode(), key.get_secret_value().encode())


def presented_key(headers: Headers) -> str | None:
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return headers.get("x-api-key") or None


class ApiKeys:
    """ASGI, in front of the MCP transport: refuse a request without a usable key (401, JSON, the
    REST service's error shape), else tell the SDK who calls (``get_access_token()`` in the tools,
    and the principal the SDK binds sessions and sealed request state to)."""

    def __init__(self, app: ASGIApp, *, keys: Keys) -> None:
        self.app = AuthContextMiddleware(app)
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        presented = presented_key(Headers(scope=scope))
        scopes = self.keys.scopes(presented)
        if scopes is None:
            message = "the API key is not valid" if presented else "/mcp needs an API key (Authorization: Bearer)"
            body = {"error": {"code": "unauthorized", "message": message, "issues": []}}
            headers = {"WWW-Authenticate": 'Bearer realm="l3mp"'}
            await JSONResponse(body, status_code=401, headers=headers)(scope, receive, send)
            return
        name = "anonymous" if not presented else ("full-key" if WRITE in scopes else "read-only-key")
        scope["user"] = AuthenticatedUser(AccessToken(token=presented or "", client_id=name, scopes=list(scopes)))
        scope["auth"] = AuthCredentials(list(scopes))
        await self.app(scope, receive, send)


async def write_gate(ctx: Any, call_next: Any) -> Any:
    """MCPServer middleware: a write tool without the write scope is refused before it runs."""
    if ctx.method != "tools/call":
        return await call_next(ctx)
    params = ctx.params if isinstance(ctx.params, Mapping) else {}
    name = params.get("name")  # not yet validated: a malformed call goes on, for the SDK to refuse
    token = get_access_token()  # None over stdio and in-process: the local user
    if isinstance(name, str) and name in WRITE_TOOLS and token is not None and WRITE not in token.scopes:
        why = "this key is read-only" if token.token else "send the API key (Authorization: Bearer <key> or X-API-Key)"
        text = f"tool {name!r} changes state or spends model calls: it needs the full API key; {why}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
    return await call_next(ctx)


def caller(ctx: Context) -> str:
    """Whom the model-spending rate limit counts against: the key, else the client's address."""
    token = get_access_token()
    request = ctx.request_context.request
    client = getattr(request, "client", None)
    host = getattr(client, "host", None) if request is not None else "local"
    return client_key(token.token if token is not None and token.token else None, host)
