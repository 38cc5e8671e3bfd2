"""Plans in English, one sentence per step from the domain's action templates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kg_memory.domain import Domain
from planning.errors import PlanningError
from planning.evaluator import GroundAction


class ExplainError(PlanningError):
    """A plan step the domain cannot say in English: ``action`` is the step at fault."""

    def __init__(self, action: GroundAction, problem: str) -> None:
        self.action = action
        self.problem = problem
        super().__init__(f"cannot explain {action}: {problem}")


def explain(plan: Sequence[GroundAction], domain: Domain, labels: Mapping[str, str] | None = None) -> list[str]:
    """Each step of ``plan`` in English: ``(pick robot_1 mug_1 table_1 kitchen)`` →
    ``"robot_1 picks up mug_1 from table_1 in kitchen"``.

    With ``labels`` (entity name → what people call it, used verbatim, so pass "the blue mug"
    for "picks up the blue mug") the labelled names are replaced. A step whose action has no
    template reads as its PDDL. Raises :class:`ExplainError` for an action the domain lacks or
    a step with the wrong number of arguments: a plan that reached here should never have one.
    """
    return [_step(action, domain, labels) for action in plan]


def _step(action: GroundAction, domain: Domain, labels: Mapping[str, str] | None) -> str:
    schema = domain.actions.get(action.name)
    if schema is None:
        known = ", ".join(sorted(domain.actions))
        raise ExplainError(action, f"domain {domain.name} has no action {action.name!r}; it has {known}")
    if len(action.args) != len(schema.parameters):
        signature = " ".join(map(str, schema.parameters))
        raise ExplainError(
            action, f"{action.name} takes {len(schema.parameters)} arguments ({signature}), not {len(action.args)}"
        )
    return domain.language.action(action.name, action.args, labels)


def numbered(lines: Iterable[str]) -> str:
    """``"1. first\\n2. second"``; an empty plan is the empty string."""
    return "\n".join(f"{index}. {line}" for index, line in enumerate(lines, start=1))


def cost_sentence(domain: Domain, cost: float, optimal: bool, asked: bool = False) -> str:
    """The plan's cost in English: "The plan costs 5.25 (proven the cheapest)." Without action
    costs a plan costs one per step, so it is said as steps."""
    amount = f"{cost:g} step{'s' if cost != 1 else ''}" if not domain.costs else f"{cost:g}"
    verdict = " (proven the cheapest)" if optimal else " (not proven the cheapest)" if asked else ""
    return f"The plan costs {amount}{verdict}."
