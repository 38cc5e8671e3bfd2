"""PlanSys2's nodes, trees and params to l3mp's facts, goal formulas and entities, and back, each
message crossing the wire (CDR) on the way."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ros_support import INTERFACES, round_trip

from kg_memory import Entity, Fact, InvalidName
from kg_memory.formula import Truth
from l3mp.ros.plansys2_tree import (
    NODE,
    TREE,
    NodeType,
    TreeError,
    entity_of,
    fact_of,
    formula_of,
    node_of,
    param_of,
    tree_of,
)
from planning import parse_goal


def node(kind: int, *, name: str = "", params: tuple[Any, ...] = (), children: tuple[int, ...] = ()) -> Any:
    parameters = [
        INTERFACES.new("plansys2_msgs/msg/Param", name=p, type="")
        if isinstance(p, str)
        else INTERFACES.new("plansys2_msgs/msg/Param", name=p[0], type=p[1])
        for p in params
    ]
    return INTERFACES.new(
        NODE, node_type=int(kind), name=name, parameters=parameters, children=np.array(children, dtype=np.uint32)
    )


def tree(*nodes: Any) -> Any:
    for index, each in enumerate(nodes):
        each.node_id = index
    return round_trip(INTERFACES.new(TREE, nodes=list(nodes)), TREE)


def test_a_predicate_node_is_a_fact_and_back() -> None:
    fact = Fact.parse("(on mug_1 table_1)")
    sent = round_trip(node_of(INTERFACES, fact), NODE)
    assert sent.node_type == NodeType.PREDICATE
    assert [p.name for p in sent.parameters] == ["mug_1", "table_1"]
    assert fact_of(sent) == fact


def test_a_node_that_is_no_predicate_is_no_fact() -> None:
    with pytest.raises(TreeError, match="FUNCTION 'distance'"):
        fact_of(node(NodeType.FUNCTION, name="distance", params=("kitchen", "hall")))


def test_a_predicate_with_a_name_l3mp_cannot_store_is_refused() -> None:
    with pytest.raises(InvalidName, match="mug 1"):
        fact_of(node(NodeType.PREDICATE, name="on", params=("mug 1", "table_1")))


def test_a_param_is_an_entity_and_back() -> None:
    entity = Entity("mug_2", "dish")
    sent = round_trip(param_of(INTERFACES, entity), "plansys2_msgs/msg/Param")
    assert (sent.name, sent.type) == ("mug_2", "dish")
    assert entity_of(sent) == entity


GOALS = [
    "(on mug_1 shelf_1)",
    "(and (on mug_1 shelf_1) (not (light_on lamp_1)))",
    "(or (held mug_1 robot_1) (and (on book_1 table_1) (not (dirty mug_1))))",
    "(exists (?r - room) (and (robot_at robot_1 ?r) (light_in lamp_1 ?r)))",
    "(not (or (light_on lamp_1) (dirty mug_1)))",
]


@pytest.mark.parametrize("text", GOALS)
def test_a_goal_crosses_as_a_tree_and_reads_back_the_same(text: str) -> None:
    goal = parse_goal(text)
    sent = round_trip(tree_of(INTERFACES, goal), TREE)
    assert [n.node_id for n in sent.nodes] == list(range(len(sent.nodes)))
    assert formula_of(sent) == goal


def test_the_tree_is_written_as_plansys2_writes_it() -> None:
    sent = tree_of(INTERFACES, parse_goal("(and (on mug_1 shelf_1) (not (light_on lamp_1)))"))
    kinds = [(NodeType(n.node_type).name, list(n.children), n.negate) for n in sent.nodes]
    assert kinds == [("AND", [1, 2], False), ("PREDICATE", [], False), ("NOT", [3], False), ("PREDICATE", [], True)]


def test_a_tree_as_plansys2s_parser_builds_it_is_read() -> None:
    # fromString("(and (robot_at robot_1 hall) (exists (?r - room) (robot_at robot_1 ?r)))"): the
    # exists' params are the tokens of its variable list, a node under a NOT is flagged negate
    goal = tree(
        node(NodeType.AND, children=(1, 2, 4)),
        node(NodeType.PREDICATE, name="robot_at", params=("robot_1", "hall")),
        node(NodeType.EXISTS, params=("?r", "-", "room"), children=(3,)),
        node(NodeType.PREDICATE, name="robot_at", params=("robot_1", "?r")),
        node(NodeType.NOT, children=(5,)),
    )
    goal.nodes.append(node(NodeType.PREDICATE, name="Light_On", params=("LAMP_1",)))
    goal.nodes[5].negate = True
    expected = "(and (robot_at robot_1 hall) (exists (?r - room) (robot_at robot_1 ?r)) (not (light_on lamp_1)))"
    assert formula_of(goal) == parse_goal(expected)


def test_an_exists_variable_without_a_type_ranges_over_objects() -> None:
    goal = tree(
        node(NodeType.EXISTS, params=(("?x", ""),), children=(1,)),
        node(NodeType.PREDICATE, name="light_on", params=("?x",)),
    )
    assert formula_of(goal) == parse_goal("(exists (?x) (light_on ?x))")


def test_the_empty_tree_is_the_empty_goal() -> None:
    assert formula_of(tree()) == Truth(True)
    assert list(tree_of(INTERFACES, Truth(True)).nodes) == []


def test_a_node_l3mp_does_not_read_is_named() -> None:
    goal = tree(
        node(NodeType.AND, children=(1,)),
        node(NodeType.EXPRESSION, children=(2, 3)),
        node(NodeType.FUNCTION, name="battery"),
        node(NodeType.NUMBER),
    )
    with pytest.raises(TreeError, match="node 1 is EXPRESSION"):
        formula_of(goal)


@pytest.mark.parametrize(
    ("nodes", "problem"),
    [
        ((node(NodeType.AND, children=(3,)),), "node 0's child 3 is not among the tree's 1 nodes"),
        ((node(NodeType.AND, children=(0,)),), "node 0 is reached twice"),
        (
            (node(NodeType.NOT, children=(1, 1)), node(NodeType.PREDICATE, name="light_on", params=("lamp_1",))),
            "NOT node 0 needs exactly one child, has 2",
        ),
        ((node(NodeType.EXISTS, params=("?r",)),), "EXISTS node 0 has no body"),
        ((node(99),), "node 0 is node_type 99"),
    ],
)
def test_a_broken_tree_is_refused_saying_where(nodes: tuple[Any, ...], problem: str) -> None:
    with pytest.raises(TreeError, match=problem):
        formula_of(tree(*nodes))


def test_a_goal_plansys2_has_no_node_for_is_refused() -> None:
    with pytest.raises(TreeError, match="forall"):
        tree_of(INTERFACES, parse_goal("(forall (?l - light) (not (light_on ?l)))"))
