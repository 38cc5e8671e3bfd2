"""The errors the simulated model injects into a goal formula: a wrong predicate or a wrong entity."""

from __future__ import annotations

import random
from dataclasses import replace

from kg_memory.formula import And, Atom, Formula, Not, Or, Quantified
from kg_memory.model import Fact
from planning.world import World
from sim.model._errors import Applier, Departure, wrong_entity_name, wrong_predicate_name
from sim.model._prompt import PromptView

GOAL_ERROR_KINDS = ("wrong_predicate", "wrong_entity", "malformed_json")  # the others concern edits
GoalApplier = Applier[tuple[Formula, Departure]]


def goal_appliers(goal: Formula, view: PromptView, world: World) -> dict[str, GoalApplier]:
    return {
        "wrong_predicate": lambda rng: _wrong_predicate(goal, world, rng),
        "wrong_entity": lambda rng: _wrong_entity(goal, view, world, rng),
        "malformed_json": lambda rng: (goal, Departure("malformed_json", detail="prose and a truncated JSON object")),
    }


def atoms(formula: Formula) -> list[Atom]:
    """The formula's atoms, in the order they are written."""
    match formula:
        case Atom():
            return [formula]
        case Not(arg=arg) | Quantified(body=arg):
            return atoms(arg)
        case And(args=args) | Or(args=args):
            return [atom for a in args for atom in atoms(a)]
    return []


def replace_atom(formula: Formula, index: int, new: Atom) -> Formula:
    """``formula`` with its ``index``-th atom (in written order) replaced by ``new``."""
    counter = [index]

    def walk(node: Formula) -> Formula:
        match node:
            case Atom():
                counter[0] -= 1
                return new if counter[0] == -1 else node
            case Not(arg=arg):
                return Not(walk(arg))
            case Quantified(body=body):
                return replace(node, body=walk(body))
            case And(args=args):
                return And(tuple(walk(a) for a in args))
            case Or(args=args):
                return Or(tuple(walk(a) for a in args))
        return node

    return walk(formula)


def _ground(atom: Atom) -> tuple[Fact, ...]:
    """The atom as a fact when it names no variable (what the InjectedError records)."""
    return () if any(t.startswith("?") for t in atom.terms) else (Fact(atom.predicate, atom.terms),)


def _wrong_predicate(goal: Formula, world: World, rng: random.Random) -> tuple[Formula, Departure] | None:
    found = atoms(goal)
    if not found:
        return None
    index = rng.randrange(len(found))
    atom = found[index]
    wrong = replace(atom, predicate=wrong_predicate_name(atom.predicate, world.domain, rng))
    detail = f"goal atom {atom} written as {wrong}"
    return replace_atom(goal, index, wrong), Departure("wrong_predicate", _ground(atom), _ground(wrong), detail)


def _wrong_entity(
    goal: Formula, view: PromptView, world: World, rng: random.Random
) -> tuple[Formula, Departure] | None:
    found = atoms(goal)
    slots = [(i, j) for i, a in enumerate(found) for j, t in enumerate(a.terms) if not t.startswith("?")]
    if not slots:
        return None  # a goal over all objects of a type names no entity
    index, position = rng.choice(slots)
    atom = found[index]
    name = wrong_entity_name(atom.terms[position], atom.terms, view, world, rng)
    wrong = replace(atom, terms=(*atom.terms[:position], name, *atom.terms[position + 1 :]))
    detail = f"goal atom {atom} written as {wrong} ({atom.terms[position]} replaced by {name})"
    return replace_atom(goal, index, wrong), Departure("wrong_entity", _ground(atom), _ground(wrong), detail)
