"""What the simulated model reads in a prompt: the request, the listed entities, the shown facts.

It reads the rendered text back, as a real model would, so it can use only what the retriever put
in the prompt (see ``l3mp.prompts._common.render_context_request``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kg_memory.errors import InvalidName, InvalidValue
from kg_memory.model import Entity, Fact
from l3mp.llm import LLMError, Message
from l3mp.prompts import ISSUES_HEADER

ENTITIES_HEADER = "Entities (name (type): label):"
FACTS_HEADER = "Current facts:"
_REQUEST = re.compile(r"^(Update|Task|Request): (.+)$")
_ENTITY = re.compile(r"^(\S+) \((\S+)\): (.*)$")


class NoGroundTruth(LLMError):
    """The simulated model was asked something it was not briefed on (or a prompt it does not know)."""

    def __init__(self, prompt: str, text: str | None, problem: str) -> None:
        self.prompt = prompt
        self.text = text
        self.problem = problem
        where = f" for {text!r}" if text is not None else ""
        super().__init__(f"simulated model cannot answer the {prompt!r} prompt{where}: {problem}")


@dataclass(frozen=True, slots=True)
class PromptView:
    """The parts of a conversation the simulated model answers from."""

    text: str  # the request, whitespace-collapsed
    attempt: int  # 0 for the first answer, then the number of earlier answers
    entities: Mapping[str, Entity] = field(default_factory=dict)  # listed entities by name
    facts: frozenset[Fact] = frozenset()  # the "Current facts:" shown

    @property
    def reprompt(self) -> bool:
        return self.attempt > 0

    @property
    def visible(self) -> frozenset[str]:
        """Names the model can see: listed entities and the arguments of shown facts."""
        return frozenset(self.entities) | {a for f in self.facts for a in f.args}


def collapse(text: str) -> str:
    return " ".join(text.split())


def read_prompt(messages: Sequence[Message], prompt: str) -> PromptView:
    """The request of the first user message (its last line), its sections, and the attempt number."""
    first = next((m for m in messages if m.role == "user"), None)
    if first is None:
        raise NoGroundTruth(prompt, None, "the conversation has no user message")
    lines = first.content.strip().splitlines()
    match = _REQUEST.match(lines[-1].strip()) if lines else None
    if match is None:
        raise NoGroundTruth(prompt, None, "the first user message does not end with 'Update:', 'Task:' or 'Request:'")
    attempt = sum(1 for m in messages if m.role == "assistant")
    last = messages[-1]
    if attempt and not (last.role == "user" and last.content.startswith(ISSUES_HEADER)):
        attempt = 0  # an assistant turn that is not followed by issues is not a re-prompt
    entities = _entities(_section(lines, ENTITIES_HEADER))
    facts = frozenset(f for line in _section(lines, FACTS_HEADER) if (f := _fact(line)) is not None)
    return PromptView(collapse(match.group(2)), attempt, entities, facts)


def _section(lines: Sequence[str], header: str) -> list[str]:
    """The lines under ``header`` up to the next blank line; none for ``(none)`` or no such header."""
    try:
        start = lines.index(header) + 1
    except ValueError:
        return []
    body: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            break
        body.append(line.strip())
    return [] if body == ["(none)"] else body


def _entities(lines: Sequence[str]) -> dict[str, Entity]:
    found: dict[str, Entity] = {}
    for line in lines:
        match = _ENTITY.match(line)
        if match is None:
            continue
        try:
            entity = Entity(match.group(1), match.group(2), match.group(3))
        except (InvalidName, InvalidValue):
            continue  # a line a model could not make sense of either
        found[entity.name] = entity
    return found


def _fact(line: str) -> Fact | None:
    """A fact from its triple view ``(a, p, b)`` / ``(a, p, true)``, or ``(p a b c)``; None if unreadable."""
    try:
        if "," not in line:
            return Fact.parse(line)
        parts = [p.strip() for p in line.strip().removeprefix("(").removesuffix(")").split(",")]
        return Fact.from_triple(*parts) if len(parts) == 3 else None
    except (InvalidName, InvalidValue):
        return None
