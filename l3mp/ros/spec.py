"""What the ROS 2 node serves, declared apart from how: services and topics by name and type.

The parts of the door (PlanSys2's problem expert and planner, l3mp's own services) declare what they
serve as :class:`ServiceSpec` and publish through a :class:`Publisher`; the node (``l3mp.ros.node``)
puts them on Zenoh in rmw_zenoh's format. So each part is tested by calling its handlers with
messages, and the wire by its own tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

Handler = Callable[[Any], Any]  # a request message -> its response message


@dataclass(frozen=True, kw_only=True)
class ServiceSpec:
    """A service: ``name`` relative to the node's namespace unless it starts with ``/`` or ``~/``.

    ``handle`` may block (it runs off the session's threads); ``slow`` ones (planning) run in a pool
    of their own, so that they never hold up the quick ones.
    """

    name: str
    type_name: str  # e.g. plansys2_msgs/srv/AffectNode
    handle: Handler
    slow: bool = False


@dataclass(frozen=True, kw_only=True)
class TopicSpec:
    """A topic the node publishes on; ``latched`` (transient local) keeps the last message for late joiners."""

    name: str
    type_name: str  # e.g. std_msgs/msg/Empty
    latched: bool = False


class Publisher(Protocol):
    def publish(self, topic: str, message: Any) -> None:
        """Send ``message`` on ``topic`` (one of the declared :class:`TopicSpec` names)."""
        ...
