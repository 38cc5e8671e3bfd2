"""The history through its indexes: one entity's updates, a time range, by source and status
(cursor-paginated), when an entity was last seen, when a fact held; and streaming JSON Lines
export and import (imports have their own, larger size limit: ``L3MP_MAX_IMPORT_BYTES``)."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from kg_memory import GraphStore, UpdateSource, UpdateStatus, WorldMemory
from kg_memory.history import MAX_PAGE
from kg_memory.jsonl_stream import text_lines
from kg_memory.model import MAX_NAME_LENGTH
from l3mp.operations.models import HistoryIn, HistoryPageOut, IntervalOut, LastSeenOut, MemoryOut
from l3mp.service.deps import MemoryDep, OpsDep, ReadAccess, ServicesDep, StoreDep, WriteAccess
from l3mp.service.errors import RESPONSES
from l3mp.service.routes._common import TIME, spooled

reads = APIRouter(prefix="/memories", tags=["history"], dependencies=[ReadAccess], responses=RESPONSES)
writes = APIRouter(prefix="/memories", tags=["history"], dependencies=[WriteAccess], responses=RESPONSES)


@reads.get("/{memory}/history", response_model=HistoryPageOut)
def history(
    memory: str,
    ops: OpsDep,
    entity: Annotated[str | None, Query(max_length=MAX_NAME_LENGTH, description="updates that touched it")] = None,
    since: Annotated[datetime | None, Query(description=f"at or after this time ({TIME})")] = None,
    until: Annotated[datetime | None, Query(description=f"before this time ({TIME})")] = None,
    source: Annotated[UpdateSource | None, Query()] = None,
    status: Annotated[UpdateStatus | None, Query()] = None,
    cursor: Annotated[int, Query(ge=0, le=2**53, description="next_cursor of the previous page")] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    order: Annotated[Literal["oldest", "newest"], Query()] = "oldest",
) -> HistoryPageOut:
    """One page of the history, oldest first unless ``order=newest``; follow ``next_cursor``."""
    query = HistoryIn(
        entity=entity, since=since, until=until, source=source, status=status, cursor=cursor, limit=limit, order=order
    )
    return ops.history(memory, query)


@reads.get("/{memory}/entities/{entity}/last-seen", response_model=LastSeenOut)
def last_seen(memory: str, entity: str, ops: OpsDep) -> LastSeenOut:
    """The last perception update that saw ``entity`` (``update`` is null if none did)."""
    return ops.last_seen(memory, entity)


@reads.get("/{memory}/facts/intervals", response_model=list[IntervalOut])
def fact_intervals(
    memory: str, ops: OpsDep, fact: Annotated[str, Query(max_length=1_000, description="e.g. (on mug_1 table_1)")]
) -> list[IntervalOut]:
    """When the fact held: intervals of versions and times, derived from the log."""
    return ops.fact_intervals(memory, fact)


@reads.get(
    "/{memory}/export.jsonl",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}, "description": "the memory as JSON Lines"}},
)
def export_lines(memory: MemoryDep, gzip: bool = False) -> StreamingResponse:
    """The memory as JSON Lines (header, entities, updates, end), streamed; gzipped on request."""
    lines = memory.export_lines()
    if not gzip:
        return StreamingResponse(_chunks(lines), media_type="application/x-ndjson")
    return StreamingResponse(_gzipped(lines), media_type="application/gzip")


def _chunks(lines: Iterator[str], size: int = 1 << 16) -> Iterator[bytes]:
    buffer: list[str] = []
    length = 0
    for line in lines:
        buffer.append(line)
        length += len(line)
        if length >= size:
            yield "".join(buffer).encode()
            buffer, length = [], 0
    if buffer:
        yield "".join(buffer).encode()


def _gzipped(lines: Iterator[str]) -> Iterator[bytes]:
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: the gzip container
    for chunk in _chunks(lines):
        if out := packer.compress(chunk):
            yield out
    yield packer.flush()


@writes.post(
    "/import.jsonl",
    response_model=MemoryOut,
    status_code=201,
    openapi_extra={"requestBody": {"content": {"application/x-ndjson": {}, "application/gzip": {}}, "required": True}},
)
async def import_lines(
    request: Request,
    store: StoreDep,
    services: ServicesDep,
    name: Annotated[str | None, Query(max_length=MAX_NAME_LENGTH, description="import under this name")] = None,
) -> MemoryOut:
    """Recreate a memory from a JSON Lines export (plain or gzipped), streamed to a temporary file
    and replayed through the verifier; any failure names the first offending update and keeps nothing."""
    async with spooled(request, services.settings.max_import_bytes) as spool:
        world = await run_in_threadpool(_import, store, spool, name)
    return MemoryOut.of(world.record)


def _import(store: GraphStore, spool: IO[bytes], name: str | None) -> WorldMemory:
    with text_lines(spool) as lines:
        return WorldMemory.import_lines(store, lines, name)
