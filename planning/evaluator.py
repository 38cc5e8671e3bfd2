"""Ground actions checked and applied over a :class:`World`, fast enough for thousands of objects.

unified-planning's simulator re-walks expression trees through its environment on every
step, which is far too slow for a simulator or a validator over a whole home. Here each
action schema is compiled once into closures over a binding (``"?var" -> object``): a
precondition is a few set lookups; a ``forall`` iterates ``world.objects_of`` (cached per
type), while an ``exists`` or a conditional ``forall`` effect reads its candidates off the
facts about a bound term where it can (the clothes inside *this* washer, not every garment
in the house); and only a failed check pays for explaining itself in English.

Semantics are PDDL's, as unified-planning's validator applies them: every precondition and
effect condition is evaluated in the state *before* the action; deletes apply before adds, so
an atom both deleted and added ends up true; the delta carries only real changes.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kg_memory.domain import Domain
from kg_memory.errors import InvalidValue
from kg_memory.formula import (
    TRUE,
    ActionSchema,
    And,
    Atom,
    Effect,
    Equals,
    Formula,
    Not,
    Or,
    Parameter,
    Quantified,
    Truth,
)
from kg_memory.model import Delta, Fact
from planning.world import World

Env = dict[str, str]  # "?var" -> object name
Test = Callable[[World, Env], bool]
MakeFact = Callable[[Env], Fact]
Bindings = Callable[[World, Env], Iterator[Env]]  # a binding extended by quantified variables
NO_CHANGE = Delta()


# -- values ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroundAction:
    """An action name and its object arguments, as a plan step: ``(move robot_1 hall kitchen)``.

    Nothing is checked here: a planner or a language model may name anything, and
    :meth:`ActionEvaluator.check` turns bad content into reasons rather than exceptions.
    """

    name: str
    args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))

    @classmethod
    def parse(cls, text: str) -> GroundAction:
        """``(move robot_1 hall kitchen)``; the parentheses may be left out; names are lower-cased."""
        body = text.strip()
        if body.startswith("(") != body.endswith(")"):
            raise InvalidValue("ground action", text, "unbalanced parentheses; write (name arg1 arg2 ...)")
        parts = (body[1:-1] if body.startswith("(") else body).lower().split()
        if not parts or any(c in "()" for part in parts for c in part):
            raise InvalidValue("ground action", text, "write it as (name arg1 arg2 ...)")
        return cls(parts[0], tuple(parts[1:]))

    @classmethod
    def from_up(cls, action_instance: Any) -> GroundAction:
        """From a unified-planning ``ActionInstance`` (a planner's plan step)."""
        args = (_up_object_name(p) for p in action_instance.actual_parameters)
        return cls(action_instance.action.name.lower(), tuple(args))

    def __str__(self) -> str:
        return f"({' '.join((self.name, *self.args))})"


def _up_object_name(node: Any) -> str:
    return str(node.object().name if node.is_object_exp() else node).lower()


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """Whether ``action`` applies, the change it makes (empty if not), and why not in English."""

    action: GroundAction
    applicable: bool
    delta: Delta
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PlanOutcome:
    """A plan's run: the steps up to and including the first that fails, and the world it left.

    ``goal_reached`` is ``None`` when no goal was given, and ``False`` when the plan failed
    before its end (it never got to try); ``goal_reasons`` names the goal literals that are false.
    """

    executable: bool
    steps: tuple[StepOutcome, ...]
    failed_at: int | None
    world: World
    goal_reached: bool | None = None
    goal_reasons: tuple[str, ...] = ()

    @property
    def reasons(self) -> tuple[str, ...]:
        """Everything that went wrong: the failed step's reasons, then the goal's."""
        failed = self.steps[self.failed_at].reasons if self.failed_at is not None else ()
        return failed + self.goal_reasons


# -- compiling formulas ---------------------------------------------------------------------


def _var(parameter: Parameter) -> str:
    return f"?{parameter.name}"


def _make_fact(atom: Atom, scope: frozenset[str]) -> MakeFact:
    """The atom's fact under a binding; terms were checked against ``scope`` (names are valid)."""
    _check_bound(atom.terms, scope, atom)
    predicate, terms, unchecked = atom.predicate, atom.terms, Fact.unchecked
    return lambda env: unchecked(predicate, tuple([env.get(t, t) for t in terms]))


def _check_bound(terms: Iterable[str], scope: frozenset[str], where: object) -> None:
    for term in terms:
        if term.startswith("?") and term not in scope:
            raise ValueError(f"{where}: variable {term} is not bound")


def _compile(formula: Formula, scope: frozenset[str]) -> Test:
    """A closure deciding ``formula`` under a binding of (at least) the variables in ``scope``."""
    if isinstance(formula, Atom):
        make = _make_fact(formula, scope)
        return lambda world, env: world.holds(make(env))
    if isinstance(formula, Truth):
        value = formula.value
        return lambda world, env: value
    if isinstance(formula, Equals):
        return _compile_equals(formula, scope)
    if isinstance(formula, Not):
        inner = _compile(formula.arg, scope)
        return lambda world, env: not inner(world, env)
    if isinstance(formula, And | Or):
        return _compile_junction(formula, scope)
    return _compile_quantified(formula, scope)


def _compile_equals(formula: Equals, scope: frozenset[str]) -> Test:
    _check_bound((formula.left, formula.right), scope, formula)
    left, right = formula.left, formula.right
    return lambda world, env: env.get(left, left) == env.get(right, right)


def _compile_junction(formula: And | Or, scope: frozenset[str]) -> Test:
    parts = tuple(_compile(arg, scope) for arg in formula.args)
    if isinstance(formula, And):

        def conjunction(world: World, env: Env) -> bool:
            for part in parts:  # noqa: SIM110 - all() over a generator costs more on this hot path
                if not part(world, env):
                    return False
            return True

        return conjunction

    def disjunction(world: World, env: Env) -> bool:
        for part in parts:  # noqa: SIM110 - as above
            if part(world, env):
                return True
        return False

    return disjunction


def _compile_quantified(formula: Quantified, scope: frozenset[str]) -> Test:
    names = tuple(_var(v) for v in formula.variables)
    types = tuple(v.type for v in formula.variables)
    body, universal = _compile(formula.body, scope | set(names)), formula.universal
    bindings = _objects(names, types) if universal else _bindings_for(formula.body, names, types, scope)

    def quantified(world: World, env: Env) -> bool:
        for inner in bindings(world, env):
            if body(world, inner) is not universal:
                return not universal
        return universal

    return quantified


def _bindings_for(
    condition: Formula, names: tuple[str, ...], types: tuple[str, ...], scope: frozenset[str]
) -> Bindings:
    """Bindings of ``names`` among which all those satisfying ``condition`` are: candidates read off
    the facts where an atom of ``condition`` allows it (see :class:`_Candidates`), else all objects."""
    candidates = _Candidates.of(condition, names, types, scope)
    return candidates.bindings if candidates is not None else _objects(names, types)


def _objects(names: tuple[str, ...], types: tuple[str, ...]) -> Bindings:
    """Bindings of ``names`` to every combination of objects of their ``types``."""

    def bindings(world: World, env: Env) -> Iterator[Env]:
        inner = dict(env)
        for combo in itertools.product(*(world.objects_of(t) for t in types)):
            inner.update(zip(names, combo, strict=True))
            yield inner

    return bindings


@dataclass(frozen=True, slots=True)
class _Candidates:
    """Bindings of quantified variables read off the facts about one already-bound term.

    Where a binding only counts if an atom over all the quantified variables holds (the body of
    an ``exists``, the condition of a ``forall`` effect), the facts about that atom's bound term
    (``?w`` in ``(inside ?c ?w)``) contain every binding that can count: a washer holds a few
    clothes, while a home may hold thousands. The caller still evaluates the whole condition.
    """

    predicate: str
    terms: tuple[str, ...]
    anchor: str  # a term bound outside the quantifier: a parameter or a constant
    names: tuple[str, ...]
    types: tuple[str, ...]

    @classmethod
    def of(
        cls, condition: Formula, names: tuple[str, ...], types: tuple[str, ...], scope: frozenset[str]
    ) -> _Candidates | None:
        """From the first atom of ``condition`` (itself, or a conjunct) that names every variable."""
        for atom in condition.args if isinstance(condition, And) else (condition,):
            if isinstance(atom, Atom) and set(names) <= set(atom.terms):
                anchors = [t for t in atom.terms if t not in names and (t in scope or not t.startswith("?"))]
                if anchors:
                    return cls(atom.predicate, atom.terms, anchors[0], names, types)
        return None

    def bindings(self, world: World, env: Env) -> Iterator[Env]:
        """``env`` extended by each candidate (one dict, updated in place: copy it to keep one)."""
        inner = dict(env)
        for fact in world.facts_about(env.get(self.anchor, self.anchor)):
            if fact.predicate == self.predicate and self._match(fact.args, env, inner) and self._typed(world, inner):
                yield inner

    def _match(self, args: tuple[str, ...], env: Env, inner: Env) -> bool:
        """Bind the variables to ``args`` in ``inner``; whether the other terms and repeats agree."""
        fresh: set[str] = set()
        for term, arg in zip(self.terms, args, strict=True):
            if term in fresh:
                if inner[term] != arg:
                    return False
            elif term in self.names:
                inner[term] = arg
                fresh.add(term)
            elif env.get(term, term) != arg:
                return False
        return True

    def _typed(self, world: World, inner: Env) -> bool:
        return all(world.is_a(inner[n], t) for n, t in zip(self.names, self.types, strict=True))


@functools.lru_cache(maxsize=1024)
def _compile_cached(formula: Formula, scope: frozenset[str]) -> Test:
    return _compile(formula, scope)


# -- compiling actions ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _CompiledEffect:
    make: MakeFact
    positive: bool
    condition: Test | None  # None: unconditional
    bindings: Bindings | None  # of the forall variables; None: no forall

    def fire(self, world: World, env: Env, adds: set[Fact], deletes: set[Fact]) -> None:
        """Collect the atoms this effect sets, with conditions read in the state before the action."""
        target, condition, make = (adds if self.positive else deletes), self.condition, self.make
        for binding in self.bindings(world, env) if self.bindings is not None else (env,):
            if condition is None or condition(world, binding):
                target.add(make(binding))


def _compile_effect(effect: Effect, scope: frozenset[str]) -> _CompiledEffect:
    names = tuple(_var(v) for v in effect.forall)
    types = tuple(v.type for v in effect.forall)
    inner = scope | set(names)
    condition = None if effect.condition == TRUE else _compile(effect.condition, inner)
    bindings = _bindings_for(effect.condition, names, types, scope) if names else None
    return _CompiledEffect(_make_fact(effect.atom, inner), effect.positive, condition, bindings)


@dataclass(frozen=True, slots=True)
class _CompiledAction:
    schema: ActionSchema
    names: tuple[str, ...]  # "?a", ... in parameter order
    precondition: Test
    effects: tuple[_CompiledEffect, ...]

    @classmethod
    def of(cls, schema: ActionSchema) -> _CompiledAction:
        names = tuple(_var(p) for p in schema.parameters)
        scope = frozenset(names)
        effects = tuple(_compile_effect(e, scope) for e in schema.effects)
        return cls(schema, names, _compile(schema.precondition, scope), effects)

    def delta(self, world: World, env: Env) -> Delta:
        """Delete-then-add, keeping only real changes: an atom both deleted and added stays (is added)."""
        adds: set[Fact] = set()
        deletes: set[Fact] = set()
        for effect in self.effects:
            effect.fire(world, env, adds, deletes)
        holds = world.holds
        remove = frozenset(f for f in deletes if f not in adds and holds(f))
        return Delta(remove=remove, add=frozenset(f for f in adds if not holds(f)))


# -- explaining failures --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Why:
    """One false literal: what is the matter in English, and the grounded literal."""

    english: str
    literal: str


def _ground(formula: Formula, env: Mapping[str, str]) -> Formula:
    """``formula`` with bound variables replaced by their objects (quantified ones shadow)."""
    if isinstance(formula, Atom):
        return Atom(formula.predicate, tuple(env.get(t, t) for t in formula.terms))
    if isinstance(formula, Equals):
        return Equals(env.get(formula.left, formula.left), env.get(formula.right, formula.right))
    if isinstance(formula, Not):
        return Not(_ground(formula.arg, env))
    if isinstance(formula, And | Or):
        return type(formula)(tuple(_ground(a, env) for a in formula.args))
    if isinstance(formula, Quantified):
        inner = {k: v for k, v in env.items() if k not in {_var(p) for p in formula.variables}}
        return Quantified(formula.universal, formula.variables, _ground(formula.body, inner))
    return formula


def _negated(text: str) -> str:
    """English negation of a predicate template's sentence, good enough for "X is Y" templates."""
    if " is " in text:
        return text.replace(" is ", " is not ", 1)
    return f"it is not the case that {text}"


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


class _Explainer:
    """Why a formula that evaluated false is false, literal by literal (the slow path, on failure only)."""

    def __init__(self, domain: Domain, world: World) -> None:
        self.language = domain.language
        self.world = world

    def why(self, formula: Formula, env: Env) -> list[_Why]:
        if isinstance(formula, Atom):
            fact = Fact.unchecked(formula.predicate, tuple(env.get(t, t) for t in formula.terms))
            return [_Why(_negated(self.language.fact(fact)), str(fact))]
        if isinstance(formula, Not):
            return [self._why_not(formula.arg, env)]
        if isinstance(formula, And):
            return [w for arg in formula.args if not self._holds(arg, env) for w in self.why(arg, env)]
        if isinstance(formula, Quantified):
            return [self._why_quantified(formula, env)]
        if isinstance(formula, Equals):
            left, right = env.get(formula.left, formula.left), env.get(formula.right, formula.right)
            return [_Why(f"{left} is not {right}", str(Equals(left, right)))]
        literal = str(_ground(formula, env))
        return [_Why("none of its alternatives holds" if isinstance(formula, Or) else "it never holds", literal)]

    def _holds(self, formula: Formula, env: Env) -> bool:
        return _compile_cached(formula, frozenset(env))(self.world, env)

    def _why_not(self, arg: Formula, env: Env) -> _Why:
        grounded = _ground(arg, env)
        if isinstance(grounded, Atom):
            fact = Fact.unchecked(grounded.predicate, grounded.terms)
            return _Why(self.language.fact(fact), f"(not {fact})")
        return _Why(f"{grounded} holds", str(Not(grounded)))

    def _why_quantified(self, formula: Quantified, env: Env) -> _Why:
        """A forall by its first counterexample; an exists by saying there is no witness."""
        literal = str(_ground(formula, env))
        if not formula.universal:
            kinds = ", ".join(f"{v.type} ?{v.name}" for v in formula.variables)
            return _Why(f"there is no {kinds} such that {_ground(formula.body, env)}", literal)
        names, types = tuple(_var(v) for v in formula.variables), tuple(v.type for v in formula.variables)
        bindings = _objects(names, types)(self.world, env)
        counterexample = next((dict(b) for b in bindings if not self._holds(formula.body, b)), None)
        whys = self.why(formula.body, counterexample) if counterexample is not None else []
        return _Why(whys[0].english if whys else "it does not hold for every binding", literal)


# -- the evaluator --------------------------------------------------------------------------


class ActionEvaluator:
    """Checks and applies ground actions of one domain over :class:`World` s.

    Each schema is compiled once here; checking a ground action binds its parameters and
    runs the compiled precondition, which for the shipped domains is a handful of set lookups.
    """

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self._actions = {name: _CompiledAction.of(schema) for name, schema in domain.actions.items()}

    def evaluate(self, formula: Formula, world: World, binding: Mapping[str, str] | None = None) -> bool:
        """Whether ``formula`` holds in ``world`` with ``binding`` (keys with or without ``?``).

        Raises ``ValueError`` if the formula uses a variable the binding does not bind.
        """
        env = {(k if k.startswith("?") else f"?{k}"): v for k, v in (binding or {}).items()}
        return _compile_cached(formula, frozenset(env))(world, env)

    def check(self, action: GroundAction, world: World) -> StepOutcome:
        """Whether ``action`` applies in ``world`` and the delta it would make; ``world`` is not changed.

        Raises ``ValueError`` only for a world of another domain (misuse, not bad content).
        """
        if world.domain.name != self.domain.name:
            raise ValueError(f"a world of domain {world.domain.name} given to an evaluator of {self.domain.name}")
        compiled = self._actions.get(action.name)
        if compiled is None:
            return self._reject(action, f"the domain has no action {action.name}; it has {', '.join(self._actions)}")
        problems = self._argument_problems(compiled.schema, action, world)
        if problems:
            return self._reject(action, *problems)
        env = dict(zip(compiled.names, action.args, strict=True))
        if not compiled.precondition(world, env):
            whys = _Explainer(self.domain, world).why(compiled.schema.precondition, env)
            return self._reject(action, *(f"{w.english} — precondition {w.literal} is false" for w in whys))
        return StepOutcome(action, True, compiled.delta(world, env))

    def execute(self, action: GroundAction, world: World) -> StepOutcome:
        """:meth:`check`, then apply the delta to ``world`` if the action applies."""
        outcome = self.check(action, world)
        if outcome.applicable:
            world.apply(outcome.delta)
        return outcome

    def validate(self, plan: Sequence[GroundAction], world: World, goal: Formula | None = None) -> PlanOutcome:
        """Run ``plan`` on a copy of ``world`` up to its first failing step, then test ``goal`` if given."""
        current, steps = world.copy(), []
        for index, action in enumerate(plan):
            outcome = self.execute(action, current)
            steps.append(outcome)
            if not outcome.applicable:
                reached = None if goal is None else False
                return PlanOutcome(False, tuple(steps), index, current, reached)
        if goal is None:
            return PlanOutcome(True, tuple(steps), None, current)
        reached = self.evaluate(goal, current)
        why = () if reached else tuple(f"goal: {w.english} — {w.literal} is false" for w in self._why(goal, current))
        return PlanOutcome(True, tuple(steps), None, current, reached, why)

    def _why(self, formula: Formula, world: World) -> list[_Why]:
        return _Explainer(self.domain, world).why(formula, {})

    def _argument_problems(self, schema: ActionSchema, action: GroundAction, world: World) -> list[str]:
        if len(action.args) != len(schema.parameters):
            signature = " ".join(map(str, schema.parameters))
            count = len(schema.parameters)
            return [f"{schema.name} takes {count} argument{'s' * (count != 1)} ({signature}), not {len(action.args)}"]
        problems = []
        for parameter, name in zip(schema.parameters, action.args, strict=True):
            type_ = world.type_of(name)
            if type_ is None:
                problems.append(f"there is no object {name}")
            elif not world.is_a(name, parameter.type):
                problems.append(f"{name} is {_a(type_)}, but ?{parameter.name} must be {_a(parameter.type)}")
        return problems

    @staticmethod
    def _reject(action: GroundAction, *reasons: str) -> StepOutcome:
        return StepOutcome(action, False, NO_CHANGE, tuple(f"{action}: {r}" for r in reasons))
