"""Action schemas as immutable data: typed parameters, precondition formulas and effects.

Terms are ``?variables`` (action parameters and quantified variables) or constant names.
This is what the simulator's and the planner's action evaluators work from; it is read
from unified-planning's expression trees once, when a domain loads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str  # without the leading '?'
    type: str

    def __str__(self) -> str:
        return f"?{self.name} - {self.type}"


@dataclass(frozen=True, slots=True)
class Atom:
    predicate: str
    terms: tuple[str, ...]

    def __str__(self) -> str:
        return f"({' '.join((self.predicate, *self.terms))})"


@dataclass(frozen=True, slots=True)
class Truth:
    value: bool

    def __str__(self) -> str:
        return "(and)" if self.value else "(or)"


@dataclass(frozen=True, slots=True)
class Equals:
    left: str
    right: str

    def __str__(self) -> str:
        return f"(= {self.left} {self.right})"


@dataclass(frozen=True, slots=True)
class Not:
    arg: Formula

    def __str__(self) -> str:
        return f"(not {self.arg})"


@dataclass(frozen=True, slots=True)
class And:
    args: tuple[Formula, ...]

    def __str__(self) -> str:
        return f"(and {' '.join(map(str, self.args))})"


@dataclass(frozen=True, slots=True)
class Or:
    args: tuple[Formula, ...]

    def __str__(self) -> str:
        return f"(or {' '.join(map(str, self.args))})"


@dataclass(frozen=True, slots=True)
class Quantified:
    universal: bool  # forall, else exists
    variables: tuple[Parameter, ...]
    body: Formula

    def __str__(self) -> str:
        word = "forall" if self.universal else "exists"
        return f"({word} ({' '.join(map(str, self.variables))}) {self.body})"


Formula = Atom | Truth | Equals | Not | And | Or | Quantified

TRUE = Truth(True)


@dataclass(frozen=True, slots=True)
class Effect:
    """``atom`` becomes ``positive`` for every binding of ``forall`` where ``condition`` holds."""

    atom: Atom
    positive: bool
    condition: Formula = TRUE
    forall: tuple[Parameter, ...] = ()

    def __str__(self) -> str:
        text = str(self.atom) if self.positive else f"(not {self.atom})"
        if self.condition != TRUE:
            text = f"(when {self.condition} {text})"
        if self.forall:
            text = f"(forall ({' '.join(map(str, self.forall))}) {text})"
        return text


@dataclass(frozen=True, slots=True)
class Cost:
    """What an action adds to ``total-cost`` (IPC ``:action-costs``): a non-negative constant plus
    the values of static numeric functions of its parameters, e.g. ``(distance ?from ?to)``."""

    constant: float = 0.0
    terms: tuple[Atom, ...] = ()

    def __str__(self) -> str:
        parts = [str(t) for t in self.terms]
        if self.constant or not parts:
            parts.insert(0, f"{self.constant:g}")
        return parts[0] if len(parts) == 1 else f"(+ {' '.join(parts)})"


ZERO_COST = Cost()


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionSchema:
    name: str
    parameters: tuple[Parameter, ...]
    precondition: Formula = TRUE
    effects: tuple[Effect, ...] = ()
    cost: Cost = ZERO_COST  # counts only in a domain with action costs; otherwise every action costs 1

    @property
    def changes(self) -> frozenset[str]:
        """Predicates its effects may change."""
        return frozenset(e.atom.predicate for e in self.effects)
