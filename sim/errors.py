"""The simulator's exceptions (misuse; expected outcomes are values)."""

from kg_memory.errors import L3mpError


class SimulationError(L3mpError):
    """The simulator was asked for something it cannot do; the message says what."""


class InvalidHomeSpec(SimulationError, ValueError):
    """A home that cannot be built as specified: no room, a negative count, a size below one."""

    def __init__(self, field: str, value: object, problem: str) -> None:
        self.field = field
        self.value = value
        super().__init__(problem)


class ObservationError(SimulationError, ValueError):
    """A state the robot cannot observe from (it is in no room), or that names an unknown entity."""

    def __init__(self, name: str, problem: str) -> None:
        self.name = name
        super().__init__(problem)


class EpisodeFormatError(SimulationError):
    """An episode file that is not what ``generate_episode`` writes."""

    def __init__(self, path: str, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {problem}")
