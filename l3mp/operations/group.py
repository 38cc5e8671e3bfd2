"""Group commit: concurrent fast writes to one memory gathered and applied as one group.

The first writer to arrive leads: it takes every write queued for the memory (up to a group's
size), applies them with :meth:`WorldMemory.apply_group` (one verification pass and one store
transaction) and hands each writer its own outcome. Writes that arrive while it commits queue up and
form the next group, so under load the groups grow by themselves, and a lone writer waits for
nothing. A writer whose own write is done hands the lead to the oldest waiting writer, so no request
commits for others indefinitely.

Outcomes are handed out only after the group's commit returned: a process killed mid-group has
acknowledged nothing it did not commit.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kg_memory import InvalidValue, Update, WorldMemory
from kg_memory.memory import Proposal
from kg_memory.verifier import StateView

# a write, computed against the state its group shows it (WorldMemory.apply_group's proposer)
Propose = Callable[[StateView], Proposal]
Outcome = Update | BaseException


@dataclass(frozen=True, kw_only=True)
class GroupStats:
    """What the groups of one process did: how many were committed, of how many writes, the largest."""

    groups: int
    items: int
    largest: int


class _Ticket:
    """One caller's writes, and the event that wakes it: its outcomes are in, or it leads now."""

    __slots__ = ("lead", "memory", "outcomes", "pending", "woken")

    def __init__(self, memory: WorldMemory, count: int) -> None:
        self.memory = memory
        self.outcomes: list[Outcome | None] = [None] * count
        self.pending = count
        self.lead = False
        self.woken = threading.Event()


@dataclass(frozen=True, slots=True)
class _Slot:
    ticket: _Ticket
    index: int
    propose: Propose
    names: tuple[str, ...] = ()  # what its proposer will read: the group reads them in one go


class _Queue:
    """One memory's waiting writes and whether a leader is committing them."""

    def __init__(self) -> None:
        self.slots: deque[_Slot] = deque()
        self.leading = False


class WriteGroups:
    """Gathers the fast writes of one process, per memory, into groups (see the module's doc)."""

    def __init__(self, *, wait_s: float = 0.0, max_items: int = 64) -> None:
        if max_items < 1:
            raise InvalidValue("group size", max_items, "must be at least 1")
        if wait_s < 0:
            raise InvalidValue("group wait", wait_s, "must not be negative")
        self.wait_s = wait_s
        self.max_items = max_items
        self._lock = threading.Lock()
        self._queues: dict[str, _Queue] = {}
        self._groups = self._items = self._largest = 0

    def stats(self) -> GroupStats:
        with self._lock:
            return GroupStats(groups=self._groups, items=self._items, largest=self._largest)

    def waiting(self, memory: str) -> int:
        """How many writes to ``memory`` wait for a group (those being committed not included)."""
        with self._lock:
            queue = self._queues.get(memory)
            return len(queue.slots) if queue is not None else 0

    def submit(self, memory: WorldMemory, propose: Propose, *, names: Sequence[str] = ()) -> Update:
        """One write's update; raises the exception that was its outcome. ``names``: the entities
        its proposer will read, fetched for the whole group at once (a hint; any may be missing)."""
        outcome = self.submit_all(memory, [propose], names=[names])[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def submit_all(
        self, memory: WorldMemory, proposals: Sequence[Propose], *, names: Sequence[Sequence[str]] = ()
    ) -> list[Outcome]:
        """One outcome per write, in order; writes from other callers may share their groups.
        ``names``, if given, holds each write's names as for :meth:`submit`."""
        if not proposals:
            return []
        ticket = _Ticket(memory, len(proposals))
        read = [tuple(n) for n in names] or [()] * len(proposals)
        with self._lock:
            queue = self._queues.setdefault(memory.name, _Queue())
            queue.slots.extend(_Slot(ticket, i, p, read[i]) for i, p in enumerate(proposals))
            leads = not queue.leading
            queue.leading = True
        if leads:
            self._lead(queue, ticket)
        while ticket.pending:
            ticket.woken.wait()
            with self._lock:
                ticket.woken.clear()
                leads, ticket.lead = ticket.lead, False
            if leads:
                self._lead(queue, ticket)
        return [o for o in ticket.outcomes if o is not None]

    def _lead(self, queue: _Queue, ticket: _Ticket) -> None:
        """Commit groups until this caller's writes are done, then pass the lead on (or drop it)."""
        handed = False
        try:
            while True:
                if self.wait_s and len(queue.slots) < self.max_items:
                    time.sleep(self.wait_s)  # more writers may join this group
                with self._lock:
                    group = [queue.slots.popleft() for _ in range(min(self.max_items, len(queue.slots)))]
                self._commit(ticket.memory, group)
                with self._lock:
                    if not queue.slots:
                        queue.leading = False
                        handed = True
                        return
                    if not ticket.pending:
                        nxt = queue.slots[0].ticket
                        nxt.lead = True
                        nxt.woken.set()
                        handed = True
                        return
        finally:
            if not handed:  # this thread dies leading: no waiter may be left waiting for it
                self._abandon(queue, ticket)

    def _abandon(self, queue: _Queue, ticket: _Ticket) -> None:
        with self._lock:
            queue.slots = deque(s for s in queue.slots if s.ticket is not ticket)
            if queue.slots:
                nxt = queue.slots[0].ticket
                nxt.lead = True
                nxt.woken.set()
            else:
                queue.leading = False

    def _commit(self, memory: WorldMemory, group: list[_Slot]) -> None:
        try:
            prefetch = {name for slot in group for name in slot.names}
            outcomes: list[Outcome] = list(memory.apply_group([s.propose for s in group], prefetch=prefetch))
        except Exception as exc:  # the group failed whole: every writer in it hears why
            outcomes = [exc] * len(group)
        except BaseException as exc:  # the process is stopping: tell the writers, then stop too
            self._hand_out(group, [exc] * len(group))
            raise
        self._hand_out(group, outcomes)

    def _hand_out(self, group: list[_Slot], outcomes: list[Outcome]) -> None:
        if len(outcomes) != len(group):
            broken = RuntimeError(f"a group of {len(group)} writes gave {len(outcomes)} outcomes")
            outcomes = [broken] * len(group)
        with self._lock:
            self._groups += 1
            self._items += len(group)
            self._largest = max(self._largest, len(group))
            for slot, outcome in zip(group, outcomes, strict=True):
                slot.ticket.outcomes[slot.index] = outcome
                slot.ticket.pending -= 1
                if not slot.ticket.pending:
                    slot.ticket.woken.set()
