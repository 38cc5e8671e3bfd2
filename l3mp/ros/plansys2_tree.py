"""PlanSys2's messages and l3mp's values, both ways: a predicate ``Node`` and a :class:`Fact`, a goal
``Tree`` and a goal formula, an instance ``Param`` and an :class:`Entity`.

A PlanSys2 ``Tree`` is a flat list of ``Node`` s; node 0 is the root and ``children`` index the list.
Read here: AND, OR, NOT (one child), PREDICATE (its ``parameters`` are the arguments, by name) and
EXISTS (its ``parameters`` the variables, ``?x`` typed by ``type`` or PlanSys2's ``?x - type``
tokens; its children the body). Anything else (functions, comparisons, numbers, ...) is refused with
a :class:`TreeError` naming the node's type. As PlanSys2's own ``toString`` does, the structure
says what is negated (NOT nodes); a node's ``negate`` flag is written as PlanSys2 writes it (set
under a NOT) and not read. Names are PDDL names in l3mp's one spelling (lower case).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kg_memory import Entity, Fact
from kg_memory.formula import And, Atom, Formula, Not, Or, Parameter, Quantified, Truth
from kg_memory.model import normalise_name
from l3mp.ros.errors import RosError
from l3mp.ros.types import Interfaces

NODE = "plansys2_msgs/msg/Node"
PARAM = "plansys2_msgs/msg/Param"
TREE = "plansys2_msgs/msg/Tree"
_VARIABLE_TYPE = "object"  # an exists variable PlanSys2 gives no type


class NodeType(enum.IntEnum):
    """``plansys2_msgs/msg/Node``'s node types (its constants)."""

    UNKNOWN = 0
    AND = 1
    OR = 2
    NOT = 3
    ACTION = 4
    PREDICATE = 5
    FUNCTION = 6
    EXPRESSION = 7
    FUNCTION_MODIFIER = 8
    NUMBER = 9
    CONSTANT = 10
    PARAMETER = 11
    EXISTS = 12


def type_name(value: int) -> str:
    """The name of a node type as ``Node.msg`` spells it (``node_type 42`` for one it does not define)."""
    try:
        return NodeType(value).name
    except ValueError:
        return f"node_type {value}"


