"""What the runtime acts in: the narrow :class:`Environment` protocol (the simulator's and AI2-THOR's
implementations are the lab's, in ``sim``).

An environment is perceived, acted in, talked about (people's reports) and asked for tasks; time
passes in it between the robot's actions (:meth:`Environment.advance`), when people may change things.
``truth`` and ``judge`` are for evaluation: a real robot returns ``None`` (it cannot know).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kg_memory.model import Fact
from l3mp.outcomes import Question
from perception.observation import Observation
from planning.evaluator import GroundAction, StepOutcome


@dataclass(frozen=True, slots=True)
class TaskRequest:
    """A task for the robot: English ``text``, optionally its PDDL ``goal`` (then no model is asked)."""

    text: str
    goal: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    answers: tuple[tuple[str, str], ...] = ()  # open world: (mention, entity) settled by whoever asked


@runtime_checkable
class Asker(Protocol):
    """An environment that takes questions back to whoever asked (optional; open-world runtimes use it)."""

    def ask(self, task: TaskRequest, questions: tuple[Question, ...]) -> None: ...


@runtime_checkable
class Environment(Protocol):
    def observe(self) -> Observation: ...

    def execute(self, action: GroundAction) -> StepOutcome: ...

    def next_report(self) -> str | None: ...

    def next_task(self) -> TaskRequest | None: ...

    def advance(self) -> None: ...

    def truth(self) -> frozenset[Fact] | None: ...

    def judge(self, task: TaskRequest, goal: str | None) -> bool | None: ...
