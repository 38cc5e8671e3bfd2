"""Writes from the three sources (language, perception, the API) and the history they leave."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response

from kg_memory.history import MAX_PAGE
from l3mp.operations.models import (
    DeltaIn,
    ExplainOut,
    HistoryIn,
    HistoryOut,
    ItemErrorOut,
    NLUpdateIn,
    ObservationIn,
    ObservationsIn,
    ObservationsOut,
    RevertIn,
    UpdateOut,
)
from l3mp.service.deps import CallerDep, OpsDep, ReadAccess, WriteAccess
from l3mp.service.errors import BUSY_RESPONSES as _BUSY
from l3mp.service.errors import RESPONSES, status_of
from l3mp.service.hot_writes import HotRoute
from l3mp.service.routes._common import recorded, serialized

reads = APIRouter(prefix="/memories/{memory}", tags=["updates"], dependencies=[ReadAccess], responses=RESPONSES)
writes = APIRouter(prefix="/memories/{memory}", tags=["updates"], dependencies=[WriteAccess], responses=RESPONSES)

_CONFLICT: dict[int | str, dict[str, Any]] = {
    409: {"description": "expected_version is not the memory's version; nothing was written"}
}


@writes.post("/updates/nl", response_model=UpdateOut, responses=_BUSY)
async def nl_update(body: NLUpdateIn, memory: str, ops: OpsDep, caller: CallerDep) -> UpdateOut:
    """What a person said: edits proposed by the language model, verified before anything is written.

    Runs in one of the service's model slots (503 with Retry-After when all are busy)."""
    return recorded(await ops.report(memory, body, caller=caller))


@writes.post("/observations", response_model=UpdateOut, responses=_CONFLICT)
async def observe(body: ObservationIn, memory: str, ops: OpsDep) -> Response:
    """What the robot sees in one room: the difference to the memory, applied as a sensor update.

    Perception alone may leave an item's location unknown (it was expected in view and was not
    seen): the answer's ``meta.unknown_location`` and ``meta.warnings`` name each such item."""
    return serialized(recorded(await ops.observe_async(memory, body)))


@writes.post("/observations/batch", response_model=ObservationsOut)
async def observe_batch(body: ObservationsIn, memory: str, ops: OpsDep) -> Response:
    """Many observations in one request (a high-rate sensor), each applied in order as its own sensor
    update: one verdict per observation, in order.

    Always 200 once the request is valid: each item is its update (applied, noop, or rejected with
    its issues, as ``POST .../observations`` would have answered 422) or an error naming what kept it
    from being recorded (``version_conflict`` for a stale ``expected_version``: nothing was written
    for it). Items are written as if posted one after another; other writers' updates may fall between."""
    answers = await ops.observe_batch_async(memory, body)
    return serialized(ObservationsOut(updates=[a if isinstance(a, UpdateOut) else _item_error(a) for a in answers]))


def _item_error(exc: Exception) -> ItemErrorOut:
    status, code = status_of(exc)
    if status >= 500:
        raise exc  # not the item's fault: answered as the whole request's error, and logged
    return ItemErrorOut(error=code, status=status, message=str(exc))


@writes.post("/deltas", response_model=UpdateOut, responses=_CONFLICT)
async def apply_delta(body: DeltaIn, memory: str, ops: OpsDep) -> Response:
    """Facts to remove and to add, verified against the domain and the current state."""
    return serialized(recorded(await ops.apply_delta_async(memory, body)))


# the robots' frequent writes, answered by l3mp.service.hot_writes through these same functions
HOT = (
    HotRoute(tail="observations", body=ObservationIn, function=observe),
    HotRoute(tail="observations/batch", body=ObservationsIn, function=observe_batch),
    HotRoute(tail="deltas", body=DeltaIn, function=apply_delta),
)


@reads.get("/updates", response_model=HistoryOut)
def history(
    memory: str,
    ops: OpsDep,
    cursor: Annotated[int | None, Query(ge=0, le=2**53, description="next_cursor of the previous page")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    since_seq: Annotated[
        int | None, Query(ge=0, le=2**53, deprecated=True, description="the older name of cursor")
    ] = None,
) -> HistoryOut:
    """Every update, oldest first, a page at a time (``GET .../history`` filters the same list)."""
    after = cursor if cursor is not None else since_seq or 0
    page = ops.history(memory, HistoryIn(cursor=after, limit=limit))
    last = page.updates[-1].seq if page.updates else after
    return HistoryOut(updates=page.updates, next_cursor=page.next_cursor, next_since_seq=last)


@reads.get("/updates/{update_id}", response_model=UpdateOut)
def get_update(memory: str, update_id: str, ops: OpsDep) -> UpdateOut:
    return ops.get_update(memory, update_id)


@reads.get("/updates/{update_id}/explanation", response_model=ExplainOut)
def explain_update(memory: str, update_id: str, ops: OpsDep) -> ExplainOut:
    """The update and, in the domain's English, what it changed or why it was refused."""
    return ops.explain_update(memory, update_id)


@writes.post("/updates/{update_id}/revert", response_model=UpdateOut, responses=_CONFLICT)
def revert(memory: str, update_id: str, ops: OpsDep, body: Annotated[RevertIn | None, Body()] = None) -> UpdateOut:
    """Undo an applied update with a new compensating update (verified like any other)."""
    return recorded(ops.revert(memory, update_id, body or RevertIn()))
