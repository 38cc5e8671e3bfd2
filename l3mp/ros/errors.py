"""What the ROS 2 door raises: a type it cannot build or read, a session it cannot open."""

from __future__ import annotations

from kg_memory import L3mpError


class RosError(L3mpError):
    """Something of l3mp's ROS 2 node went wrong."""


class RosTypeError(RosError):
    """A ROS 2 type name, definition or message that does not fit (names the type)."""

    def __init__(self, type_name: str, problem: str) -> None:
        self.type_name = type_name
        super().__init__(f"ROS 2 type {type_name}: {problem}")


class RosSessionError(RosError):
    """The Zenoh session could not be configured or opened (names the setting or endpoint)."""
