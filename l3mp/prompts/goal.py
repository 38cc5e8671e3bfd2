"""The goal prompt (Alg. 4, line 2): a task and the retrieved facts → a PDDL goal formula."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain
from kg_memory.model import Entity, Fact
from l3mp.llm.base import Message
from l3mp.prompts._common import (
    TRIPLE_NOTE,
    check_context,
    example_fact,
    render_context_request,
    render_predicates,
    strict_object,
)

NAME: Final = "goal"

SCHEMA: Final[dict[str, Any]] = strict_object({"goal": {"type": "string"}})

_SYSTEM: Final = """\
You turn a task for a household robot into the :goal of a PDDL problem in the domain "{domain}".

Predicates (parameters, then meaning):
{predicates}

Rules:
- Write one PDDL goal formula, e.g. (and (p a b) (not (q c))), with predicates p, q and entities a, b, c.
- Use only the predicates above and the entities listed; use and, or, not as needed.
- Describe the state the task asks for, not the actions that reach it.

{triple_note}
Answer in JSON, the goal as one string, e.g. {{"goal": "{example}"}}."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GoalInput:
    domain: Domain
    task: str
    entities: Sequence[Entity]
    facts: Sequence[Fact]
    # Open world: entities whose location is unknown (not false), and what the caller has settled
    # ("'the mug' means mug_2"); both empty in a closed-world request, which then renders as before.
    unknowns: Sequence[str] = ()
    notes: Sequence[str] = ()

    def __post_init__(self) -> None:
        check_context(self, "task")


def render(inputs: GoalInput) -> list[Message]:
    fact = example_fact(inputs.domain, inputs.facts)
    system = _SYSTEM.format(
        domain=inputs.domain.name,
        predicates=render_predicates(inputs.domain),
        triple_note=TRIPLE_NOTE,
        example=str(fact) if fact else "(and (p a b) (not (q c)))",
    )
    user = render_context_request(inputs.entities, inputs.facts, "Task", inputs.task)
    extra = ""
    if inputs.unknowns:
        extra += "\n\nUnknown, not false (the robot will look for these):\n" + "\n".join(
            f"- {u}" for u in inputs.unknowns
        )
    if inputs.notes:
        extra += "\n\nThe user settled:\n" + "\n".join(f"- {n}" for n in inputs.notes)
    if extra:  # before the task line, which stays last
        head, _, task_line = user.rpartition("\n\n")
        user = f"{head}{extra}\n\n{task_line}"
    return [Message("system", system), Message("user", user)]
