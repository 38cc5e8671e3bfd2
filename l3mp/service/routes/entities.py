"""Bulk entity creation: perception's first look at a large place, streamed as JSON Lines and written
in pages of whole rooms, each page a verified sensor update with its own verdict.

Like the import, the route streams its body under its own limit (``L3MP_MAX_IMPORT_BYTES``), not the
request limit.
"""

from __future__ import annotations

from typing import IO, Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from kg_memory import Entity, InvalidValue, WorldMemory
from kg_memory.jsonl_stream import text_lines
from kg_memory.model import MAX_NAME_LENGTH
from l3mp.operations import Operations
from l3mp.operations.paging import (
    MAX_PAGE_ENTITIES,
    PAGE_ENTITIES,
    PagesOut,
    add_in_pages,
    entity_pages,
    read_lines,
)
from l3mp.service.deps import OpsDep, ServicesDep, WriteAccess
from l3mp.service.errors import RESPONSES
from l3mp.service.routes._common import spooled

PATH = "/memories/{memory}/entities.jsonl"

writes = APIRouter(prefix="", tags=["state"], dependencies=[WriteAccess], responses=RESPONSES)

# the body is read as text lines whatever its declared type; plain text is listed for clients that can
# send only that
_BODY = {"application/x-ndjson": {}, "application/gzip": {}, "text/plain": {"schema": {"type": "string"}}}

_PAGES: dict[int | str, dict[str, Any]] = {
    422: {"model": PagesOut, "description": "a page was rejected (its update says why); the other pages stand"}
}


@writes.post(
    PATH,
    response_model=PagesOut,
    responses=_PAGES,
    openapi_extra={"requestBody": {"content": _BODY, "required": True}},
)
async def add_entities_streamed(
    request: Request,
    ops: OpsDep,
    services: ServicesDep,
    memory: Annotated[str, Path(max_length=MAX_NAME_LENGTH, description="the memory to add them to")],
    page: Annotated[int, Query(ge=1, le=MAX_PAGE_ENTITIES, description="entities per page (whole rooms)")] = (
        PAGE_ENTITIES
    ),
    input: Annotated[str, Query(max_length=1_000, description="what the look was, recorded on each page")] = "",
) -> Any:
    """Entities and facts as JSON Lines (``{"entity": {...}}`` or ``{"fact": "(...)"}`` a line, plain or
    gzipped), written in pages of whole rooms, each a verified sensor update. 200 when every page was
    applied, else 422 with the same body: each page's update, a rejected one with its issues."""
    async with spooled(request, services.settings.max_import_bytes) as spool:
        done = await run_in_threadpool(_add, ops, memory, spool, page, input)
    return JSONResponse(done.model_dump(mode="json"), status_code=200 if done.rejected == 0 else 422)


def _add(ops: Operations, memory: str, spool: IO[bytes], size: int, input: str) -> PagesOut:
    world = ops.memory(memory)  # an unknown memory is a 404 before the body is parsed
    with text_lines(spool) as lines:
        entities, facts = read_lines(lines)
    if not entities:
        raise InvalidValue("entities stream", f"{len(facts)} facts", "it creates no entity")
    pages = entity_pages(entities, facts, size=size, rooms=_rooms(world, entities))
    return add_in_pages(ops, world.name, pages, input=input)


def _rooms(world: WorldMemory, entities: list[Entity]) -> set[str]:
    domain = world.domain
    if "room" not in domain.types:
        return set()
    return {e.name for e in entities if domain.is_subtype(e.type, "room")}
