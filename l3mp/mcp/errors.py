"""Domain errors as MCP tool errors: the error's own message (it names the offending input), never a
traceback. A rejected update is no error: the tools return it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import ValidationError

from kg_memory import L3mpError, UnknownDomain, UnknownMemory, UnknownUpdate
from l3mp.operations import Overloaded


def message(exc: Exception) -> str:
    if isinstance(exc, Overloaded):
        return f"{exc.code}: {exc} (retry after {exc.retry_after} s)"
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return f"{type(exc).__name__}: {exc}"


def invalid_params(text: str, **data: Any) -> MCPError:
    """A request whose parameters are wrong: JSON-RPC invalid params (-32602), naming what was wrong."""
    return MCPError(code=INVALID_PARAMS, message=text, data=data)


@contextmanager
def tool_errors() -> Iterator[None]:
    """Inside a tool: what the caller asked for is wrong, or the service is busy -> a tool error."""
    try:
        yield
    except (L3mpError, ValueError) as exc:  # ValidationError is a ValueError
        raise ToolError(message(exc)) from None


@contextmanager
def resource_errors() -> Iterator[None]:
    """Inside a resource: an unknown memory or domain is 'not found', any other domain error an error."""
    try:
        yield
    except (UnknownMemory, UnknownDomain, UnknownUpdate) as exc:
        raise ResourceNotFoundError(message(exc)) from None
    except (L3mpError, ValueError) as exc:
        raise ResourceError(message(exc)) from None
