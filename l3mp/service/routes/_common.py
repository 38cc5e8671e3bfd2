"""Shared by the routes."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import IO

from fastapi import Request, Response
from pydantic import BaseModel

from l3mp.operations.errors import Rejected, TooLarge
from l3mp.operations.models import UpdateOut

TIME = "ISO 8601 with a timezone, e.g. 2025-05-01T08:00:00+00:00"


def recorded(update: UpdateOut) -> UpdateOut:
    """The update as a response, or :class:`Rejected` (mapped to 422) when it was rejected."""
    if update.status == "rejected":
        raise Rejected(update)
    return update


def serialized(answer: BaseModel) -> Response:
    """``answer`` as the response, serialized once. The route's ``response_model`` still documents
    it; handed the model itself, FastAPI would dump it, validate it again and only then serialize it,
    which on the fast write routes cost more than the write's own verification."""
    return Response(answer.model_dump_json(), media_type="application/json")


@asynccontextmanager
async def spooled(request: Request, limit: int) -> AsyncIterator[IO[bytes]]:
    """The request's body in a temporary file, read from its start; :class:`TooLarge` past ``limit``
    bytes (a streamed route's own limit, checked while the body arrives)."""
    with tempfile.TemporaryFile() as spool:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise TooLarge(limit)
            spool.write(chunk)
        spool.seek(0)
        yield spool
