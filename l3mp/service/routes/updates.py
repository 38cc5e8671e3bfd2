"""Writes from the three sources (language, perception, the API) and the history they leave."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from kg_memory import Delta, Fact, UpdateSource, WorldMemory
from l3mp.pipelines import NLUpdateConfig, NLUpdater, SensorUpdater
from l3mp.service.deps import CallerDep, MemoryDep, ReadAccess, ServicesDep, WriteAccess
from l3mp.service.errors import BUSY_RESPONSES as _BUSY
from l3mp.service.errors import RESPONSES
from l3mp.service.routes._common import recorded
from l3mp.service.schemas import DeltaIn, HistoryOut, NLUpdateIn, RevertIn, UpdateOut
from perception import Observation

reads = APIRouter(prefix="/memories/{memory}", tags=["updates"], dependencies=[ReadAccess], responses=RESPONSES)
writes = APIRouter(prefix="/memories/{memory}", tags=["updates"], dependencies=[WriteAccess], responses=RESPONSES)

_CONFLICT: dict[int | str, dict[str, Any]] = {
    409: {"description": "expected_version is not the memory's version; nothing was written"}
}


@writes.post("/updates/nl", response_model=UpdateOut, responses=_BUSY)
async def nl_update(body: NLUpdateIn, memory: str, services: ServicesDep, caller: CallerDep) -> UpdateOut:
    """What a person said: edits proposed by the language model, verified before anything is written.

    Runs in one of the service's model slots (503 with Retry-After when all are busy)."""

    def update_from_words() -> UpdateOut:
        config = NLUpdateConfig.from_settings(services.settings)
        updater = NLUpdater(
            WorldMemory.open(services.store, memory), services.language_model(), config, retriever=services.retriever()
        )
        return recorded(updater.update(body.text).update)

    return await services.gate.run(update_from_words, key=caller)


@writes.post("/observations", response_model=UpdateOut, responses=_CONFLICT)
def observe(body: Observation, memory: MemoryDep, services: ServicesDep) -> UpdateOut:
    """What the robot sees in one room: the difference to the memory, applied as a sensor update."""
    with services.writer(memory.name):
        return recorded(SensorUpdater(memory).apply(body).update)


@writes.post("/deltas", response_model=UpdateOut, responses=_CONFLICT)
def apply_delta(body: DeltaIn, memory: MemoryDep, services: ServicesDep) -> UpdateOut:
    """Facts to remove and to add, verified against the domain and the current state."""
    delta = Delta(remove={Fact.parse(f) for f in body.remove}, add={Fact.parse(f) for f in body.add})
    with services.writer(memory.name):
        update = memory.apply(delta, source=UpdateSource.API, input=body.input, expected_version=body.expected_version)
    return recorded(update)


@reads.get("/updates", response_model=HistoryOut)
def history(
    memory: MemoryDep,
    since_seq: Annotated[int, Query(ge=0, le=2**53, description="updates after this sequence number")] = 0,
    limit: Annotated[int, Query(ge=1, le=1_000)] = 100,
) -> HistoryOut:
    updates = memory.history(since_seq, limit)
    return HistoryOut(
        updates=[UpdateOut.of(u) for u in updates], next_since_seq=updates[-1].seq if updates else since_seq
    )


@reads.get("/updates/{update_id}", response_model=UpdateOut)
def get_update(memory: MemoryDep, update_id: str) -> UpdateOut:
    return UpdateOut.of(memory.store.get_update(memory.name, update_id))


@writes.post("/updates/{update_id}/revert", response_model=UpdateOut, responses=_CONFLICT)
def revert(memory: MemoryDep, update_id: str, body: Annotated[RevertIn | None, Body()] = None) -> UpdateOut:
    """Undo an applied update with a new compensating update (verified like any other)."""
    body = body or RevertIn()
    return recorded(memory.revert(update_id, input=body.input, expected_version=body.expected_version))
