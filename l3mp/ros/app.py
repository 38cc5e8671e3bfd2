"""``l3mp ros``: one memory as a ROS 2 node, its parts put together and run until a signal.

The node serves PlanSys2's problem expert and planner (``problem_expert/*``, ``planner/get_plan``) and
l3mp's own interface (``~/report``, ``~/plan``, ``~/observe``, the ``~/updates`` topic) over the same
operations as every other door, so a write through ROS 2 is verified and recorded like one through REST.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from l3mp.llm import LanguageModel
from l3mp.operations import Operations, Services
from l3mp.ros.config import SessionConfig
from l3mp.ros.l3mp_services import l3mp_services
from l3mp.ros.node import RosNode
from l3mp.ros.planner import planner
from l3mp.ros.problem_expert import problem_expert
from l3mp.ros.types import Interfaces
from l3mp.ros.updates_feed import UpdatesFeed
from l3mp.settings import Settings
from l3mp.wiring import open_store

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class RosDoor:
    """The node, the feed behind ``~/updates`` and the services they share; start, then close."""

    node: RosNode
    feed: UpdatesFeed
    services: Services

    def start(self) -> RosDoor:
        self.node.start()
        self.feed.start()
        return self

    def close(self) -> None:
        self.feed.stop()
        self.node.close()
        self.services.close()

    def run(self, stop: threading.Event) -> None:
        """Serve until ``stop`` is set (the command sets it on SIGINT and SIGTERM), then close."""
        self.start()
        try:
            stop.wait()
        finally:
            self.close()


def ros_door(
    *,
    settings: Settings,
    memory: str,
    name: str = "l3mp",
    namespace: str = "/",
    session: SessionConfig | None = None,
    model: LanguageModel | None = None,
) -> RosDoor:
    """A node named ``name`` for ``memory`` (which must exist), on the session rmw_zenoh's variables say."""
    services = Services(settings=settings, store=open_store(settings), model=model)
    try:
        ops = Operations(services=services)
        known = ops.get_memory(memory).name
        interfaces = Interfaces.load()
        node = RosNode(
            name=name, namespace=namespace, interfaces=interfaces, session=session or SessionConfig.from_env()
        )
        expert = problem_expert(ops, known, interfaces, node)
        node.add(services=expert.services() + planner(ops, known, interfaces), topics=expert.topics())
        node.add(services=l3mp_services(ops, known, interfaces))
        feed = UpdatesFeed(ops=ops, memory=known, interfaces=interfaces, publisher=node, poll=settings.ros_updates_poll)
        node.add(topics=[feed.topic])
    except BaseException:
        services.close()
        raise
    return RosDoor(node=node, feed=feed, services=services)
