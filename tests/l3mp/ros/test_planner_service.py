"""PlanSys2's planner/get_plan over a real memory (the surveyed example home, SQLite under tmp_path) and
the real planner: the plan it answers is checked by unified-planning's sequential plan validator on the
domain and the problem the problem expert gives, messages crossing the wire (CDR) both ways."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import unique_name
from ros_support import INTERFACES, call, running_operations, surveyed_home

from kg_memory import UP_LOCK
from l3mp.operations import Operations
from l3mp.operations.models import EntitiesIn, EntityBody, MemoryIn
from l3mp.ros.planner import GET_PLAN, planner
from l3mp.ros.plansys2_tree import tree_of
from l3mp.ros.problem_expert import problem_expert
from l3mp.ros.spec import ServiceSpec
from planning import GroundAction, parse_goal
from sim import HomeSpec, generate_home
from sim.floorplan import detours, home_facts

pytestmark = pytest.mark.slow


@dataclass
class Home:
    ops: Operations
    memory: str
    get_plan: ServiceSpec
    problem_expert: dict[str, ServiceSpec]

    @property
    def domain(self) -> str:
        return self.ops.memory(self.memory).domain.pddl

    def problem(self, goal: str) -> str:
        """The problem text PlanSys2's executor would send: the problem expert's, with ``goal`` set."""
        tree = tree_of(INTERFACES, parse_goal(goal))
        added = self.expert("add_problem_goal", "AddProblemGoal", tree=tree)
        assert added.success, added.error_info
        return str(self.expert("get_problem", "GetProblem").problem)

    def expert(self, name: str, kind: str, **request: Any) -> Any:
        return call(self.problem_expert[name].handle, f"plansys2_msgs/srv/{kind}", **request)

    def plan(self, domain: str, problem: str) -> Any:
        return call(self.get_plan.handle, self.get_plan.type_name, domain=domain, problem=problem)


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    with running_operations(tmp_path) as ops:
        memory = surveyed_home(ops)
        (spec,) = planner(ops, memory, INTERFACES)
        expert = {
            s.name.removeprefix("problem_expert/"): s for s in problem_expert(ops, memory, INTERFACES, None).services()
        }
        yield Home(ops, memory, spec, expert)


def validated(domain: str, problem: str, steps: list[GroundAction]) -> bool:
    """unified-planning's own verdict on the plan, not l3mp's."""
    from unified_planning.io import PDDLReader
    from unified_planning.plans import ActionInstance, SequentialPlan
    from unified_planning.shortcuts import PlanValidator, get_environment

    with UP_LOCK, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        get_environment().credits_stream = None
        parsed = PDDLReader().parse_problem_string(domain, problem)
        actions = [ActionInstance(parsed.action(s.name), tuple(parsed.object(a) for a in s.args)) for s in steps]
        with PlanValidator(name="sequential_plan_validator") as validator:
            result = validator.validate(parsed, SequentialPlan(actions))
    return bool(result.status.name == "VALID")


def test_the_service_is_plansys2s_and_slow(home: Home) -> None:
    assert (home.get_plan.name, home.get_plan.type_name, home.get_plan.slow) == (
        GET_PLAN,
        "plansys2_msgs/srv/GetPlan",
        True,
    )


def test_get_plan_answers_a_plan_unified_planning_accepts(home: Home) -> None:
    problem = home.problem("(and (on mug_1 shelf_1) (light_on lamp_1))")
    answer = home.plan(home.domain, problem)
    assert answer.success, answer.error_info
    items = list(answer.plan.items)
    steps = [GroundAction.parse(i.action) for i in items]
    assert {s.name for s in steps} >= {"pick", "place", "switch_on"}
    assert all(i.action.startswith("(") and i.action.endswith(")") for i in items)
    assert [i.time for i in items] == [float(n) for n in range(len(items))]  # sequential, one unit each
    assert {i.duration for i in items} == {1.0}
    assert validated(home.domain, problem, steps)
    assert not validated(home.domain, problem, steps[:-1])  # the validator can say no


def test_get_plan_takes_only_the_goal_from_the_problem(home: Home) -> None:
    # the problem's :init says the mug is already on the shelf; the memory knows better
    problem = home.problem("(on mug_1 shelf_1)").replace("(on mug_1 table_1)", "(on mug_1 shelf_1)")
    answer = home.plan("", problem)
    assert answer.success, answer.error_info
    assert [GroundAction.parse(i.action).name for i in answer.plan.items][-1] == "place"


def test_no_plan_is_no_success_with_the_reason(home: Home) -> None:
    problem = home.problem("(and (held mug_1 robot_1) (held book_1 robot_1))")
    answer = home.plan(home.domain, problem)
    assert not answer.success
    assert answer.error_info.startswith("no plan (")
    assert list(answer.plan.items) == []


@pytest.mark.parametrize(
    ("domain", "problem", "reason"),
    [
        ("(define (domain household) (:requirements :strips))", None, "of domain 'household'"),
        ("", "(define (problem p) (:domain example_home) (:init))", "exactly one (:goal"),
        ("", "(define (problem p) (:domain example_home) (:goal (on mug_9 shelf_1)))", "mug_9"),
    ],
)
def test_a_request_l3mp_cannot_plan_is_refused_saying_why(
    home: Home, domain: str, problem: str | None, reason: str
) -> None:
    answer = home.plan(domain, problem or home.problem("(on mug_1 shelf_1)"))
    assert not answer.success
    assert reason in answer.error_info


def test_with_action_costs_each_step_lasts_its_cost(tmp_path: Path) -> None:
    house = generate_home(HomeSpec(seed=4, rooms=8, items=10, people=2))
    with running_operations(tmp_path) as ops:
        memory = unique_name("travel")
        ops.create_memory(MemoryIn(name=memory, domain="household-travel"))
        facts = [str(f) for f in home_facts(house, ops.memory(memory).domain)]
        entities = [EntityBody.of(e) for e in house.entities]
        assert ops.add_entities(memory, EntitiesIn(entities=entities, facts=facts)).status == "applied"
        (get_plan,) = planner(ops, memory, INTERFACES)
        room = detours(house)[0].room
        problem = f"(define (problem p) (:domain household-travel) (:goal (robot_at robot_1 {room})))"
        answer = call(get_plan.handle, get_plan.type_name, domain="", problem=problem)
        assert answer.success, answer.error_info
        items = list(answer.plan.items)
        assert items
        distances = {str(f.args): f.value for f in ops.memory(memory).facts(predicate="distance")}
        for item in items:
            step = GroundAction.parse(item.action)
            assert step.name == "move"
            assert item.duration == pytest.approx(distances[str(step.args[1:])])
        starts = [sum(i.duration for i in items[:n]) for n in range(len(items))]
        assert [i.time for i in items] == pytest.approx(starts)
