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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kg_memory.domain import Domain
from kg_memory.errors import InvalidValue
from kg_memory.formula import (
    ActionSchema,
    Formula,
)
from kg_memory.model import Delta, Fact
from planning._compiled import CompiledAction, compile_test
from planning._failure_reasons import Explainer, Why, a_noun
from planning.deadline import BindingWatch
from planning.world import World

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


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRun:
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
    cost: float = 0.0  # of the steps that applied: action costs in a domain with them, else one per step

    @property
    def reasons(self) -> tuple[str, ...]:
        """Everything that went wrong: the failed step's reasons, then the goal's."""
        failed = self.steps[self.failed_at].reasons if self.failed_at is not None else ()
        return failed + self.goal_reasons


# -- the evaluator --------------------------------------------------------------------------


class ActionEvaluator:
    """Checks and applies ground actions of one domain over :class:`World` s.

    Each schema is compiled once here; checking a ground action binds its parameters and
    runs the compiled precondition, which for the shipped domains is a handful of set lookups.
    """

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self._actions = {name: CompiledAction.of(schema) for name, schema in domain.actions.items()}

    def evaluate(
        self,
        formula: Formula,
        world: World,
        binding: Mapping[str, str] | None = None,
        *,
        watch: BindingWatch | None = None,
    ) -> bool:
        """Whether ``formula`` holds in ``world`` with ``binding`` (keys with or without ``?``).

        ``watch`` counts the bindings its quantifiers try, and ends the evaluation at its deadline.
        Raises ``ValueError`` if the formula uses a variable the binding does not bind, and
        :class:`~planning.deadline.EvaluationDeadlinePassed` when the watch's deadline passes.
        """
        env = {(k if k.startswith("?") else f"?{k}"): v for k, v in (binding or {}).items()}
        return compile_test(formula, frozenset(env), watch)(world, env)

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
        if self.domain.costs and self.cost(action, world) is None:
            terms = [(t.predicate, tuple(env.get(a, a) for a in t.terms)) for t in compiled.schema.cost.terms]
            unknown = [str(Fact.unchecked(*t)) for t in terms if world.value(*t) is None]
            return self._reject(action, f"its cost is unknown: no value for {', '.join(unknown)}")
        if not compiled.precondition(world, env):
            whys = Explainer(self.domain, world).why(compiled.schema.precondition, env)
            return self._reject(action, *(f"{w.english} — precondition {w.literal} is false" for w in whys))
        return StepOutcome(action, True, compiled.delta(world, env))

    def cost(self, action: GroundAction, world: World) -> float | None:
        """What ``action`` adds to the plan's cost: 1 in a domain without action costs; else its
        schema's constant plus the values of its cost functions (``None`` if one has no value, and
        then, as in Fast Downward, the action does not apply)."""
        compiled = self._actions.get(action.name)
        if not self.domain.costs or compiled is None:
            return 1.0
        cost = compiled.schema.cost
        env = dict(zip(compiled.names, action.args, strict=False))
        total = cost.constant
        for term in cost.terms:
            value = world.value(term.predicate, tuple(env.get(t, t) for t in term.terms))
            if value is None:
                return None
            total += value
        return total

    def plan_cost(self, plan: Sequence[GroundAction], world: World) -> float:
        """The cost of running ``plan`` from ``world`` (cost functions are static: no run needed)."""
        return sum(self.cost(action, world) or 0.0 for action in plan)

    def execute(self, action: GroundAction, world: World) -> StepOutcome:
        """:meth:`check`, then apply the delta to ``world`` if the action applies."""
        outcome = self.check(action, world)
        if outcome.applicable:
            world.apply(outcome.delta)
        return outcome

    def validate(
        self,
        plan: Sequence[GroundAction],
        world: World,
        goal: Formula | None = None,
        *,
        watch: BindingWatch | None = None,
    ) -> PlanRun:
        """Run ``plan`` on a copy of ``world`` up to its first failing step, then test ``goal`` if given
        (under ``watch``, as :meth:`evaluate`: it may raise
        :class:`~planning.deadline.EvaluationDeadlinePassed`)."""
        current, steps, cost = world.copy(), [], 0.0
        for index, action in enumerate(plan):
            outcome = self.execute(action, current)
            steps.append(outcome)
            if not outcome.applicable:
                reached = None if goal is None else False
                return PlanRun(
                    executable=False,
                    steps=tuple(steps),
                    failed_at=index,
                    world=current,
                    goal_reached=reached,
                    cost=cost,
                )
            cost += self.cost(action, current) or 0.0
        if goal is None:
            return PlanRun(executable=True, steps=tuple(steps), failed_at=None, world=current, cost=cost)
        reached = self.evaluate(goal, current, watch=watch)
        why = () if reached else tuple(f"goal: {w.english} — {w.literal} is false" for w in self._why(goal, current))
        return PlanRun(
            executable=True,
            steps=tuple(steps),
            failed_at=None,
            world=current,
            goal_reached=reached,
            goal_reasons=why,
            cost=cost,
        )

    def _why(self, formula: Formula, world: World) -> list[Why]:
        return Explainer(self.domain, world).why(formula, {})

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
                problems.append(f"{name} is {a_noun(type_)}, but ?{parameter.name} must be {a_noun(parameter.type)}")
        return problems

    @staticmethod
    def _reject(action: GroundAction, *reasons: str) -> StepOutcome:
        return StepOutcome(action, False, NO_CHANGE, tuple(f"{action}: {r}" for r in reasons))
