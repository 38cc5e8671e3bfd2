"""``~/updates``: every update applied to one memory, whichever door or process wrote it (``l3mp_msgs/msg/Update``).

The feed follows the store's history (:class:`~l3mp.operations.feed.HistoryFeed`) from the memory's
newest update at :meth:`UpdatesFeed.start`, in order, each once. Only applied updates are published:
a subscriber follows the memory's state, which neither a rejected update nor a noop (what it said was
already so) changed; both stay in the history, for ``l3mp history`` and the dashboard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from kg_memory import UpdateStatus
from l3mp.operations import Operations
from l3mp.operations.feed import HistoryFeed
from l3mp.operations.models import UpdateOut
from l3mp.ros.l3mp_services import update_fields
from l3mp.ros.spec import Publisher, TopicSpec
from l3mp.ros.types import Interfaces

UPDATE = "l3mp_msgs/msg/Update"
UPDATES = TopicSpec(name="~/updates", type_name=UPDATE)


@dataclass(kw_only=True)
class UpdatesFeed:
    """Publishes ``memory``'s applied updates on :data:`UPDATES` from :meth:`start` to :meth:`stop`,
    reading the store every ``poll`` seconds while nothing is new."""

    ops: Operations
    memory: str
    interfaces: Interfaces
    publisher: Publisher
    poll: float = 0.5
    topic: TopicSpec = UPDATES
    _feed: HistoryFeed = field(init=False)

    def __post_init__(self) -> None:
        self._feed = HistoryFeed(
            ops=self.ops, memory=self.memory, deliver=self._publish, poll=self.poll, status=UpdateStatus.APPLIED
        )

    def start(self) -> int:
        """Start after the memory's newest update now (its ``seq``, returned); raises for an unknown memory."""
        return self._feed.start()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop; whether the feed's thread ended within ``timeout`` seconds (default: a poll and a read)."""
        return self._feed.stop(timeout)

    @property
    def running(self) -> bool:
        return self._feed.running

    def _publish(self, update: UpdateOut) -> None:
        self.publisher.publish(self.topic.name, update_message(self.interfaces, update))


def update_message(interfaces: Interfaces, update: UpdateOut) -> object:
    """The ``l3mp_msgs/msg/Update`` of a recorded update."""
    return interfaces.new(
        UPDATE,
        id=update.id,
        memory=update.memory,
        seq=update.seq,
        stamp=stamp(interfaces, update.time),
        source=update.source,
        input=update.input,
        **update_fields(update),
    )


def stamp(interfaces: Interfaces, time: datetime) -> object:
    """A ``builtin_interfaces/msg/Time`` to the microsecond (exact: no float on the way); naive times are UTC."""
    since = (time if time.tzinfo else time.replace(tzinfo=UTC)) - _EPOCH
    seconds = since.days * 86_400 + since.seconds
    return interfaces.new("builtin_interfaces/msg/Time", sec=seconds, nanosec=since.microseconds * 1_000)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
