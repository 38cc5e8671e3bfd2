"""Planning from memory: a request in English (through the model) or a PDDL goal."""

from __future__ import annotations

from fastapi import APIRouter

from l3mp.pipelines.openworld import OpenWorldPlanner
from l3mp.pipelines.plans import PlanConfig, TaskPlanner
from l3mp.service.deps import MemoryDep, ReadAccess, ServicesDep
from l3mp.service.errors import RESPONSES
from l3mp.service.schemas import PlanIn, PlanOut

router = APIRouter(prefix="/memories/{memory}", tags=["plans"], dependencies=[ReadAccess], responses=RESPONSES)


@router.post("/plans", response_model=PlanOut)
def plan(body: PlanIn, memory: MemoryDep, services: ServicesDep) -> PlanOut:
    """A validated plan, or why there is none (``status``); planning changes nothing."""
    config = PlanConfig(retriever=services.settings.retriever)
    model = services.language_model() if body.goal is None else None
    if body.open_world:
        ask = OpenWorldPlanner(memory, model, config, retriever=services.retriever())
        report = ask.plan(body.request, goal=body.goal, answers=body.answers, explored=body.explored)
        return PlanOut.model_validate(report.to_json())
    planner = TaskPlanner(memory, model, config, retriever=services.retriever())
    return PlanOut.model_validate(planner.plan(body.request, goal=body.goal).to_json())
