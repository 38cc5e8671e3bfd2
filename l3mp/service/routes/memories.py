"""Memories: create, list, get, delete, export, import."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response

from kg_memory import WorldMemory
from kg_memory.model import MAX_NAME_LENGTH
from l3mp.operations.models import MemoryIn, MemoryOut
from l3mp.service.deps import MemoryDep, OpsDep, ReadAccess, StoreDep, WriteAccess
from l3mp.service.errors import RESPONSES

reads = APIRouter(prefix="/memories", tags=["memories"], dependencies=[ReadAccess], responses=RESPONSES)
writes = APIRouter(prefix="/memories", tags=["memories"], dependencies=[WriteAccess], responses=RESPONSES)


@writes.post("", response_model=MemoryOut, status_code=201, responses={409: {"description": "memory exists"}})
def create_memory(body: MemoryIn, ops: OpsDep) -> MemoryOut:
    """A new, empty memory bound to a domain."""
    return ops.create_memory(body)


@reads.get("", response_model=list[MemoryOut])
def list_memories(ops: OpsDep) -> list[MemoryOut]:
    return ops.list_memories()


@reads.get("/{memory}", response_model=MemoryOut)
def get_memory(memory: str, ops: OpsDep) -> MemoryOut:
    return ops.get_memory(memory)


@writes.delete(
    "/{memory}",
    status_code=204,
    responses={409: {"description": "with abandoned_import: the memory is not being imported (it is in use)"}},
)
def delete_memory(
    memory: str,
    ops: OpsDep,
    abandoned_import: Annotated[
        bool,
        Query(description="delete only the hidden memory an import left when its process stopped"),
    ] = False,
) -> Response:
    """Delete the memory with its state and its whole history, freeing its name (or, with
    ``abandoned_import``, only the hidden memory an import left when its process stopped).

    A write under way on the memory, in this process or another, fails with 404 ``unknown_memory``
    and writes nothing, also when another memory was made under the name meanwhile; a live stream of
    its updates ends with an ``error`` event; later requests naming it are 404 until another is made."""
    ops.delete_memory(memory, abandoned_import=abandoned_import)
    return Response(status_code=204)  # no body, so no media type either


@reads.get("/{memory}/export", response_model=dict[str, Any])
def export_memory(memory: MemoryDep) -> dict[str, Any]:
    """The memory, its state and its full history as JSON (what ``POST /memories/import`` takes)."""
    return memory.export()


@writes.post("/import", response_model=MemoryOut, status_code=201, responses={409: {"description": "memory exists"}})
def import_memory(
    data: Annotated[dict[str, Any], Body(description="an export (GET /memories/{memory}/export)")],
    store: StoreDep,
    name: Annotated[str | None, Query(max_length=MAX_NAME_LENGTH, description="import under this name")] = None,
) -> MemoryOut:
    """Recreate an exported memory, history included (verified before anything is written)."""
    return MemoryOut.of(WorldMemory.import_(store, data, name).record)
