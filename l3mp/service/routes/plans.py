"""Planning from memory: a request in English (through the model) or a PDDL goal."""

from __future__ import annotations

from fastapi import APIRouter

from kg_memory import WorldMemory
from l3mp.pipelines.openworld import OpenWorldPlanner
from l3mp.pipelines.plans import PlanConfig, TaskPlanner
from l3mp.service.deps import CallerDep, ServicesDep, WriteAccess
from l3mp.service.errors import BUSY_RESPONSES, RESPONSES
from l3mp.service.schemas import PlanIn, PlanOut
from l3mp.wiring import nl_reader

# planning changes nothing, but it spends model calls and planner time: it needs the write key
router = APIRouter(prefix="/memories/{memory}", tags=["plans"], dependencies=[WriteAccess], responses=RESPONSES)


@router.post("/plans", response_model=PlanOut, responses=BUSY_RESPONSES)
async def plan(body: PlanIn, memory: str, services: ServicesDep, caller: CallerDep) -> PlanOut:
    """A validated plan, or why there is none (``status``, ``timeout`` when the request's deadline
    ran out; ``needs_information``, ``impossible`` or ``needs_exploration`` in the open world);
    planning changes nothing. Runs in one of the service's model slots."""
    settings = services.settings

    def plan_request() -> PlanOut:
        optimal = settings.plan_optimal if body.optimal is None else body.optimal
        config = PlanConfig(
            retriever=settings.retriever,
            deadline=settings.plan_deadline,
            fallback=settings.retrieval_fallback,
            optimal=optimal,
            reader=nl_reader(settings),
            ranker=settings.nl_ranker,
            max_facts=settings.context_facts,
        )
        model = services.language_model() if body.goal is None else None
        world = WorldMemory.open(services.store, memory)
        if body.open_world:
            ask = OpenWorldPlanner(world, model, config, retriever=services.retriever())
            report = ask.plan(body.request, goal=body.goal, answers=body.answers, explored=body.explored)
            return PlanOut.model_validate(report.to_json())
        planner = TaskPlanner(world, model, config, retriever=services.retriever())
        return PlanOut.model_validate(planner.plan(body.request, goal=body.goal).to_json())

    # only requests in English call the model, so only they count against the key's rate
    return await services.gate.run(plan_request, key=caller if body.goal is None else None)
