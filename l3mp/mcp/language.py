"""Which model a report or a plan in English runs on: the configured one, or the MCP client's.

``L3MP_MCP_SAMPLING=prefer`` (the default) sends the language work to the client's model whenever the
client can sample; a call's ``use_client_model`` wins (``false``: the configured model; ``true``: the
client's or an error saying why not). The client's model always writes the edits: the choosing reader
of the small packaged models ranks readings by their likelihood, which sampling cannot give.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Literal, TypeVar

import mcp.types as types
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import is_version_at_least

from l3mp.llm import LanguageModel
from l3mp.mcp.sampling import ForwardedModel, NeedsSample, ReplayedModel, RoundState, next_round
from l3mp.operations import Operations, Services

T = TypeVar("T")
Route = Literal["configured", "forwarded", "rounds"]
Work = Callable[[Operations, LanguageModel | None], Awaitable[T]]

# the first protocol revision without server-to-client requests in the middle of a call
ROUNDS_VERSION = "2026-07-28"


def route(ctx: Context, *, setting: str, wanted: bool | None) -> Route:
    """How this call reaches a model; a ToolError when the caller asked for the client's and cannot have it."""
    if wanted is False or (wanted is None and setting == "never"):
        return "configured"
    if setting == "never":
        raise ToolError("use_client_model: this server runs on its configured model only (L3MP_MCP_SAMPLING=never)")
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        if wanted:
            raise ToolError("use_client_model: the client did not declare the sampling capability")
        return "configured"
    version = ctx.protocol_version
    if version is not None and is_version_at_least(version, ROUNDS_VERSION):
        return "rounds"
    if ctx.session.can_send_request:
        return "forwarded"
    if wanted:
        raise ToolError(f"use_client_model: no channel to the client's model at protocol {version}")
    return "configured"


def client_name(ctx: Context) -> str:
    params = ctx.session.client_params
    return params.client_info.name if params is not None else "client"


async def _ask(ctx: Context, params: types.CreateMessageRequestParams, timeout: float) -> Any:
    request = types.CreateMessageRequest(params=params)
    related = ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
    return await ctx.session.send_request(
        request, types.CreateMessageResult, request_read_timeout_seconds=timeout, metadata=related
    )


async def on_model(
    ctx: Context, services: Services, *, wanted: bool | None, work: Work[T]
) -> T | types.InputRequiredResult:
    """``work`` on the configured model or on the client's (one round of it, at 2026-07-28)."""
    settings = services.settings
    how = route(ctx, setting=settings.mcp_sampling, wanted=wanted)
    if how == "configured":
        return await work(Operations(services=services), None)
    ops = Operations(services=services)
    client = client_name(ctx)
    if how == "forwarded":
        model = ForwardedModel(
            ask=partial(_ask, ctx),
            loop=asyncio.get_running_loop(),
            client=client,
            max_tokens=settings.llm_max_tokens,
            timeout=settings.llm_timeout,
        )
        return await work(ops, model)
    answers = RoundState.decode(ctx.request_state).gathered(ctx.input_responses, client)
    try:
        return await work(ops, ReplayedModel(answers, max_tokens=settings.llm_max_tokens))
    except NeedsSample as pending:
        return next_round(answers, pending)
