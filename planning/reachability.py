"""What is missing: a relaxed reachability check that names why no plan can reach a goal.

A goal that already holds is never impossible. Any other goal is checked against the domain's actions
under the delete relaxation, lifted to predicates and types: a fixpoint over "which predicates can some
fact of become true", where an action can fire once each of its parameter types has an object and its
positive preconditions can be true (any one branch of a disjunction will do; negative and universal
preconditions and effect conditions are ignored).

Over that fixpoint a goal is blocked as follows. An atom is blocked when no grounding of its variables
holds now and no action that can fire adds one; a negated atom when every grounding holds now and no
action that can fire deletes one. A conjunction is blocked when a conjunct is, a disjunction when every
branch is, an ``exists`` when its type has no object or its body is blocked. A ``forall`` over a type
with no object holds; otherwise its body is checked as an ``exists`` would be, which asks less of it.
Equalities, truth values and negated compound formulas are left to the planner.

Every step asks no more of a goal than a plan reaching it would meet, so a gap reported here is a real
one: the goal is ``impossible``, and one sentence per gap says why ("no action can make the phone
ringing true"; "the home has no dryer"). It runs in milliseconds, so an impossible goal is answered at
once instead of after a planner timeout; when the check cannot tell, the planner decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from math import prod

from kg_memory.domain import Domain
from kg_memory.formula import ActionSchema, And, Atom, Effect, Formula, Not, Or, Quantified
from planning.deadline import watch_until
from planning.evaluator import ActionEvaluator
from planning.world import World

_Scope = Mapping[str, str]  # variable (without '?') -> type
_Fact = tuple[str, tuple[str, ...]]  # a fact of the state as (predicate, args)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reachability:
    """The fixpoint over one state: what can become true, and which types have objects."""

    domain: Domain
    objects: Mapping[str, str]  # every object and constant -> its type
    initial: frozenset[str]  # predicates with a fact in the state
    reachable: frozenset[str]  # predicates some fact of which can become true
    enabled: frozenset[str]  # actions that can fire in the relaxed problem

    def has_object(self, type_: str) -> bool:
        return any(self.domain.is_subtype(t, type_) for t in set(self.objects.values()))

    def count(self, type_: str) -> int:
        """How many objects are of ``type_`` or a subtype."""
        return sum(1 for t in self.objects.values() if self.domain.is_subtype(t, type_))

    def is_a(self, name: str, type_: str) -> bool:
        known = self.objects.get(name)
        return known is not None and self.domain.is_subtype(known, type_)


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
            if not _unmet(action.precondition, reachable):
                enabled.add(name)
                reachable |= _adds(action)
                changed = True
    return Reachability(
        domain=domain, objects=everything, initial=initial, reachable=frozenset(reachable), enabled=frozenset(enabled)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Now:
    """The fixpoint and the state's facts by predicate, which goal atoms with variables are matched against."""

    reach: Reachability
    facts: Mapping[str, tuple[tuple[str, ...], ...]]

    def true_groundings(self, atom: Atom, scope: _Scope) -> int:
        """How many groundings of ``atom``'s variables (of their types) hold now: each matching fact is one."""
        return sum(1 for args in self.facts.get(atom.predicate, ()) if self._matches(atom.terms, args, scope))

    def groundings(self, atom: Atom, scope: _Scope) -> int:
        """How many groundings ``atom``'s variables have over the objects of their types."""
        variables = {t[1:] for t in atom.terms if t.startswith("?")}
        return prod(self.reach.count(scope.get(v, "object")) for v in variables)

    def _matches(self, terms: tuple[str, ...], args: tuple[str, ...], scope: _Scope) -> bool:
        if len(terms) != len(args):
            return False
        bound: dict[str, str] = {}
        for term, arg in zip(terms, args, strict=True):
            if not term.startswith("?"):
                if term != arg:
                    return False
            elif bound.setdefault(term, arg) != arg or not self.reach.is_a(arg, scope.get(term[1:], "object")):
                return False  # a repeated variable names one object, of its type
        return True


def goal_gaps(reach: Reachability, goal: Formula, holds: Iterable[_Fact] = ()) -> tuple[str, ...]:
    """One sentence per reason ``goal`` cannot be reached; empty when the relaxation does not rule it out.

    ``holds`` are the state's facts as (predicate, args): a goal atom some grounding of which holds
    needs nothing done, and a negated one is satisfied by any grounding that does not hold.
    """
    facts: dict[str, list[tuple[str, ...]]] = {}
    for predicate, args in dict.fromkeys(holds):
        facts.setdefault(predicate, []).append(args)
    now = _Now(reach=reach, facts={p: tuple(a) for p, a in facts.items()})
    return tuple(dict.fromkeys(_gaps(now, goal, {})))


