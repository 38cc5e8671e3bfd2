"""PDDL problems written as text from facts and a goal.

Text, not unified-planning objects: ``Problem.add_object`` is linear per object, so
building a problem of thousands of objects that way takes seconds before any planning.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from kg_memory import Domain, Entity, Fact
from kg_memory.formula import And, Atom, Equals, Formula, Not, Or, Quantified
from planning._compiled import compile_test, var_name
from planning.deadline import BindingWatch, counted, watch_until
from planning.world import World


def problem_pddl(
    domain: Domain, entities: Iterable[Entity], facts: Iterable[Fact], goal: Formula, name: str = "task"
) -> str:
    """A ``define (problem ...)`` for ``domain``: the entities as objects (the domain's
    constants are left out, PDDL declares them in the domain), the facts as ``:init``."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for entity in entities:
        if entity.name not in domain.constants:
            by_type[entity.type].append(entity.name)
    objects = "\n    ".join(f"{' '.join(sorted(names))} - {type_}" for type_, names in sorted(by_type.items()))
    lines = sorted(str(f) for f in facts)
    if domain.costs:  # IPC action costs: the planner minimises total-cost, which starts at 0
        lines.append("(= (total-cost) 0)")
    init = "\n    ".join(lines)
    metric = "\n  (:metric minimize (total-cost))" if domain.costs else ""
    return (
        f"(define (problem {name}) (:domain {domain.name})\n"
        f"  (:objects\n    {objects})\n"
        f"  (:init\n    {init})\n"
        f"  (:goal {goal}){metric})\n"
    )


@dataclass(frozen=True, slots=True)
class Context:
    """The part of a state a planning problem is built from."""

    entities: tuple[Entity, ...]
    facts: frozenset[Fact]
    tier: str  # "pruned" or "full"


def goal_objects(goal: Formula) -> set[str]:
    """Constants the goal names."""
    match goal:
        case Atom(terms=terms):
            return {t for t in terms if not t.startswith("?")}
        case Equals(left=left, right=right):
            return {t for t in (left, right) if not t.startswith("?")}
        case Not(arg=arg) | Quantified(body=arg):
            return goal_objects(arg)
        case And(args=args) | Or(args=args):
            return set().union(*(goal_objects(a) for a in args)) if args else set()
    return set()


def goal_types(goal: Formula) -> set[str]:
    """Types the goal quantifies over: all their objects matter."""
    match goal:
        case Quantified(variables=variables, body=body):
            return {v.type for v in variables} | goal_types(body)
        case Not(arg=arg):
            return goal_types(arg)
        case And(args=args) | Or(args=args):
            return set().union(*(goal_types(a) for a in args)) if args else set()
    return set()


def pruned_context(world: World, goal: Formula, anchors: Iterable[str] = ()) -> Context:
    """Objects a plan for ``goal`` plausibly needs, and the facts among them.

    Kept: the static skeleton (every object a static fact mentions: the map of rooms,
    furniture and fixtures), the goal's objects and those of the types it quantifies over,
    the ``anchors`` (e.g. the robot), and everything one fact away from those. What is left
    out is the mass of movable things the task does not touch. The result is a guess:
    plans from it must be validated against the full state.
    """
    domain, facts = world.domain, world.facts
    static = domain.static_predicates
    # structure is what predicates say; a cost (a distance) is kept below when both its ends are
    keep = {a for f in facts if f.predicate in static and f.value is None for a in f.args}
    focus = goal_objects(goal) | set(anchors)
    focus |= {name for type_ in goal_types(goal) for name in world.objects_of(type_)}
    keep |= focus
    keep |= {a for name in focus for f in world.facts_about(name) if f.value is None for a in f.args}
    keep -= set(domain.constants)
    entities = tuple(e for name in sorted(keep) if (e := world.entity(name)) is not None)
    known = keep | set(domain.constants)
    return Context(entities, frozenset(f for f in facts if all(a in known for a in f.args)), "pruned")


def full_context(world: World) -> Context:
    constants = world.domain.constants
    entities = tuple(e for name, e in sorted(world.entities.items()) if name not in constants)
    return Context(entities, world.facts, "full")


