"""The pipelines' exceptions: misuse and answers that cannot be used (expected outcomes are values)."""

from __future__ import annotations

from collections.abc import Sequence

from kg_memory import L3mpError


class PipelineError(L3mpError):
    """An update, plan or import pipeline was asked for something it cannot do; the message says what."""


class AnswerProblem(PipelineError, ValueError):
    """An answer that cannot be used, with sentences the model can act on (raised by parsers)."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


__all__ = ["AnswerProblem", "PipelineError"]
