"""PlanSys2's problem expert over a real memory (the surveyed example home, SQLite under tmp_path): its
handlers called with messages that cross the wire (CDR) both ways, writes checked in the memory and
its history, refusals leaving the state as it was, and what is published on the two topics."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ros_support import INTERFACES, RecordingPublisher, call, running_operations, surveyed_home

from kg_memory import UP_LOCK, Fact
from l3mp.operations import Operations
from l3mp.operations.models import DeltaIn, HistoryIn, MemoryIn
from l3mp.ros.plansys2_tree import NodeType, formula_of, node_of, tree_of
from l3mp.ros.problem_expert import KNOWLEDGE, UPDATE_NOTIFY, ProblemExpert, problem_expert
from planning import parse_goal

SRV = "plansys2_msgs/srv/"


@dataclass
class Expert:
    ops: Operations
    memory: str
    expert: ProblemExpert
    published: RecordingPublisher

    def call(self, service: str, **request: Any) -> Any:
        spec = next(s for s in self.expert.services() if s.name == f"problem_expert/{service}")
        return call(spec.handle, spec.type_name, **request)

    def facts(self) -> list[str]:
        return self.ops.state(self.memory).facts

    def version(self) -> int:
        return self.ops.state(self.memory).version

    def entity_names(self) -> list[str]:
        return [e.name for e in self.ops.entities(self.memory)]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Expert]:
    with running_operations(tmp_path) as ops:
        memory = surveyed_home(ops)
        published = RecordingPublisher()
        yield Expert(ops, memory, problem_expert(ops, memory, INTERFACES, published), published)


def predicate(text: str) -> Any:
    return node_of(INTERFACES, Fact.parse(text))


def param(name: str, type_: str = "") -> Any:
    return INTERFACES.new("plansys2_msgs/msg/Param", name=name, type=type_)


def goal_tree(text: str) -> Any:
    return tree_of(INTERFACES, parse_goal(text))


# -- what it serves ---------------------------------------------------------------------------------

PLANSYS2_TYPES = {
    "add_problem": "AddProblem",
    "add_problem_goal": "AddProblemGoal",
    "add_problem_instance": "AffectParam",
    "add_problem_predicate": "AffectNode",
    "clear_problem_knowledge": "ClearProblemKnowledge",
    "exist_problem_predicate": "ExistNode",
    "get_problem": "GetProblem",
    "get_problem_goal": "GetProblemGoal",
    "get_problem_instance": "GetProblemInstanceDetails",
    "get_problem_instances": "GetProblemInstances",
    "get_problem_predicate": "GetNodeDetails",
    "get_problem_predicates": "GetStates",
    "is_problem_goal_satisfied": "IsProblemGoalSatisfied",
    "remove_problem_goal": "RemoveProblemGoal",
    "remove_problem_instance": "AffectParam",
    "remove_problem_predicate": "AffectNode",
}


def test_it_serves_plansys2s_names_with_plansys2s_types(home: Expert) -> None:
    served = {s.name: s.type_name for s in home.expert.services()}
    assert served == {f"problem_expert/{n}": SRV + t for n, t in PLANSYS2_TYPES.items()}
    assert set(served.values()) <= INTERFACES.services
    assert not any(s.slow for s in home.expert.services())
    topics = {t.name: (t.type_name, t.latched) for t in home.expert.topics()}
    assert topics == {
        UPDATE_NOTIFY: ("std_msgs/msg/Empty", False),
        KNOWLEDGE: ("plansys2_msgs/msg/Knowledge", True),
    }


def test_an_unknown_memory_is_refused_at_once(home: Expert) -> None:
    with pytest.raises(Exception, match="nowhere"):
        problem_expert(home.ops, "nowhere", INTERFACES, None)


# -- predicates -------------------------------------------------------------------------------------


def test_predicates_are_written_to_the_memory_and_read_back(home: Expert) -> None:
    removed = home.call("remove_problem_predicate", node=predicate("(on mug_1 table_1)"))
    assert not removed.success and "must be somewhere" in removed.error_info  # alone it leaves the mug nowhere

    home.ops.apply_delta(home.memory, DeltaIn(remove=["(robot_at robot_1 hall)"], add=["(robot_at robot_1 kitchen)"]))
    added = home.call("add_problem_predicate", node=predicate("(light_on lamp_1)"))
    assert added.success, added.error_info
    assert "(light_on lamp_1)" in home.facts()

    states = home.call("get_problem_predicates").states
    assert all(n.node_type == NodeType.PREDICATE for n in states)
    read = {str(Fact(n.name, tuple(p.name for p in n.parameters))) for n in states}
    assert read == set(home.facts())  # the REST-style write above is seen too

    history = home.ops.history(home.memory, HistoryIn(order="newest", limit=1)).updates[0]
    assert (history.source, history.status, history.delta.add) == ("api", "applied", ["(light_on lamp_1)"])
    assert history.input == "ROS 2 problem_expert/add_problem_predicate: (light_on lamp_1)"


def test_a_predicate_is_found_by_its_text_and_by_its_node(home: Expert) -> None:
    found = home.call("get_problem_predicate", expression="(on mug_1 table_1)")
    assert found.success and found.node.name == "on"
    assert [p.name for p in found.node.parameters] == ["mug_1", "table_1"]
    missing = home.call("get_problem_predicate", expression="(on mug_1 shelf_1)")
    assert not missing.success and "does not hold" in missing.error_info
    assert home.call("exist_problem_predicate", node=predicate("(on mug_1 table_1)")).exist
    assert not home.call("exist_problem_predicate", node=predicate("(on mug_1 shelf_1)")).exist


def test_adding_what_holds_succeeds_and_writes_nothing(home: Expert) -> None:
    before = home.version()
    again = home.call("add_problem_predicate", node=predicate("(on mug_1 table_1)"))
    assert again.success
    assert home.version() == before
    assert home.published.sent == []


REFUSED = [
    ("(floating mug_1)", "unknown predicate floating"),
    ("(on mug_1)", "on"),  # wrong arity
    ("(on hall table_1)", "hall"),  # a room is no item
    ("(on mug_1 shelf_1)", "mug_1 can be in only one place"),
    ("(in_room table_1 hall)", "static"),
    ("(on mug_9 shelf_1)", "mug_9"),  # no such entity
]


@pytest.mark.parametrize(("fact", "reason"), REFUSED)
def test_a_predicate_the_verifier_refuses_answers_its_reasons_and_writes_nothing(
    home: Expert, fact: str, reason: str
) -> None:
    before = (home.version(), home.facts())
    answer = home.call("add_problem_predicate", node=predicate(fact))
    assert not answer.success
    assert reason in answer.error_info
    assert (home.version(), home.facts()) == before
    assert home.published.sent == []
    last = home.ops.history(home.memory, HistoryIn(order="newest", limit=1)).updates[0]
    assert (last.status, last.source) == ("rejected", "api")  # the refusal is in the history, as any other


def test_a_function_node_is_refused_as_no_predicate(home: Expert) -> None:
    node = INTERFACES.new("plansys2_msgs/msg/Node", node_type=int(NodeType.FUNCTION), name="distance")
    answer = home.call("add_problem_predicate", node=node)
    assert not answer.success and "FUNCTION 'distance'" in answer.error_info
    assert not home.call("exist_problem_predicate", node=node).exist


# -- instances --------------------------------------------------------------------------------------


def test_an_instance_that_needs_no_place_is_created_at_once(home: Expert) -> None:
    answer = home.call("add_problem_instance", param=param("garage", "room"))
    assert answer.success, answer.error_info
    assert "garage" in home.entity_names()
    last = home.ops.history(home.memory, HistoryIn(order="newest", limit=1)).updates[0]
    assert last.input == "ROS 2 problem_expert/add_problem_instance: garage - room"
    details = home.call("get_problem_instance", instance="garage")
    assert details.success and (details.instance.name, details.instance.type) == ("garage", "room")


def test_an_instance_that_must_be_somewhere_waits_for_the_predicate_that_places_it(home: Expert) -> None:
    before = home.version()
    declared = home.call("add_problem_instance", param=param("mug_2", "dish"))
    assert declared.success, declared.error_info
    assert "mug_2" not in home.entity_names() and home.version() == before
    listed = {(p.name, p.type) for p in home.call("get_problem_instances").instances}
    assert ("mug_2", "dish") in listed and ("mug_1", "dish") in listed

    unplaced = home.call("add_problem_predicate", node=predicate("(dirty mug_2)"))
    assert not unplaced.success and "must be somewhere" in unplaced.error_info
    assert "mug_2" not in home.entity_names()

    placed = home.call("add_problem_predicate", node=predicate("(on mug_2 table_1)"))
    assert placed.success, placed.error_info
    assert "mug_2" in home.entity_names() and "(on mug_2 table_1)" in home.facts()
    assert home.version() == before + 1  # the instance and its place: one update
    assert home.call("add_problem_predicate", node=predicate("(dirty mug_2)")).success


def test_instances_are_refused_with_their_reason(home: Expert) -> None:
    unknown_type = home.call("add_problem_instance", param=param("car_1", "vehicle"))
    assert not unknown_type.success and "unknown type 'vehicle'" in unknown_type.error_info
    other_type = home.call("add_problem_instance", param=param("mug_1", "room"))
    assert not other_type.success and "exists already, as a dish" in other_type.error_info
    assert home.call("add_problem_instance", param=param("mug_1", "dish")).success  # the same again: fine
    bad_name = home.call("add_problem_instance", param=param("mug 2", "dish"))
    assert not bad_name.success and "mug 2" in bad_name.error_info
    missing = home.call("get_problem_instance", instance="mug_9")
    assert not missing.success and "no instance mug_9" in missing.error_info


def test_a_pending_instance_is_removed_and_a_stored_one_is_kept(home: Expert) -> None:
    home.call("add_problem_instance", param=param("mug_2", "dish"))
    assert home.call("remove_problem_instance", param=param("mug_2")).success
    assert "mug_2" not in {p.name for p in home.call("get_problem_instances").instances}
    stored = home.call("remove_problem_instance", param=param("mug_1"))
    assert not stored.success and "remove its predicates instead" in stored.error_info
    assert "mug_1" in home.entity_names()


# -- goals ------------------------------------------------------------------------------------------


def test_the_goal_is_kept_given_back_and_checked_against_the_state(home: Expert) -> None:
    goal = "(and (on mug_1 shelf_1) (not (light_on lamp_1)))"
    assert home.call("add_problem_goal", tree=goal_tree(goal)).success
    assert formula_of(home.call("get_problem_goal").tree) == parse_goal(goal)

    asked = home.call("is_problem_goal_satisfied", tree=goal_tree(goal))
    assert asked.success and not asked.satisfied
    home.ops.apply_delta(home.memory, DeltaIn(remove=["(on mug_1 table_1)"], add=["(on mug_1 shelf_1)"]))
    assert home.call("is_problem_goal_satisfied", tree=goal_tree(goal)).satisfied
    somewhere = "(exists (?f - furniture) (on book_1 ?f))"
    assert home.call("is_problem_goal_satisfied", tree=goal_tree(somewhere)).satisfied

    assert home.call("remove_problem_goal").success
    assert list(home.call("get_problem_goal").tree.nodes) == []


def test_a_goal_the_memory_cannot_read_is_refused(home: Expert) -> None:
    answer = home.call("add_problem_goal", tree=goal_tree("(on mug_9 shelf_1)"))
    assert not answer.success and "mug_9" in answer.error_info
    assert list(home.call("get_problem_goal").tree.nodes) == []
    arity = home.call("is_problem_goal_satisfied", tree=goal_tree("(on mug_1)"))
    assert not arity.success and "on" in arity.error_info


# -- the whole problem ------------------------------------------------------------------------------


def parsed(domain: str, problem: str) -> Any:
    from unified_planning.io import PDDLReader

    with UP_LOCK, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        return PDDLReader().parse_problem_string(domain, problem)


def test_get_problem_is_pddl_of_the_memory_and_the_goal(home: Expert) -> None:
    home.call("add_problem_goal", tree=goal_tree("(on mug_1 shelf_1)"))
    answer = home.call("get_problem")
    assert answer.success
    problem = parsed(home.ops.memory(home.memory).domain.pddl, answer.problem)
    objects = {o.name for o in problem.all_objects} - {"robot_1"}
    assert objects == set(home.entity_names()) - {"robot_1"}
    init = {str(k).replace("(", " ").replace(",", "").replace(")", "").split()[0] for k in problem.initial_values}
    assert {"on", "robot_at", "connected"} <= init
    true_atoms = sum(1 for v in problem.explicit_initial_values.values() if v.is_true())
    assert true_atoms == len(home.facts())
    assert [str(g) for g in problem.goals] == ["on(mug_1, shelf_1)"]


def test_get_problem_without_a_goal_still_parses(home: Expert) -> None:
    answer = home.call("get_problem")
    assert "(:goal (and))" in answer.problem
    parsed(home.ops.memory(home.memory).domain.pddl, answer.problem)


PROBLEM = """(define (problem tidy) (:domain example_home)
  (:objects cup_9 - dish attic - room kitchen - room mug_1 - dish table_1 - furniture)
  (:init (on cup_9 table_1) (dirty cup_9) (connected attic kitchen) (on mug_1 table_1))
  (:goal (and (held cup_9 robot_1))))
