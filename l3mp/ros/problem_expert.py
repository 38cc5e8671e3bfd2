"""PlanSys2's problem expert over one l3mp memory: its services, as PlanSys2's clients call them.

What is kept where.

* Instances and predicates live in the memory, and every read goes to it, so what other doors (REST,
  MCP, perception) write is seen here at once. Every write goes through the verifier and the history as
  any other update: predicates with ``Operations.apply_delta`` (source ``api``), new instances with
  ``Operations.add_entities`` (source ``sensor``: in l3mp only perception creates entities, and a
  robot's ROS side declaring an object is that). The update's input names the service and what it
  asked. A refused write answers ``success=false`` with the verifier's reasons in ``error_info``; the
  state is unchanged (the refusal itself is in the history, as every refused update is).
* Instances that must be somewhere. An instance of a type some ``at_least_one`` invariant places (an
  item, the robot) cannot exist in l3mp without a location, so declaring one keeps it *pending* in this
  node until the first predicate that names it arrives; then the instance and that fact are one
  verified update (a fact that does not place it is refused with the invariant's reason, and the
  instance stays pending). Other instances (rooms, furniture, people) are created at once. Pending
  instances are listed with the others (``get_problem_instance(s)``, ``knowledge``) but are not in the
  memory: they are lost when the node stops, and ``get_problem`` leaves them out.
* The goal is the node's, not the memory's: kept here, not persisted.
* Adding a predicate that already holds succeeds and writes nothing, as in PlanSys2. l3mp does not
  delete what it has known: ``remove_problem_instance`` removes a pending instance, and refuses one
  the memory holds (its history names it; remove its predicates instead). ``clear_problem_knowledge``
  clears the goal and the pending instances only and answers ``success=false`` saying the memory was
  kept: a lifelong memory is not erased through PlanSys2's reset.
* ``add_problem`` merges a PDDL problem into the memory: its objects the memory lacks and its
  ``:init`` facts that do not hold yet are one verified update (nothing is removed: facts of the memory
  the problem leaves out stay), then its ``:goal`` becomes the goal. An object the memory holds with
  another type, or an ``:init`` that contradicts the memory (the mug on two tables), refuses the
  whole problem with the reasons, and the goal is left as it was.
* Functions (numeric fluents) are not served; the domain's action costs are facts of the memory
  (``Knowledge.functions``) that perception writes.

After every accepted change this node publishes ``std_msgs/Empty`` on ``problem_expert/update_notify``
and the whole knowledge (``plansys2_msgs/Knowledge``, latched) on ``problem_expert/knowledge``; writes
through other doors are not announced here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from kg_memory import Domain, Entity, Fact, L3mpError, WorldMemory
from kg_memory.formula import Formula, Truth
from kg_memory.model import is_pddl_name, normalise_name
from kg_memory.unknowns import placing_invariants
from l3mp.operations import Operations
from l3mp.operations.models import DeltaIn, EntitiesIn, EntityBody, UpdateOut
from l3mp.ros.plansys2_tree import entity_of, fact_of, formula_of, node_of, param_of, tree_of
from l3mp.ros.spec import Publisher, ServiceSpec, TopicSpec
from l3mp.ros.types import Interfaces
from planning import ActionEvaluator, World, check_goal, problem_pddl
from planning.pddl_io import read_problem

PREFIX = "problem_expert/"
UPDATE_NOTIFY = f"{PREFIX}update_notify"
KNOWLEDGE = f"{PREFIX}knowledge"
_EMPTY_GOAL = Truth(True)


logger = logging.getLogger(__name__)


class _Refused(Exception):
    """A request this node answers with ``success=false`` and ``reason``."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def problem_expert(ops: Operations, memory: str, interfaces: Interfaces, publisher: Publisher | None) -> ProblemExpert:
    """PlanSys2's problem expert over ``memory`` (which must exist)."""
    ops.memory(memory)  # an unknown memory fails here, not at the first request
    return ProblemExpert(ops=ops, memory=memory, interfaces=interfaces, publisher=publisher)


