"""Perception's exceptions: input it cannot read (expected outcomes are values)."""

from kg_memory.errors import L3mpError


class PerceptionError(L3mpError):
    """Perception was given something it cannot read; the message says what."""


class ThorMetadataError(PerceptionError):
    """AI2-THOR metadata (or a name or objectId) that is not what ai2thor 5.0.0 reports."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")
