"""The state: now or at a past version or time, its entities (perception adds them) and facts."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from kg_memory.model import MAX_NAME_LENGTH
from l3mp.operations.models import EntitiesIn, EntityBody, FactsOut, StateOut, UpdateOut
from l3mp.service.deps import OpsDep, ReadAccess, WriteAccess
from l3mp.service.errors import RESPONSES
from l3mp.service.routes._common import TIME, recorded

reads = APIRouter(prefix="/memories/{memory}", tags=["state"], dependencies=[ReadAccess], responses=RESPONSES)
writes = APIRouter(prefix="/memories/{memory}", tags=["state"], dependencies=[WriteAccess], responses=RESPONSES)


@reads.get("/state", response_model=StateOut, responses={410: {"description": "that version was compacted away"}})
def get_state(
    memory: str,
    ops: OpsDep,
    version: Annotated[int | None, Query(ge=0, le=2**53, description="the state at this past version")] = None,
    at: Annotated[datetime | None, Query(description=f"the state at this time ({TIME})")] = None,
) -> StateOut:
    """The whole state (entities, facts, and the entities whose location is unknown): now, at a past
    ``version``, or as it was at the time ``at`` (give one of the two)."""
    return ops.state(memory, version=version, at=at)


@reads.get("/entities", response_model=list[EntityBody])
def list_entities(memory: str, ops: OpsDep) -> list[EntityBody]:
    return ops.entities(memory)


@writes.post("/entities", response_model=UpdateOut)
def add_entities(body: EntitiesIn, memory: str, ops: OpsDep) -> UpdateOut:
    """Perception's write: new entities with the facts that place them, verified as a sensor update."""
    return recorded(ops.add_entities(memory, body))


@reads.get("/facts", response_model=FactsOut)
def list_facts(
    memory: str,
    ops: OpsDep,
    entity: Annotated[str | None, Query(max_length=MAX_NAME_LENGTH, description="facts naming it")] = None,
    predicate: Annotated[str | None, Query(max_length=MAX_NAME_LENGTH, description="facts of this predicate")] = None,
) -> FactsOut:
    return ops.facts(memory, entity=entity, predicate=predicate)
