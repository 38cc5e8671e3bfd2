"""Action schemas compiled once into closures over a binding (``"?var" -> object``), so that checking
a precondition is a few set lookups (see :mod:`planning.evaluator`)."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

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
from planning.deadline import BindingWatch, counted
from planning.world import World

Env = dict[str, str]  # "?var" -> object name
Test = Callable[[World, Env], bool]
MakeFact = Callable[[Env], Fact]
Bindings = Callable[[World, Env], Iterator[Env]]  # a binding extended by quantified variables


# -- compiling formulas ---------------------------------------------------------------------


def var_name(parameter: Parameter) -> str:
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


def _compile(formula: Formula, scope: frozenset[str], watch: BindingWatch | None = None) -> Test:
    """A closure deciding ``formula`` under a binding of (at least) the variables in ``scope``; its
    quantifiers count the bindings they try into ``watch``, if given."""
    if isinstance(formula, Atom):
        make = _make_fact(formula, scope)
        return lambda world, env: world.holds(make(env))
    if isinstance(formula, Truth):
        value = formula.value
        return lambda world, env: value
    if isinstance(formula, Equals):
        return _compile_equals(formula, scope)
    if isinstance(formula, Not):
        inner = _compile(formula.arg, scope, watch)
        return lambda world, env: not inner(world, env)
    if isinstance(formula, And | Or):
        return _compile_junction(formula, scope, watch)
    return _compile_quantified(formula, scope, watch)


def _compile_equals(formula: Equals, scope: frozenset[str]) -> Test:
    _check_bound((formula.left, formula.right), scope, formula)
    left, right = formula.left, formula.right
    return lambda world, env: env.get(left, left) == env.get(right, right)


def _compile_junction(formula: And | Or, scope: frozenset[str], watch: BindingWatch | None) -> Test:
    parts = tuple(_compile(arg, scope, watch) for arg in formula.args)
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


def _compile_quantified(formula: Quantified, scope: frozenset[str], watch: BindingWatch | None) -> Test:
    names = tuple(var_name(v) for v in formula.variables)
    types = tuple(v.type for v in formula.variables)
    body, universal = _compile(formula.body, scope | set(names), watch), formula.universal
    if universal:
        bindings = objects_binding(names, types, watch)
    else:
        bindings = _bindings_for(formula.body, names, types, scope, watch)

    def quantified(world: World, env: Env) -> bool:
        for inner in bindings(world, env):
            if body(world, inner) is not universal:
                return not universal
        return universal

    return quantified


def _bindings_for(
    condition: Formula,
    names: tuple[str, ...],
    types: tuple[str, ...],
    scope: frozenset[str],
    watch: BindingWatch | None = None,
) -> Bindings:
    """Bindings of ``names`` among which all those satisfying ``condition`` are: candidates read off
    the facts where an atom of ``condition`` allows it (see :class:`_Candidates`), else all objects.

    The candidates are read only while their anchor has no more facts than there are combinations
    of objects: the goal checker's bound counts those combinations, and a table crowded with other
    things must not cost an ``exists`` over the few cups more than that.
    """
    everything = objects_binding(names, types, watch)
    candidates = _Candidates.of(condition, names, types, scope, watch)
    if candidates is None:
        return everything

    def fewer(world: World, env: Env) -> Iterator[Env]:
        if candidates.facts_to_read(world, env) <= _combinations(world, types):
            return candidates.bindings(world, env)
        return everything(world, env)

    return fewer


def _combinations(world: World, types: tuple[str, ...]) -> int:
    return math.prod(len(world.objects_of(t)) for t in types)


def objects_binding(names: tuple[str, ...], types: tuple[str, ...], watch: BindingWatch | None = None) -> Bindings:
    """Bindings of ``names`` to every combination of objects of their ``types``, counted by ``watch``."""

    def bindings(world: World, env: Env) -> Iterator[Env]:
        inner = dict(env)
        for combo in counted(itertools.product(*(world.objects_of(t) for t in types)), watch):
            inner.update(zip(names, combo, strict=True))
            yield inner

    return bindings


@dataclass(frozen=True, slots=True, kw_only=True)
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
    watch: BindingWatch | None = None  # counts each fact read as a binding tried

    @classmethod
    def of(
        cls,
        condition: Formula,
        names: tuple[str, ...],
        types: tuple[str, ...],
        scope: frozenset[str],
        watch: BindingWatch | None = None,
    ) -> _Candidates | None:
        """From the first atom of ``condition`` (itself, or a conjunct) that names every variable."""
        for atom in condition.args if isinstance(condition, And) else (condition,):
            if isinstance(atom, Atom) and set(names) <= set(atom.terms):
                anchors = [t for t in atom.terms if t not in names and (t in scope or not t.startswith("?"))]
                if anchors:
                    return cls(
                        predicate=atom.predicate,
                        terms=atom.terms,
                        anchor=anchors[0],
                        names=names,
                        types=types,
                        watch=watch,
                    )
        return None

    def facts_to_read(self, world: World, env: Env) -> int:
        """How many facts :meth:`bindings` reads under ``env``: all those about the anchor."""
        return world.count_about(env.get(self.anchor, self.anchor))

    def bindings(self, world: World, env: Env) -> Iterator[Env]:
        """``env`` extended by each candidate (one dict, updated in place: copy it to keep one)."""
        inner = dict(env)
        for fact in counted(world.facts_about(env.get(self.anchor, self.anchor)), self.watch):
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
def compile_cached(formula: Formula, scope: frozenset[str]) -> Test:
    return _compile(formula, scope)


def compile_test(formula: Formula, scope: frozenset[str], watch: BindingWatch | None = None) -> Test:
    """The closure deciding ``formula``: the shared one, or one of its own whose bindings ``watch`` counts."""
    return compile_cached(formula, scope) if watch is None else _compile(formula, scope, watch)


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
    names = tuple(var_name(v) for v in effect.forall)
    types = tuple(v.type for v in effect.forall)
    inner = scope | set(names)
    condition = None if effect.condition == TRUE else _compile(effect.condition, inner)
    bindings = _bindings_for(effect.condition, names, types, scope) if names else None
    return _CompiledEffect(_make_fact(effect.atom, inner), effect.positive, condition, bindings)


@dataclass(frozen=True, slots=True)
class CompiledAction:
    schema: ActionSchema
    names: tuple[str, ...]  # "?a", ... in parameter order
    precondition: Test
    effects: tuple[_CompiledEffect, ...]

    @classmethod
    def of(cls, schema: ActionSchema) -> CompiledAction:
        names = tuple(var_name(p) for p in schema.parameters)
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
