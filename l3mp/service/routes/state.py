"""The current state: entities (perception adds them) and facts."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from kg_memory import Fact
from kg_memory.model import MAX_NAME_LENGTH
from l3mp.service.deps import MemoryDep, ReadAccess, WriteAccess
from l3mp.service.errors import RESPONSES
from l3mp.service.routes._common import recorded
from l3mp.service.schemas import EntitiesIn, EntityBody, FactsOut, UpdateOut

reads = APIRouter(prefix="/memories/{memory}", tags=["state"], dependencies=[ReadAccess], responses=RESPONSES)
writes = APIRouter(prefix="/memories/{memory}", tags=["state"], dependencies=[WriteAccess], responses=RESPONSES)


@reads.get("/entities", response_model=list[EntityBody])
def list_entities(memory: MemoryDep) -> list[EntityBody]:
    return [EntityBody.of(e) for _, e in sorted(memory.entities().items())]


@writes.post("/entities", response_model=UpdateOut)
def add_entities(body: EntitiesIn, memory: MemoryDep) -> UpdateOut:
    """Perception's write: new entities with the facts that place them, verified as a sensor update."""
    entities = [e.to_entity() for e in body.entities]
    facts = [Fact.parse(f) for f in body.facts]
    return recorded(memory.add_entities(entities, input=body.input, facts=facts))


@reads.get("/facts", response_model=FactsOut)
def list_facts(
    memory: MemoryDep,
    entity: Annotated[str | None, Query(max_length=MAX_NAME_LENGTH, description="facts naming it")] = None,
    predicate: Annotated[str | None, Query(max_length=MAX_NAME_LENGTH, description="facts of this predicate")] = None,
) -> FactsOut:
    version = memory.version
    facts = memory.facts(predicate=predicate, entity=entity)
    return FactsOut(version=version, facts=sorted(str(f) for f in facts))