class TreeError(RosError):
    """A PlanSys2 node or tree l3mp cannot read or write: ``problem`` says which node and why."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(f"PlanSys2 tree: {problem}")


# -- predicates and instances ------------------------------------------------------------------


def fact_of(node: Any) -> Fact:
    """The fact a PREDICATE ``Node`` states: ``(name param.name ...)``."""
    if int(node.node_type) != NodeType.PREDICATE:
        raise TreeError(f"expected a PREDICATE node, got {type_name(int(node.node_type))} {node.name!r}")
    return Fact(node.name, tuple(p.name for p in node.parameters))


def node_of(interfaces: Interfaces, fact: Fact, *, node_id: int = 0, negate: bool = False) -> Any:
    """A PREDICATE ``Node`` for ``fact`` (its parameters carry names only, as PlanSys2's do)."""
    if fact.numeric:
        raise TreeError(f"{fact} is a numeric fact (a PlanSys2 function), not a predicate")
    params = [interfaces.new(PARAM, name=a) for a in fact.args]
    return interfaces.new(
        NODE, node_type=NodeType.PREDICATE, node_id=node_id, name=fact.predicate, parameters=params, negate=negate
    )


def entity_of(param: Any) -> Entity:
    """The entity a ``Param`` declares: its name and type (an Entity checks both are PDDL names)."""
    return Entity(param.name, param.type)


def param_of(interfaces: Interfaces, entity: Entity) -> Any:
    return interfaces.new(PARAM, name=entity.name, type=entity.type)


# -- goal trees ---------------------------------------------------------------------------------


def formula_of(tree: Any) -> Formula:
    """The goal formula a ``Tree`` writes; an empty tree is the empty goal ``(and)``."""
    nodes = list(tree.nodes)
    if not nodes:
        return Truth(True)
    return _Reading(nodes).formula(0, depth=0)


@dataclass(slots=True)
class _Reading:
    nodes: list[Any]
    seen: set[int] = field(default_factory=set)

    def node(self, index: int, parent: int | None) -> Any:
        if not 0 <= index < len(self.nodes):
            where = "the root" if parent is None else f"node {parent}'s child"
            raise TreeError(f"{where} {index} is not among the tree's {len(self.nodes)} nodes")
        if index in self.seen:
            raise TreeError(f"node {index} is reached twice (a tree's nodes have one parent each)")
        self.seen.add(index)
        return self.nodes[index]

    def formula(self, index: int, *, depth: int, parent: int | None = None) -> Formula:
        node = self.node(index, parent)
        kind = int(node.node_type)
        children = [int(c) for c in node.children]
        if kind == NodeType.PREDICATE:
            return Atom(normalise_name(node.name), tuple(_term(p.name) for p in node.parameters))
        if kind in (NodeType.AND, NodeType.OR):
            parts = tuple(self.formula(c, depth=depth + 1, parent=index) for c in children)
            if not parts:
                return Truth(kind == NodeType.AND)
            return And(parts) if kind == NodeType.AND else Or(parts)
        if kind == NodeType.NOT:
            if len(children) != 1:
                raise TreeError(f"NOT node {index} needs exactly one child, has {len(children)}")
            return Not(self.formula(children[0], depth=depth + 1, parent=index))
        if kind == NodeType.EXISTS:
            if not children:
                raise TreeError(f"EXISTS node {index} has no body (no children)")
            parts = tuple(self.formula(c, depth=depth + 1, parent=index) for c in children)
            return Quantified(False, _variables(index, node.parameters), parts[0] if len(parts) == 1 else And(parts))
        raise TreeError(
            f"node {index} is {type_name(kind)} {node.name!r}: l3mp's goals are AND, OR, NOT, PREDICATE and EXISTS"
        )


def _term(name: str) -> str:
    return normalise_name(name)


def _variables(index: int, params: list[Any]) -> tuple[Parameter, ...]:
    """``?x`` params typed by their ``type``, or PlanSys2's token list ``?x ?y - room`` in the names."""
    variables: list[Parameter] = []
    untyped: list[str] = []
    names = [normalise_name(p.name) for p in params]
    i = 0
    while i < len(names):
        name = names[i]
        if name == "-":
            if i + 1 >= len(names) or not untyped:
                raise TreeError(f"EXISTS node {index}: '-' must sit between variables and their type")
            variables += [Parameter(v, names[i + 1]) for v in untyped]
            untyped, i = [], i + 2
            continue
        if not name.startswith("?") or len(name) == 1:
            raise TreeError(f"EXISTS node {index}: expected a variable such as ?x, got {name!r}")
        declared = normalise_name(params[i].type)
        if declared:
            variables.append(Parameter(name[1:], declared))
        else:
            untyped.append(name[1:])
        i += 1
    variables += [Parameter(v, _VARIABLE_TYPE) for v in untyped]
    if not variables:
        raise TreeError(f"EXISTS node {index} declares no variables")
    return tuple(variables)


def tree_of(interfaces: Interfaces, goal: Formula) -> Any:
    """A ``Tree`` for ``goal`` (nodes in PlanSys2's order: each node before its children)."""
    writing = _Writing(interfaces)
    if goal != Truth(True):  # PlanSys2's empty goal is an empty tree
        writing.add(goal, negate=False)
    return interfaces.new(TREE, nodes=writing.nodes)


@dataclass(slots=True)
class _Writing:
    interfaces: Interfaces
    nodes: list[Any] = field(default_factory=list)

    def add(self, formula: Formula, *, negate: bool) -> int:
        index = len(self.nodes)
        if isinstance(formula, Atom):
            params = [self.interfaces.new(PARAM, name=t) for t in formula.terms]
            self.nodes.append(self._node(NodeType.PREDICATE, index, negate, name=formula.predicate, parameters=params))
            return index
        if isinstance(formula, And | Or):
            kind = NodeType.AND if isinstance(formula, And) else NodeType.OR
            return self._parent(kind, index, negate, formula.args, negate)
        if isinstance(formula, Truth):
            return self._parent(NodeType.AND if formula.value else NodeType.OR, index, negate, (), negate)
        if isinstance(formula, Not):
            return self._parent(NodeType.NOT, index, negate, (formula.arg,), not negate)
        if isinstance(formula, Quantified) and not formula.universal:
            params = [self.interfaces.new(PARAM, name=f"?{v.name}", type=v.type) for v in formula.variables]
            return self._parent(NodeType.EXISTS, index, negate, (formula.body,), negate, parameters=params)
        raise TreeError(f"{formula} has no PlanSys2 tree: l3mp writes AND, OR, NOT, predicates and exists")

    def _parent(
        self, kind: NodeType, index: int, negate: bool, args: tuple[Formula, ...], inner: bool, **fields: Any
    ) -> int:
        self.nodes.append(self._node(kind, index, negate, **fields))
        children = [self.add(a, negate=inner) for a in args]
        self.nodes[index].children = np.array(children, dtype=np.uint32)
        return index

    def _node(self, kind: NodeType, index: int, negate: bool, **fields: Any) -> Any:
        return self.interfaces.new(NODE, node_type=int(kind), node_id=index, negate=negate, **fields)


def goal_text(goal: Formula | None) -> str:
    """A goal as PDDL text (``""`` for none), as PlanSys2 puts it in ``Knowledge.goal``."""
    return "" if goal is None else str(goal)
