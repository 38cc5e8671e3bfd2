"""PlanSys2's planner over one l3mp memory: ``planner/get_plan``.

PlanSys2 sends a domain and a problem as PDDL text. l3mp plans from what the memory knows, in the
memory's own domain, so only the problem's ``(:goal ...)`` is taken from the request; its objects and
``:init`` are not read (put them into the memory through the problem expert first). A domain or
problem naming another domain than the memory's is refused, as is a goal the memory cannot read.
The plan comes from ``Operations.plan`` (validated against the memory's whole state); when there is
none, ``success`` is false and ``error_info`` gives the outcome and its issues.

The plan is sequential: step ``i`` starts when step ``i - 1`` ends. Each step's ``duration`` is its
action cost in a domain with action costs, else 1, so ``time`` is the step's index without costs and
the cost of the steps before it with them.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from kg_memory import L3mpError
from l3mp.operations import Operations
from l3mp.operations.models import PlanIn, PlanOut
from l3mp.ros.spec import ServiceSpec
from l3mp.ros.types import Interfaces
from planning import ActionEvaluator, GroundAction, World
from planning.pddl_io import goal_of

GET_PLAN = "planner/get_plan"
_DOMAIN_NAME = re.compile(r"\(\s*domain\s+([^\s()]+)", re.IGNORECASE)  # (define (domain X) / (:domain X)


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def planner(ops: Operations, memory: str, interfaces: Interfaces) -> list[ServiceSpec]:
    """``planner/get_plan`` (``plansys2_msgs/srv/GetPlan``) over ``memory``; it may take seconds."""
    ops.memory(memory)  # an unknown memory fails here, not at the first request
    response = "plansys2_msgs/srv/GetPlan_Response"

    def get_plan(request: Any) -> Any:
        try:
            items = _plan(ops, memory, interfaces, request.domain, request.problem)
        except _Refused as refused:
            return interfaces.new(response, success=False, error_info=refused.reason)
        except (L3mpError, ValueError) as exc:  # PDDL that does not read, a goal too long for the request model
            return interfaces.new(response, success=False, error_info=str(exc))
        plan = interfaces.new("plansys2_msgs/msg/Plan", items=items)
        return interfaces.new(response, success=True, plan=plan)

    return [ServiceSpec(name=GET_PLAN, type_name="plansys2_msgs/srv/GetPlan", handle=get_plan, slow=True)]


def _plan(ops: Operations, memory: str, interfaces: Interfaces, domain_text: str, problem_text: str) -> list[Any]:
    domain = ops.memory(memory).domain
    for what, text in (("domain", domain_text), ("problem", problem_text)):
        named = _DOMAIN_NAME.search(text)
        if named and named.group(1).lower() != domain.name:
            raise _Refused(f"the {what} is of domain {named.group(1)!r}; memory {memory!r} plans in {domain.name!r}")
    goal = goal_of(problem_text, "the problem given to get_plan")
    # handlers run in worker threads with no event loop of their own
    outcome = asyncio.run(ops.plan(memory, PlanIn(goal=str(goal))))
    if outcome.status != "solved":
        raise _Refused(_why_not(outcome))
    return _items(ops, memory, interfaces, [GroundAction.parse(step) for step in outcome.plan])


def _why_not(outcome: PlanOut) -> str:
    issues = "; ".join(dict.fromkeys(outcome.issues))  # each tier may say the same
    return f"no plan ({outcome.status}){': ' + issues if issues else ''}"


def _items(ops: Operations, memory: str, interfaces: Interfaces, steps: list[GroundAction]) -> list[Any]:
    world = ops.memory(memory)
    state = world.state()
    constants = world.domain.constants
    here = World(world.domain, (e for n, e in state.entities.items() if n not in constants), state.facts)
    evaluator = ActionEvaluator(world.domain)
    items, start = [], 0.0
    for step in steps:
        duration = evaluator.cost(step, here) if world.domain.costs else 1.0
        duration = 1.0 if duration is None else duration  # a cost without its value: the planner did not use it
        items.append(interfaces.new("plansys2_msgs/msg/PlanItem", time=start, action=str(step), duration=duration))
        start += duration
    return items