class ProblemExpert:
    """The problem expert's services and topics; holds the goal and the pending instances."""

    def __init__(
        self, *, ops: Operations, memory: str, interfaces: Interfaces, publisher: Publisher | None = None
    ) -> None:
        self.ops = ops
        self.memory = memory
        self.interfaces = interfaces
        self.publisher = publisher
        self._goal: Formula | None = None
        self._pending: dict[str, Entity] = {}
        self._created: datetime | None = None  # the memory the goal and the pending instances are for
        self._lock = threading.RLock()  # this node's changes and what it publishes about them, in turn

    # -- what the node serves ---------------------------------------------------------------------

    def services(self) -> list[ServiceSpec]:
        handlers: dict[str, tuple[str, Callable[[Any], Any]]] = {
            "add_problem": ("AddProblem", self.add_problem),
            "add_problem_goal": ("AddProblemGoal", self.add_problem_goal),
            "add_problem_instance": ("AffectParam", self.add_problem_instance),
            "add_problem_predicate": ("AffectNode", self.add_problem_predicate),
            "clear_problem_knowledge": ("ClearProblemKnowledge", self.clear_problem_knowledge),
            "exist_problem_predicate": ("ExistNode", self.exist_problem_predicate),
            "get_problem": ("GetProblem", self.get_problem),
            "get_problem_goal": ("GetProblemGoal", self.get_problem_goal),
            "get_problem_instance": ("GetProblemInstanceDetails", self.get_problem_instance),
            "get_problem_instances": ("GetProblemInstances", self.get_problem_instances),
            "get_problem_predicate": ("GetNodeDetails", self.get_problem_predicate),
            "get_problem_predicates": ("GetStates", self.get_problem_predicates),
            "is_problem_goal_satisfied": ("IsProblemGoalSatisfied", self.is_problem_goal_satisfied),
            "remove_problem_goal": ("RemoveProblemGoal", self.remove_problem_goal),
            "remove_problem_instance": ("AffectParam", self.remove_problem_instance),
            "remove_problem_predicate": ("AffectNode", self.remove_problem_predicate),
        }
        return [
            ServiceSpec(name=PREFIX + name, type_name=f"plansys2_msgs/srv/{kind}", handle=self._answering(kind, handle))
            for name, (kind, handle) in sorted(handlers.items())
        ]

    def topics(self) -> list[TopicSpec]:
        return [
            TopicSpec(name=UPDATE_NOTIFY, type_name="std_msgs/msg/Empty"),
            TopicSpec(name=KNOWLEDGE, type_name="plansys2_msgs/msg/Knowledge", latched=True),
        ]

    def _answering(self, kind: str, handle: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """``handle``, with a refusal or a bad request answered as ``success=false`` and the reason."""
        response = f"plansys2_msgs/srv/{kind}_Response"

        def answer(request: Any) -> Any:
            try:
                self._world()  # the goal and the pending instances held are the memory's of now
                return handle(request)
            except _Refused as refused:
                reason = refused.reason
            except (L3mpError, ValueError) as exc:  # bad names, trees or PDDL; ValueError: a model's validation
                reason = str(exc)
            if kind == "ExistNode":  # its answer has no room for a reason: it does not exist
                return self.interfaces.new(response, exist=False)
            return self.interfaces.new(response, success=False, error_info=reason)

        return answer

    def _ok(self, kind: str, **fields: Any) -> Any:
        return self.interfaces.new(f"plansys2_msgs/srv/{kind}_Response", success=True, **fields)

    def _world(self) -> WorldMemory:
        """The memory now; the goal and the pending instances of one deleted meanwhile, and another made
        under its name, are dropped with it (they were that memory's problem)."""
        world = self.ops.memory(self.memory)
        with self._lock:
            if self._created is not None and world.created != self._created and (self._goal or self._pending):
                logger.warning("%s was deleted and made again: its goal and pending instances are dropped", self.memory)
                self._goal, self._pending = None, {}
            self._created = world.created
        return world

    # -- instances --------------------------------------------------------------------------------

    def add_problem_instance(self, request: Any) -> Any:
        entity = entity_of(request.param)
        with self._lock:
            world = self._world()
            existing = self._instance(world, entity.name)
            if existing is not None:
                if existing.type != entity.type:
                    raise _Refused(f"instance {entity.name} exists already, as a {existing.type}")
                return self._ok("AffectParam")
            if entity.type not in world.domain.types:
                raise _Refused(
                    f"unknown type {entity.type!r}; the domain's types: {', '.join(sorted(world.domain.types))}"
                )
            if needs_place(world.domain, entity):
                self._pending[entity.name] = entity
            else:
                self._write_entities([entity], [], f"add_problem_instance: {entity.name} - {entity.type}")
            self._announce()
        return self._ok("AffectParam")

    def remove_problem_instance(self, request: Any) -> Any:
        name = normalise_name(request.param.name)
        with self._lock:
            if self._pending.pop(name, None) is not None:
                self._announce()
                return self._ok("AffectParam")
            if name in self._world().entities([name]):
                raise _Refused(
                    f"{name} is in the memory, which keeps every entity it has known (its history names it); "
                    "remove its predicates instead"
                )
        raise _Refused(f"no instance {name}")

    def get_problem_instances(self, request: Any) -> Any:
        entities = self._instances()
        return self._ok("GetProblemInstances", instances=[param_of(self.interfaces, e) for e in entities])

    def get_problem_instance(self, request: Any) -> Any:
        name = normalise_name(request.instance)
        found = self._instance(self._world(), name)
        if found is None:
            raise _Refused(f"no instance {name}")
        return self._ok("GetProblemInstanceDetails", instance=param_of(self.interfaces, found))

    def _instance(self, world: WorldMemory, name: str) -> Entity | None:
        with self._lock:
            pending = self._pending.get(name)
        if pending is not None:
            return pending
        return world.entities([name]).get(name) if is_pddl_name(name) else None

    def _instances(self) -> list[Entity]:
        stored = self._world().entities()
        with self._lock:
            pending = dict(self._pending)
        return [e for _, e in sorted({**stored, **pending}.items())]

    # -- predicates -------------------------------------------------------------------------------

    def add_problem_predicate(self, request: Any) -> Any:
        fact = fact_of(request.node)
        with self._lock:
            waiting = [self._pending[a] for a in dict.fromkeys(fact.args) if a in self._pending]
            if waiting:
                self._write_entities(waiting, [fact], f"add_problem_predicate: {fact}")
                for entity in waiting:
                    del self._pending[entity.name]
            elif self._holds(fact):
                return self._ok("AffectNode")  # as PlanSys2: adding what holds changes nothing
            else:
                self._write_delta(DeltaIn(add=[str(fact)], input=_input(f"add_problem_predicate: {fact}")))
            self._announce()
        return self._ok("AffectNode")

    def remove_problem_predicate(self, request: Any) -> Any:
        fact = fact_of(request.node)
        with self._lock:
            waiting = sorted(a for a in fact.args if a in self._pending)
            if waiting:
                raise _Refused(f"{fact} does not hold: {', '.join(waiting)} is declared but has no predicates yet")
            self._write_delta(DeltaIn(remove=[str(fact)], input=_input(f"remove_problem_predicate: {fact}")))
            self._announce()
        return self._ok("AffectNode")

    def get_problem_predicates(self, request: Any) -> Any:
        facts = sorted((f for f in self._world().facts() if not f.numeric), key=str)
        return self._ok("GetStates", states=[node_of(self.interfaces, f) for f in facts])

    def get_problem_predicate(self, request: Any) -> Any:
        fact = Fact.parse(request.expression)
        if not self._holds(fact):
            raise _Refused(f"{fact} does not hold")
        return self._ok("GetNodeDetails", node=node_of(self.interfaces, fact))

    def exist_problem_predicate(self, request: Any) -> Any:
        exists = self._holds(fact_of(request.node))
        return self.interfaces.new("plansys2_msgs/srv/ExistNode_Response", exist=exists)

    def _holds(self, fact: Fact) -> bool:
        return fact in self._world().facts(predicate=fact.predicate, entity=fact.args[0] if fact.args else None)

    # -- goals ------------------------------------------------------------------------------------

    def add_problem_goal(self, request: Any) -> Any:
        goal = self._checked(formula_of(request.tree))
        with self._lock:
            self._goal = goal
            self._announce()
        return self._ok("AddProblemGoal")

    def get_problem_goal(self, request: Any) -> Any:
        with self._lock:
            goal = self._goal
        return self._ok("GetProblemGoal", tree=tree_of(self.interfaces, goal or _EMPTY_GOAL))

    def remove_problem_goal(self, request: Any) -> Any:
        with self._lock:
            self._goal = None
            self._announce()
        return self._ok("RemoveProblemGoal")

    def is_problem_goal_satisfied(self, request: Any) -> Any:
        goal = self._checked(formula_of(request.tree))
        world = self._world()
        state = world.state()
        constants = world.domain.constants
        here = World(world.domain, (e for n, e in state.entities.items() if n not in constants), state.facts)
        satisfied = ActionEvaluator(world.domain).evaluate(goal, here)
        return self._ok("IsProblemGoalSatisfied", satisfied=satisfied)

    def _checked(self, goal: Formula) -> Formula:
        """``goal`` checked against the domain and the memory's entities (names, arity, types)."""
        world = self._world()
        check = check_goal(str(goal), world.domain, world.entities())
        if check.goal is None:
            raise _Refused(f"goal {goal}: {'; '.join(check.issues)}")
        tree_of(self.interfaces, check.goal)  # a goal this node could not give back is refused now
        return check.goal

    # -- the whole problem ------------------------------------------------------------------------

    def get_problem(self, request: Any) -> Any:
        world = self._world()
        state = world.state()
        with self._lock:
            goal = self._goal or _EMPTY_GOAL
        name = self.memory if is_pddl_name(self.memory) else "l3mp"
        text = problem_pddl(world.domain, state.entities.values(), state.facts, goal, name=name)
        return self._ok("GetProblem", problem=text)

    def add_problem(self, request: Any) -> Any:
        world = self._world()
        problem = read_problem(world.domain, request.problem, "the problem given to add_problem")
        with self._lock:
            goal = None if problem.goal == _EMPTY_GOAL else self._checked_with(problem.goal, problem.entities)
            new = self._new_objects(world, problem.entities)
            facts = sorted(problem.facts - world.facts(), key=str)
            what = f"add_problem: {len(new)} objects, {len(facts)} facts"
            if new:
                self._write_entities(new, facts, what)
                for entity in new:
                    self._pending.pop(entity.name, None)
            elif facts:
                self._write_delta(DeltaIn(add=[str(f) for f in facts], input=_input(what)))
            if goal is not None:
                self._goal = goal
            self._announce()
        return self._ok("AddProblem")

    def _checked_with(self, goal: Formula, entities: tuple[Entity, ...]) -> Formula:
        world = self._world()
        known = {**world.entities(), **{e.name: e for e in entities}}
        check = check_goal(str(goal), world.domain, known)
        if check.goal is None:
            raise _Refused(f"the problem's goal {goal}: {'; '.join(check.issues)}")
        tree_of(self.interfaces, check.goal)
        return check.goal

    def _new_objects(self, world: WorldMemory, entities: tuple[Entity, ...]) -> list[Entity]:
        stored = world.entities([e.name for e in entities])
        clashes = [
            f"{e.name} is a {stored[e.name].type} in the memory, a {e.type} in the problem"
            for e in entities
            if e.name in stored and stored[e.name].type != e.type
        ]
        if clashes:
            raise _Refused("; ".join(clashes))
        return [e for e in entities if e.name not in stored]

    def clear_problem_knowledge(self, request: Any) -> Any:
        with self._lock:
            self._goal = None
            self._pending.clear()
            self._announce()
        raise _Refused(
            "cleared the goal and the declared instances not yet in the memory; the memory's instances and "
            "predicates were kept: l3mp does not erase a lifelong memory through PlanSys2 (remove predicates "
            "one by one, or use l3mp's own tools)"
        )

    # -- writing and announcing -------------------------------------------------------------------

    def _write_entities(self, entities: list[Entity], facts: list[Fact], what: str) -> None:
        request = EntitiesIn(
            entities=[EntityBody.of(e) for e in entities], facts=[str(f) for f in facts], input=_input(what)
        )
        _accepted(self.ops.add_entities(self.memory, request))

    def _write_delta(self, request: DeltaIn) -> None:
        _accepted(self.ops.apply_delta(self.memory, request))

    def _announce(self) -> None:
        if self.publisher is None:
            return
        self.publisher.publish(UPDATE_NOTIFY, self.interfaces.new("std_msgs/msg/Empty"))
        self.publisher.publish(KNOWLEDGE, self.knowledge())

    def knowledge(self) -> Any:
        """``plansys2_msgs/Knowledge``: instance names, predicates and functions as PDDL, the goal."""
        facts = sorted(self._world().facts(), key=str)
        with self._lock:
            goal = "" if self._goal is None else str(self._goal)
        return self.interfaces.new(
            "plansys2_msgs/msg/Knowledge",
            instances=[e.name for e in self._instances()],
            predicates=[str(f) for f in facts if not f.numeric],
            functions=[str(f) for f in facts if f.numeric],
            goal=goal,
        )


def needs_place(domain: Domain, entity: Entity) -> bool:
    """Whether the domain's rules say an entity of this type must be somewhere (``at_least_one``)."""
    return any(domain.is_subtype(entity.type, i.type) for i in placing_invariants(domain))


def _input(what: str) -> str:
    return f"ROS 2 {PREFIX}{what}"


def _accepted(update: UpdateOut) -> None:
    """Nothing, if the update was applied (or changed nothing); else the verifier's reasons, refused."""
    if update.status == "rejected":
        reasons = "; ".join(i.message for i in update.issues) or "the update was rejected"
        raise _Refused(reasons)
