"""The simulator's exceptions (misuse; expected outcomes are values)."""

from kg_memory.errors import L3mpError


class SimulationError(L3mpError):
    """The simulator was asked for something it cannot do; the message says what."""


class EpisodeFormatError(SimulationError):
    """An episode file that is not what ``generate_episode`` writes."""

    def __init__(self, path: str, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {problem}")
