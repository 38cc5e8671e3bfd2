"""Planning from memory: a request in English (through the model) or a PDDL goal."""

from __future__ import annotations

from fastapi import APIRouter

from l3mp.pipelines.plans import PlanConfig, TaskPlanner
from l3mp.service.deps import MemoryDep, ReadAccess, ServicesDep
from l3mp.service.errors import RESPONSES
from l3mp.service.schemas import PlanIn, PlanOut

router = APIRouter(prefix="/memories/{memory}", tags=["plans"], dependencies=[ReadAccess], responses=RESPONSES)


@router.post("/plans", response_model=PlanOut)
def plan(body: PlanIn, memory: MemoryDep, services: ServicesDep) -> PlanOut:
    """A validated plan, or why there is none (``status``); planning changes nothing."""
    settings = services.settings
    config = PlanConfig(
        retriever=settings.retriever, deadline=settings.plan_deadline, fallback=settings.retrieval_fallback
    )
    model = services.language_model() if body.goal is None else None
    planner = TaskPlanner(memory, model, config, retriever=services.retriever())
    return PlanOut.model_validate(planner.plan(body.request, goal=body.goal).to_json())