def _violating(world: World, goal: Formula, watch: BindingWatch | None) -> set[str]:
    """For ``forall`` goals over one variable, the objects that break the body now (the lights still
    on, for "every light off"); for other quantified goals, every object of their types. ``watch``
    counts the objects and bindings tried."""
    match goal:
        case Quantified(universal=True, variables=(variable,), body=body):
            name = var_name(variable)
            holds = compile_test(body, frozenset({name}), watch)
            objects = counted(world.objects_of(variable.type), watch)
            return {o for o in objects if not holds(world, {name: o})}
        case Quantified(variables=variables):
            return {name for v in variables for name in world.objects_of(v.type)}
        case Not(arg=arg):
            return _violating(world, arg, watch)
        case And(args=args) | Or(args=args):
            return set().union(*(_violating(world, a, watch) for a in args)) if args else set()
    return set()


def neighbours(world: World, name: str, reverse_cap: int) -> set[str]:
    """The objects one fact away from ``name``: all of those its own facts name (what holds it, its
    room), and at most ``reverse_cap`` of those whose facts name it later (what is on a table).

    The cap keeps a table with 10,000 things on it from pulling all of them into every context
    (and every hop from them back through the table: that made widening quadratic).
    """
    found: set[str] = set()
    reverse: list[str] = []
    for fact in world.facts_about(name):
        if fact.value is not None:
            continue  # a cost (a room's distance to every other room) is not a way to anything
        if fact.args[0] == name:
            found.update(fact.args)
        else:
            reverse.append(fact.args[0])
    found.update(sorted(set(reverse))[:reverse_cap])
    found.add(name)
    return found


def focused_context(
    world: World,
    goal: Formula,
    anchors: Iterable[str] = (),
    seeds: Iterable[str] = (),
    reverse_cap: int = 16,
    *,
    deadline: float | None = None,
) -> Context:
    """A small problem: the goal's objects (for a ``forall``, those that break it now) and ``anchors``
    (the robot), what holds them, the shortest ways from the first anchor to each of those, and
    ``seeds`` (what retrieval found) with the objects their facts name.

    Paths run over the static skeleton (rooms, doors, fixtures) and the facts about the objects
    that matter, so a plan for "bring the mug" sees the rooms between the robot and the mug and not
    the other two hundred pieces of furniture; when that is too little, the tiers widen it.
    Of the things a focus object holds, at most ``reverse_cap`` come in (see :func:`neighbours`).
    Finding what breaks a ``forall`` stops at ``deadline`` (a ``time.monotonic()`` instant), raising
    :class:`~planning.deadline.EvaluationDeadlinePassed`.
    """
    import networkx as nx

    domain = world.domain
    static = domain.static_predicates
    anchors = [a for a in anchors if world.entity(a) is not None]
    focus = goal_objects(goal) | _violating(world, goal, watch_until(deadline)) | set(anchors)
    # what holds each of them, and a few of what they hold (not the 2,000 things on a goal's table)
    terminals = focus | {a for name in focus for a in neighbours(world, name, reverse_cap)}
    graph: nx.Graph[str] = nx.Graph()
    for fact in world.facts:
        if fact.value is None and len(fact.args) == 2 and (fact.predicate in static or terminals & set(fact.args)):
            graph.add_edge(*fact.args)
    keep = set(terminals)
    for anchor in anchors[:1]:
        if anchor in graph:
            paths = nx.single_source_shortest_path(graph, anchor)
            keep |= {n for target in terminals if target in paths for n in paths[target]}
    # each kept object's own static facts (a table's room, a faucet's sink, a room's doors), not
    # those of which it is the second argument: a room's furniture would bring the whole floor
    keep |= {
        a
        for name in keep
        for f in world.facts_about(name)
        if f.predicate in static and f.value is None and f.args[0] == name
        for a in f.args
    }
    keep |= {a for name in seeds for a in neighbours(world, name, reverse_cap)}
    keep -= set(domain.constants)
    entities = tuple(e for name in sorted(keep) if (e := world.entity(name)) is not None)
    known = keep | set(domain.constants)
    return Context(entities, frozenset(f for f in world.facts if all(a in known for a in f.args)), "retrieved")
