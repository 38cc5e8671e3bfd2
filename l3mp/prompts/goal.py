"""The goal prompt (Alg. 4, line 2): a task and the retrieved facts → a PDDL goal formula.

The system message is the same for every request of a domain (its examples are made from the
domain's templates), so a server caches it; the request's context and task follow in the user
message. :func:`schema` is the answer's schema for one request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from kg_memory.domain import Domain
from kg_memory.model import Entity, Fact
from l3mp.llm.base import Message
from l3mp.prompts import schemas
from l3mp.prompts._common import (
    TRIPLE_NOTE,
    check_context,
    domain_block,
    example_args,
    example_predicate,
    render_context_request,
    strict_object,
)

NAME: Final = "goal"

# The answer's shape; :func:`schema` adds the request's words.
SCHEMA: Final[dict[str, Any]] = strict_object({"goal": {"type": "string"}})

_TASK: Final = """\
Your task: turn a task for the robot into the :goal of a PDDL problem in this domain.

Rules:
- Write one PDDL goal formula: one fact (p a b), or (not (p a b)), or an (and ...) or (or ...) of them,
  with predicates p from the list above and entities a, b from the entities listed.
- Describe the state the task asks for, not the actions that reach it.

{triple_note}
Answer in JSON, the goal as one string. {example}"""


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
    return [Message("system", system(inputs.domain)), Message("user", user)]


def system(domain: Domain) -> str:
    """The system message: the domain's, never the request's."""
    task = _TASK.format(triple_note=TRIPLE_NOTE, example=_example(domain))
    return f"{domain_block(domain)}\n\n{task}"


def schema(inputs: GoalInput) -> dict[str, Any]:
    """The answer's schema for this request: a formula over the domain's predicates and the context's names."""
    return schemas.goal_schema(inputs.domain, inputs.entities)


def _example(domain: Domain) -> str:
    """Two goals written from the domain's templates: one fact, and a conjunction with a negation."""
    binary, unary = example_predicate(domain, 2), example_predicate(domain, 1)
    if binary is None:
        return 'E.g. {"goal": "(and (p a b) (not (q c)))"}.'
    fact = Fact(binary.name, example_args(domain, binary))
    template = domain.language.predicates.get(binary.name)
    task = f'"Make sure {template.format(*fact.args)}."' if template else f'"Make {fact} true."'
    text = f'For the task {task} answer {{"goal": "{fact}"}}'
    if unary is not None:
        other = Fact(unary.name, example_args(domain, unary))
        text += f'; for two conditions, one negated: {{"goal": "(and {fact} (not {other}))"}}'
    return text + "."
