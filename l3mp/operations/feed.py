"""A memory's new updates as they are written, by any door or process: the history after a sequence number.

Every writer (REST, MCP, the CLI, a daemon in another process) shares only the store, so a feed reads
the store's history: one indexed read of the rows after the last ``seq`` delivered, every ``poll``
seconds while nothing is new, and at once again while a read fills a page. :func:`follow` is the
blocking iterator; :class:`HistoryFeed` runs it in a thread of its own, started and stopped explicitly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from kg_memory import InvalidValue, L3mpError, UpdateStatus
from kg_memory.history import MAX_PAGE
from l3mp.operations.models import HistoryIn, UpdateOut
from l3mp.operations.ops import Operations

logger = logging.getLogger(__name__)

Deliver = Callable[[UpdateOut], None]


def newest_seq(ops: Operations, memory: str) -> int:
    """The ``seq`` of the memory's newest update (0 before any): a feed started from it sees only what comes next."""
    page = ops.history(memory, HistoryIn(order="newest", limit=1))
    return page.updates[0].seq if page.updates else 0


def follow(
    ops: Operations,
    memory: str,
    *,
    after: int,
    stop: threading.Event,
    poll: float = 0.5,
    status: UpdateStatus | None = None,
    created: datetime | None = None,
) -> Iterator[UpdateOut]:
    """Every update of ``memory`` with ``seq > after`` (only those of ``status`` when given), in order,
    each once, until ``stop`` is set. Waits on ``stop`` between reads, so setting it ends the wait at
    once. A read that fails (the store is away for now, the memory was deleted) is logged and retried.

    ``created`` names the memory followed (else the one holding the name at the first read). When it
    is deleted and another memory made under its name, the feed logs it and goes on with that one's
    updates from its first."""
    if poll <= 0:
        raise InvalidValue("feed poll interval", poll, "must be a positive number of seconds")
    seq = after
    failing = ""
    while not stop.is_set():
        try:
            page = ops.history(memory, HistoryIn(cursor=seq, status=status, limit=MAX_PAGE))
            # read after the page: a memory holding the name then held it all along, so the rows are its own
            holding = ops.services.store.get_memory(memory).created
        except L3mpError as exc:
            if str(exc) != failing:  # once per distinct failure, not once per poll
                logger.warning("reading the history of %s: %s", memory, exc)
                failing = str(exc)
            stop.wait(poll)
            continue
        failing = ""
        if created is not None and holding != created:
            logger.warning("%s was deleted and another memory made under its name: following it from its start", memory)
            seq = 0
            created = holding
            continue
        created = holding
        for update in page.updates:
            if stop.is_set():
                return
            seq = update.seq
            yield update
        if page.next_cursor is None:  # a full page may have more behind it: read again at once
            stop.wait(poll)


@dataclass(kw_only=True)
class HistoryFeed:
    """Hands each new update of ``memory`` to ``deliver``, in a thread, from :meth:`start` to :meth:`stop`.

    :meth:`start` reads the newest ``seq`` before it returns, so every update written after it is
    delivered, and none written before. ``deliver`` runs in the feed's thread; an exception from it
    is logged and that update is not delivered again (each update is offered exactly once).
    """

    ops: Operations
    memory: str
    deliver: Deliver
    poll: float = 0.5
    status: UpdateStatus | None = None
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def start(self) -> int:
        """Start following after the memory's newest update now; that update's ``seq``.

        Raises what opening the memory raises (e.g. an unknown memory), with nothing started."""
        if self._thread is not None:
            raise InvalidValue("history feed", self.memory, "is already started")
        created = self.ops.services.store.get_memory(self.memory).created  # the memory followed
        after = newest_seq(self.ops, self.memory)
        self._stop = threading.Event()  # a fresh one: a thread that outlived its stop's join stays stopped
        self._thread = threading.Thread(
            target=self._run, args=(after, created, self._stop), name=f"l3mp-feed-{self.memory}", daemon=True
        )
        self._thread.start()
        return after

    def stop(self, timeout: float | None = None) -> bool:
        """Stop and wait at most ``timeout`` seconds (default: the poll interval and five seconds for a
        read under way) for the thread to end; whether it did."""
        thread, self._thread = self._thread, None
        self._stop.set()
        if thread is None:
            return True
        thread.join(self.poll + 5.0 if timeout is None else timeout)
        return not thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self, after: int, created: datetime, stop: threading.Event) -> None:
        updates = follow(
            self.ops, self.memory, after=after, stop=stop, poll=self.poll, status=self.status, created=created
        )
        for update in updates:
            try:
                self.deliver(update)
            except Exception:  # a subscriber's failure must not end the feed for the next update
                logger.exception("delivering update %s of %s", update.id, self.memory)