"""


def test_add_problem_merges_its_objects_and_init_and_sets_its_goal(home: Expert) -> None:
    before = home.facts()
    answer = home.call("add_problem", problem=PROBLEM)
    assert answer.success, answer.error_info
    assert {"cup_9", "attic"} <= set(home.entity_names())
    assert set(home.facts()) == set(before) | {"(on cup_9 table_1)", "(dirty cup_9)", "(connected attic kitchen)"}
    assert formula_of(home.call("get_problem_goal").tree) == parse_goal("(and (held cup_9 robot_1))")
    last = home.ops.history(home.memory, HistoryIn(order="newest", limit=1)).updates[0]
    assert last.input == "ROS 2 problem_expert/add_problem: 2 objects, 3 facts"


@pytest.mark.parametrize(
    ("problem", "reason"),
    [
        (
            PROBLEM.replace("(on mug_1 table_1)", "(on mug_1 shelf_1)").replace("table_1 -", "table_1 shelf_1 -"),
            "mug_1 can be in only one place",
        ),
        (PROBLEM.replace("mug_1 - dish", "mug_1 - furniture").replace("(on mug_1 table_1)", ""), "mug_1 is a dish"),
        (PROBLEM.replace("(:domain example_home)", "(:domain household)"), "household"),
        (PROBLEM.replace("(held cup_9 robot_1)", "(held cup_9 alex)"), "alex"),
    ],
)
def test_add_problem_that_contradicts_the_memory_is_refused_whole(home: Expert, problem: str, reason: str) -> None:
    before = (home.version(), home.facts())
    answer = home.call("add_problem", problem=problem)
    assert not answer.success and reason in answer.error_info
    assert (home.version(), home.facts()) == before
    assert list(home.call("get_problem_goal").tree.nodes) == []


def test_clear_keeps_the_memory_and_says_so(home: Expert) -> None:
    home.call("add_problem_goal", tree=goal_tree("(on mug_1 shelf_1)"))
    home.call("add_problem_instance", param=param("mug_2", "dish"))
    before = (home.version(), home.facts())
    answer = home.call("clear_problem_knowledge")
    assert not answer.success and "kept" in answer.error_info
    assert (home.version(), home.facts()) == before
    assert list(home.call("get_problem_goal").tree.nodes) == []
    assert "mug_2" not in {p.name for p in home.call("get_problem_instances").instances}


# -- what it publishes ------------------------------------------------------------------------------


def test_every_accepted_change_is_announced_with_the_whole_knowledge(home: Expert) -> None:
    home.call("add_problem_instance", param=param("mug_2", "dish"))
    home.call("add_problem_predicate", node=predicate("(on mug_2 shelf_1)"))
    home.call("add_problem_predicate", node=predicate("(on mug_1 shelf_1)"))  # refused: no announcement
    home.call("add_problem_goal", tree=goal_tree("(held mug_2 robot_1)"))
    assert [t for t, _ in home.published.sent] == [UPDATE_NOTIFY, KNOWLEDGE] * 3
    for message in home.published.on(UPDATE_NOTIFY):
        INTERFACES.encode(message, "std_msgs/msg/Empty")

    first, placed, goal = (
        INTERFACES.decode(INTERFACES.encode(m, "plansys2_msgs/msg/Knowledge"), "plansys2_msgs/msg/Knowledge")
        for m in home.published.on(KNOWLEDGE)
    )
    assert "mug_2" in first.instances and "(on mug_2 shelf_1)" not in first.predicates
    assert "(on mug_2 shelf_1)" in placed.predicates and placed.goal == ""
    assert goal.goal == "(held mug_2 robot_1)"
    assert set(goal.predicates) == set(home.facts())
    assert list(goal.functions) == []


def test_the_goal_and_pending_instances_go_with_a_memory_deleted_and_made_again(home: Expert) -> None:
    assert home.call("add_problem_goal", tree=goal_tree("(on mug_1 shelf_1)")).success
    assert home.call("add_problem_instance", param=param("mug_2", "dish")).success  # pending: no place yet
    home.ops.delete_memory(home.memory)
    refused = home.call("get_problem_goal")
    assert not refused.success and "unknown memory" in refused.error_info
    home.ops.create_memory(MemoryIn(name=home.memory, domain="example_home"))
    assert home.call("get_problem_goal").tree.nodes == []  # the deleted memory's goal is not this one's
    assert [p.name for p in home.call("get_problem_instances").instances] == ["robot_1"]