def _gaps(now: _Now, formula: Formula, scope: _Scope) -> list[str]:
    match formula:
        case Atom():
            return _atom_gaps(now, formula, scope)
        case Not(arg=Atom() as atom):
            return _deletion_gaps(now, atom, scope)
        case And(args=args):
            return [g for a in args for g in _gaps(now, a, scope)]
        case Or(args=args):
            each = [_gaps(now, a, scope) for a in args]
            return [g for gs in each for g in gs] if each and all(each) else []
        case Quantified(universal=False, variables=variables, body=body):
            missing = [v.type for v in variables if not now.reach.has_object(v.type)]
            if missing:
                return [f"the home has no {t}" for t in missing]
            return _gaps(now, body, {**scope, **{v.name: v.type for v in variables}})
        case Quantified(universal=True, variables=variables, body=body):
            if any(not now.reach.has_object(v.type) for v in variables):
                return []  # nothing to range over: it holds
            # over objects that exist, "for every" asks at least what "for some" does
            return _gaps(now, body, {**scope, **{v.name: v.type for v in variables}})
    return []  # equalities, truth values, negated compounds: left to the planner


def _atom_gaps(now: _Now, atom: Atom, scope: _Scope) -> list[str]:
    if now.true_groundings(atom, scope):
        return []  # some grounding holds already
    adders = _achievers(now.reach, atom, positive=True)
    phrase = _phrase(now.reach, atom, scope)
    if not adders:
        return [f"no action can make {phrase} true"]
    if any(a.name in now.reach.enabled for a in adders):
        return []
    return _blocked(now.reach, adders, f"no action the robot can take makes {phrase} true")


def _deletion_gaps(now: _Now, atom: Atom, scope: _Scope) -> list[str]:
    if now.true_groundings(atom, scope) < now.groundings(atom, scope):
        return []  # some grounding is false already
    deleters = _achievers(now.reach, atom, positive=False)
    phrase = _phrase(now.reach, atom, scope)
    if not deleters:
        return [f"no action can make {phrase} false"]
    if any(a.name in now.reach.enabled for a in deleters):
        return []
    return _blocked(now.reach, deleters, f"no action the robot can take makes {phrase} false")


def _achievers(reach: Reachability, atom: Atom, *, positive: bool) -> list[ActionSchema]:
    """The actions with an effect that makes an atom like ``atom`` true (``positive``) or false."""
    actions = reach.domain.actions.values()
    return [a for a in actions if any(_fits(reach, a, e, atom) for e in a.effects if e.positive is positive)]


def _blocked(reach: Reachability, actions: list[ActionSchema], fallback: str) -> list[str]:
    """Why none of ``actions`` can fire: the types the home has no object of, else unreachable needs."""
    missing = sorted({p.type for a in actions for p in a.parameters if not reach.has_object(p.type)})
    if missing and all(any(not reach.has_object(p.type) for p in a.parameters) for a in actions):
        return [f"the home has no {t} (needed to {_names(actions)})" for t in missing]
    needs = sorted({p for a in actions for p in _unmet(a.precondition, reach.reachable)})
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


def _unmet(formula: Formula, reachable: Set[str]) -> set[str]:
    """The unreachable predicates a precondition needs; empty when some way to meet it is reachable.

    A disjunction is met when any branch is, so its needs count only when every branch has some.
    """
    match formula:
        case Atom(predicate=p):
            return set() if p in reachable else {p}
        case And(args=args):
            return {p for a in args for p in _unmet(a, reachable)}
        case Or(args=args):
            each = [_unmet(a, reachable) for a in args]
            return set().union(*each) if each and all(each) else set()
        case Quantified(universal=False, body=body):
            return _unmet(body, reachable)
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


def impossible_gaps(world: World, goal: Formula, *, deadline: float | None = None) -> tuple[str, ...]:
    """The gaps that make ``goal`` impossible from ``world``: empty when it holds already or when the
    relaxation allows it.

    Raises :class:`~planning.deadline.EvaluationDeadlinePassed` when ``deadline`` (a ``time.monotonic()``
    instant) passes while checking whether the goal holds.
    """
    if _holds(world, goal, deadline):
        return ()
    objects = {name: e.type for name, e in world.entities.items()}
    facts = world.facts
    reach = analyse(world.domain, objects, {f.predicate for f in facts})
    return goal_gaps(reach, goal, ((f.predicate, f.args) for f in facts))


def _holds(world: World, goal: Formula, deadline: float | None) -> bool:
    try:
        return ActionEvaluator(world.domain).evaluate(goal, world, watch=watch_until(deadline))
    except ValueError:  # a free variable: not a goal the evaluator can judge, so the relaxation will
        return False


__all__ = ["Reachability", "analyse", "goal_gaps", "impossible_gaps"]
