"""Planning from memory: a request in English (through the model) or a PDDL goal."""

from __future__ import annotations

from fastapi import APIRouter

from l3mp.operations.models import PlanIn, PlanOut
from l3mp.service.deps import CallerDep, OpsDep, WriteAccess
from l3mp.service.errors import BUSY_RESPONSES, RESPONSES

# planning changes nothing, but it spends model calls and planner time: it needs the write key
router = APIRouter(prefix="/memories/{memory}", tags=["plans"], dependencies=[WriteAccess], responses=RESPONSES)


@router.post("/plans", response_model=PlanOut, responses=BUSY_RESPONSES)
async def plan(body: PlanIn, memory: str, ops: OpsDep, caller: CallerDep) -> PlanOut:
    """A validated plan, or why there is none (``status``, ``timeout`` when the request's deadline
    ran out; ``needs_information``, ``impossible`` or ``needs_exploration`` in the open world);
    planning changes nothing. Runs in one of the service's model slots."""
    return await ops.plan(memory, body, caller=caller)
