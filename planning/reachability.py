"""What is missing: a relaxed reachability check that names the goal facts no action can make true.

Before the planner is called, the goal is checked against the domain's actions under the delete
relaxation, lifted to predicates and types (a fixpoint over "which predicates can some fact of become
true", where an action can fire once each of its parameter types has an object and the predicates of
its positive preconditions can be true; negative preconditions and effect conditions are ignored).
The relaxation only over-approximates what the planner can reach, so a gap reported here is a real
one: the goal is ``impossible``, and one sentence per gap says why ("no action can make the phone
ringing true"; "the home has no dryer"). It runs in milliseconds, so an impossible goal is answered
at once instead of after a planner timeout.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kg_memory.domain import Domain
from kg_memory.formula import ActionSchema, And, Atom, Effect, Formula, Not, Or, Quantified
from planning.world import World

_Scope = Mapping[str, str]  # variable (without '?') -> type
_Holds = frozenset[tuple[str, tuple[str, ...]]]  # the state's facts as (predicate, args)


@dataclass(frozen=True, slots=True)
class Reachability:
    """The fixpoint over one state: what can become true, and which types have objects."""

    domain: Domain
    objects: Mapping[str, str]  # every object and constant -> its type
    initial: frozenset[str]  # predicates with a fact in the state
    reachable: frozenset[str]  # predicates some fact of which can become true
    enabled: frozenset[str]  # actions that can fire in the relaxed problem

    def has_object(self, type_: str) -> bool:
        return any(self.domain.is_subtype(t, type_) for t in set(self.objects.values()))


def analyse(domain: Domain, objects: Mapping[str, str], predicates_true: Iterable[str]) -> Reachability:
    """The relaxed fixpoint from a state with these ``objects`` and predicates that have true facts."""
    everything = {**domain.constants, **objects}
    present = set(everything.values())
    typed = {t for t in domain.types if any(domain.is_subtype(p, t) for p in present)}
    initial = frozenset(predicates_true)
    reachable = set(initial)
    enabled: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, action in domain.actions.items():
            if name in enabled or any(p.type not in typed for p in action.parameters):
                continue
            if _needs(action.precondition) <= reachable:
                enabled.add(name)
                reachable |= _adds(action)
                changed = True
    return Reachability(domain, everything, initial, frozenset(reachable), frozenset(enabled))


def goal_gaps(reach: Reachability, goal: Formula, holds: Iterable[tuple[str, tuple[str, ...]]] = ()) -> tuple[str, ...]:
    """One sentence per reason ``goal`` cannot be reached; empty when the relaxation does not rule it out.

    ``holds`` are the state's facts as (predicate, args), to tell a negated goal atom that is already
    false (nothing to do) from one that must be deleted.
    """
    true_now = frozenset(holds)
    gaps = _gaps(reach, goal, {}, true_now)
    return tuple(dict.fromkeys(gaps))


def _gaps(
    reach: Reachability, formula: Formula, scope: _Scope, true_now: frozenset[tuple[str, tuple[str, ...]]]
) -> list[str]:
    match formula:
        case Atom():
            return _atom_gaps(reach, formula, scope, true_now)
        case Not(arg=Atom() as atom):
            return _deletion_gaps(reach, atom, scope, true_now)
        case And(args=args):
            return [g for a in args for g in _gaps(reach, a, scope, true_now)]
        case Or(args=args):
            each = [_gaps(reach, a, scope, true_now) for a in args]
            return [g for gs in each for g in gs] if each and all(each) else []
        case Quantified(universal=False, variables=variables, body=body):
            missing = [v.type for v in variables if not reach.has_object(v.type)]
            if missing:
                return [f"the home has no {t}" for t in missing]
            return _gaps(reach, body, {**scope, **{v.name: v.type for v in variables}}, true_now)
        case Quantified(universal=True, variables=variables, body=body):
            return _gaps(reach, body, {**scope, **{v.name: v.type for v in variables}}, true_now)
    return []  # equalities, truth values, negated compounds: left to the planner


def _atom_gaps(
    reach: Reachability, atom: Atom, scope: _Scope, true_now: frozenset[tuple[str, tuple[str, ...]]]
) -> list[str]:
    if (atom.predicate, atom.terms) in true_now:
        return []
    adders = [
        a for a in reach.domain.actions.values() if any(_fits(reach, a, e, atom) for e in a.effects if e.positive)
    ]
    phrase = _phrase(reach, atom, scope)
    if not adders:
        return [f"no action can make {phrase} true"]
    if any(a.name in reach.enabled for a in adders):
        return []
    return _blocked(reach, adders, f"no action the robot can take makes {phrase} true")


def _deletion_gaps(
    reach: Reachability, atom: Atom, scope: _Scope, true_now: frozenset[tuple[str, tuple[str, ...]]]
) -> list[str]:
    ground = not any(t.startswith("?") for t in atom.terms)
    if ground and (atom.predicate, atom.terms) not in true_now:
        return []  # already false
    if not ground and atom.predicate not in reach.initial:
        return []  # no fact of it holds, so none needs deleting
    deleters = [
        a for a in reach.domain.actions.values() if any(_fits(reach, a, e, atom) for e in a.effects if not e.positive)
    ]
    phrase = _phrase(reach, atom, scope)
    if not deleters:
        return [f"no action can make {phrase} false"]
    if any(a.name in reach.enabled for a in deleters):
        return []
    return _blocked(reach, deleters, f"no action the robot can take makes {phrase} false")


def _achievers(reach: Reachability, atom: Atom, *, positive: bool) -> list[ActionSchema]:
    """The actions with an effect that makes an atom like ``atom`` true (``positive``) or false."""
    actions = reach.domain.actions.values()
    return [a for a in actions if any(_fits(reach, a, e, atom) for e in a.effects if e.positive is positive)]


def _blocked(reach: Reachability, actions: list[ActionSchema], fallback: str) -> list[str]:
    """Why none of ``actions`` can fire: the types the home has no object of, else unreachable needs."""
    missing = sorted({p.type for a in actions for p in a.parameters if not reach.has_object(p.type)})
    if missing and all(any(not reach.has_object(p.type) for p in a.parameters) for a in actions):
        return [f"the home has no {t} (needed to {_names(actions)})" for t in missing]
    needs = sorted({p for a in actions for p in _needs(a.precondition) - reach.reachable})
    detail = f": {_names(actions)} needs {', '.join(needs)}, which nothing can make true" if needs else ""
    return [fallback + detail]


def _names(actions: Iterable[ActionSchema]) -> str:
    return " or ".join(sorted(a.name for a in actions))


def _fits(reach: Reachability, action: ActionSchema, effect: Effect, atom: Atom) -> bool:
    """Whether ``effect`` of ``action`` can produce an atom like ``atom`` (same predicate, terms of fitting types)."""
    if effect.atom.predicate != atom.predicate or len(effect.atom.terms) != len(atom.terms):
        return False
    types = {p.name: p.type for p in (*action.parameters, *effect.forall)}
    for term, goal_term in zip(effect.atom.terms, atom.terms, strict=True):
        if goal_term.startswith("?"):
            continue  # a quantified variable: any object of its type may do
        if not term.startswith("?"):
            if term != goal_term:  # a constant in the effect, e.g. (filled ?c water)
                return False
            continue
        arg_type, wanted = reach.objects.get(goal_term), types.get(term[1:])
        if arg_type is not None and wanted is not None and not reach.domain.is_subtype(arg_type, wanted):
            return False
    return True


def _needs(formula: Formula) -> set[str]:
    """Predicates of the positive atoms a precondition needs (one branch of a disjunction suffices)."""
    match formula:
        case Atom(predicate=p):
            return {p}
        case And(args=args):
            return {p for a in args for p in _needs(a)}
        case Or(args=args):
            options = [_needs(a) for a in args]
            return min(options, key=len) if options else set()
        case Quantified(universal=False, body=body):
            return _needs(body)
    return set()  # negations, universals, equalities: relaxed away


def _adds(action: ActionSchema) -> set[str]:
    return {e.atom.predicate for e in action.effects if e.positive}


def _phrase(reach: Reachability, atom: Atom, scope: _Scope) -> str:
    """The atom in English from the domain's template (``the phone_1 is ringing``), else as PDDL."""
    template = reach.domain.language.predicates.get(atom.predicate)
    if template is None:
        return str(atom)
    terms = [f"any {scope.get(t[1:], 'object')}" if t.startswith("?") else t for t in atom.terms]
    try:
        return f"'{template.format(*terms)}'"
    except (IndexError, KeyError):
        return str(atom)


def impossible_gaps(world: World, goal: Formula) -> tuple[str, ...]:
    """The gaps that make ``goal`` impossible from ``world`` (empty when the relaxation allows it)."""
    objects = {name: e.type for name, e in world.entities.items()}
    facts = world.facts
    reach = analyse(world.domain, objects, {f.predicate for f in facts})
    return goal_gaps(reach, goal, ((f.predicate, f.args) for f in facts))


__all__ = ["Reachability", "analyse", "goal_gaps", "impossible_gaps"]
