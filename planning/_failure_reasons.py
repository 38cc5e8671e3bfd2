"""Why a formula does not hold, in English: only a failed check pays for explaining itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kg_memory.domain import Domain
from kg_memory.formula import (
    And,
    Atom,
    Equals,
    Formula,
    Not,
    Or,
    Quantified,
)
from kg_memory.model import Fact
from planning._compiled import Env, compile_cached, objects_binding, var_name
from planning.world import World

# -- explaining failures --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Why:
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
        inner = {k: v for k, v in env.items() if k not in {var_name(p) for p in formula.variables}}
        return Quantified(formula.universal, formula.variables, _ground(formula.body, inner))
    return formula


def _negated(text: str) -> str:
    """English negation of a predicate template's sentence, good enough for "X is Y" templates."""
    if " is " in text:
        return text.replace(" is ", " is not ", 1)
    return f"it is not the case that {text}"


def a_noun(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


class Explainer:
    """Why a formula that evaluated false is false, literal by literal (the slow path, on failure only)."""

    def __init__(self, domain: Domain, world: World) -> None:
        self.language = domain.language
        self.world = world

    def why(self, formula: Formula, env: Env) -> list[Why]:
        if isinstance(formula, Atom):
            fact = Fact.unchecked(formula.predicate, tuple(env.get(t, t) for t in formula.terms))
            return [Why(_negated(self.language.fact(fact)), str(fact))]
        if isinstance(formula, Not):
            return [self._why_not(formula.arg, env)]
        if isinstance(formula, And):
            return [w for arg in formula.args if not self._holds(arg, env) for w in self.why(arg, env)]
        if isinstance(formula, Quantified):
            return [self._why_quantified(formula, env)]
        if isinstance(formula, Equals):
            left, right = env.get(formula.left, formula.left), env.get(formula.right, formula.right)
            return [Why(f"{left} is not {right}", str(Equals(left, right)))]
        literal = str(_ground(formula, env))
        return [Why("none of its alternatives holds" if isinstance(formula, Or) else "it never holds", literal)]

    def _holds(self, formula: Formula, env: Env) -> bool:
        return compile_cached(formula, frozenset(env))(self.world, env)

    def _why_not(self, arg: Formula, env: Env) -> Why:
        grounded = _ground(arg, env)
        if isinstance(grounded, Atom):
            fact = Fact.unchecked(grounded.predicate, grounded.terms)
            return Why(self.language.fact(fact), f"(not {fact})")
        return Why(f"{grounded} holds", str(Not(grounded)))

    def _why_quantified(self, formula: Quantified, env: Env) -> Why:
        """A forall by its first counterexample; an exists by saying there is no witness."""
        literal = str(_ground(formula, env))
        if not formula.universal:
            kinds = ", ".join(f"{v.type} ?{v.name}" for v in formula.variables)
            return Why(f"there is no {kinds} such that {_ground(formula.body, env)}", literal)
        names, types = tuple(var_name(v) for v in formula.variables), tuple(v.type for v in formula.variables)
        bindings = objects_binding(names, types)(self.world, env)
        counterexample = next((dict(b) for b in bindings if not self._holds(formula.body, b)), None)
        whys = self.why(formula.body, counterexample) if counterexample is not None else []
        return Why(whys[0].english if whys else "it does not hold for every binding", literal)
