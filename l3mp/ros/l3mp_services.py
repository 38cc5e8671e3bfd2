"""l3mp's own ROS 2 services over one memory: ``~/report``, ``~/plan`` and ``~/observe`` (``l3mp_msgs``).

Each handler only translates: the request message into the operation's request model, one call of
:class:`~l3mp.operations.Operations`, the answer into the response message. A refused update is a
normal answer (``accepted`` false, its reasons); so is an error (unknown memory, model unavailable or
busy, a version conflict, a malformed request): ``status`` ``error`` and the message, nothing raised,
since a ROS 2 client can only time out on a service that never answers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from kg_memory import L3mpError, UpdateStatus
from l3mp.operations import Operations
from l3mp.operations.models import NLUpdateIn, ObservationIn, PlanIn, PlanOut, UpdateOut
from l3mp.ros.spec import ServiceSpec
from l3mp.ros.types import Interfaces

logger = logging.getLogger(__name__)

REPORT = "l3mp_msgs/srv/Report"
PLAN = "l3mp_msgs/srv/Plan"
OBSERVE = "l3mp_msgs/srv/Observe"
ERROR = "error"  # the status of an answer that records nothing

# held by the memory: the update was applied, or what it says was already so
_ACCEPTED = frozenset({UpdateStatus.APPLIED.value, UpdateStatus.NOOP.value})


def l3mp_services(ops: Operations, memory: str, interfaces: Interfaces) -> list[ServiceSpec]:
    """The services over ``memory``, in the node's private namespace. Report and plan may wait on the
    language model or the planner, so they are ``slow`` (a pool of their own); observe is quick."""
    door = _Door(ops=ops, memory=memory, interfaces=interfaces)
    return [
        ServiceSpec(name="~/report", type_name=REPORT, handle=door.report, slow=True),
        ServiceSpec(name="~/plan", type_name=PLAN, handle=door.plan, slow=True),
        ServiceSpec(name="~/observe", type_name=OBSERVE, handle=door.observe),
    ]


def update_reasons(update: UpdateOut) -> list[str]:
    """Why an update was refused and what it warns of (perception's lost locations, kept types)."""
    warnings = update.meta.get("warnings") or []
    return [i.message for i in update.issues] + [str(w) for w in warnings]


def update_fields(update: UpdateOut) -> dict[str, Any]:
    """The fields an answer and an ``Update`` message share: what the update did, and why."""
    return {
        "status": update.status,
        "version": update.version,
        "added": list(update.delta.add),
        "removed": list(update.delta.remove),
        "new_entities": [e.name for e in update.delta.new_entities],
        "reasons": update_reasons(update),
    }


@dataclass(frozen=True, kw_only=True)
class _Door:
    ops: Operations
    memory: str
    interfaces: Interfaces

    def report(self, request: Any) -> Any:
        def work() -> UpdateOut:
            # handlers run in worker threads without an event loop; the operation's model gate needs one
            return asyncio.run(self.ops.report(self.memory, NLUpdateIn(text=request.text)))

        return self._update_answer(f"{REPORT}_Response", work)

    def observe(self, request: Any) -> Any:
        def work() -> UpdateOut:
            return self.ops.observe(self.memory, _observation(request))

        return self._update_answer(f"{OBSERVE}_Response", work)

    def plan(self, request: Any) -> Any:
        response = f"{PLAN}_Response"
        try:
            answer = asyncio.run(self.ops.plan(self.memory, _plan_in(request)))
        except (L3mpError, ValidationError) as exc:
            return self.interfaces.new(response, status=ERROR, issues=[_message(exc)])
        except Exception as exc:  # a bug: logged in full, answered all the same
            logger.exception("~/plan of %s", self.memory)
            return self.interfaces.new(response, status=ERROR, issues=[_message(exc)])
        return self.interfaces.new(response, **_plan_fields(answer))

    def _update_answer(self, response: str, work: Callable[[], UpdateOut]) -> Any:
        try:
            update = work()
        except (L3mpError, ValidationError) as exc:
            return self.interfaces.new(response, status=ERROR, reasons=[_message(exc)])
        except Exception as exc:  # a bug: logged in full, answered all the same
            logger.exception("%s of %s", response, self.memory)
            return self.interfaces.new(response, status=ERROR, reasons=[_message(exc)])
        fields = update_fields(update)
        return self.interfaces.new(response, accepted=update.status in _ACCEPTED, update_id=update.id, **fields)


def _observation(request: Any) -> ObservationIn:
    entities = [
        {
            "name": e.name,
            "type": e.type,
            "label": e.label,
            "properties": list(e.properties),
            "relations": [(r.predicate, r.object) for r in e.relations],
        }
        for e in request.entities
    ]
    fields: dict[str, Any] = {"room": request.room, "entities": entities, "opaque": list(request.opaque)}
    if request.robot:
        fields["robot"] = request.robot
    if request.expected_version >= 0:
        fields["expected_version"] = request.expected_version
    return ObservationIn.model_validate(fields)


def _plan_in(request: Any) -> PlanIn:
    return PlanIn(
        request=request.request,
        goal=request.goal or None,
        open_world=request.open_world,
        answers={a.mention: a.entity for a in request.answers},
        explored=list(request.explored),
    )


def _plan_fields(answer: PlanOut) -> dict[str, Any]:
    return {
        "status": str(answer.status),
        "goal": answer.goal or "",
        "steps": list(answer.plan),
        "explanation": list(answer.explanation),
        "questions": [q.sentence() for q in answer.questions],
        "issues": list(answer.issues),
        "cost": float(answer.cost or 0.0),
        "optimal": answer.optimal,
        "version": answer.version,
    }


def _message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):  # one line per problem, without pydantic's links
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'request'}: {e['msg']}" for e in exc.errors())
    return str(exc) or type(exc).__name__
