"""Group commit: concurrent fast writes to one memory gathered and applied as one group.

The first writer to arrive leads: it takes every write queued for the memory (up to a group's
size), applies them with :meth:`WorldMemory.apply_group` (one verification pass and one store
transaction) and hands each writer its own outcome. Writes that arrive while it commits queue up and
form the next group, so under load the groups grow by themselves, and a lone writer waits for
nothing. A writer whose own write is done hands the lead to the oldest waiting writer, so no request
commits for others indefinitely.

Outcomes are handed out only after the group's commit returned: a process killed mid-group has
acknowledged nothing it did not commit.

A coroutine writes with :meth:`WriteGroups.submit_async`: it waits on its event loop, not in a thread
of its own, and only a leader commits in a worker thread, so a group of writes from one loop takes one
thread hop instead of one per write. With ``on_loop``, where the store can stage a group, a leader on
the loop does even that work on the loop's thread, and only the COMMIT waits for the disk elsewhere:
passing the interpreter between two busy threads costs more than the work it lets overlap.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from kg_memory import InvalidValue, Update, WorldMemory
from kg_memory.memory import Propose, StagedGroup
from kg_memory.model import normalise_name
from kg_memory.store import StagesGroups

# a write that needs the memory itself (its domain, its verifier), bound when its group commits
Build = Callable[[WorldMemory], Propose]
Outcome = Update | BaseException
# how many times a group's leader on the event loop lets it run first: requests whose bytes have
# arrived are read and queue their writes, so they join this group instead of waiting for the next
_READS_BEFORE_A_GROUP = 3
# a group written on the event loop holds up every other request while it is: at most this many
# writes to one such group (the rest form the next), so that a burst of batches pauses the loop briefly
LOOP_GROUP_MAX = 16


@dataclass(frozen=True, kw_only=True)
class GroupStats:
    """What the groups of one process did: how many were committed, of how many writes, the largest."""

    groups: int
    items: int
    largest: int
    staged: int = 0  # groups written on the event loop's thread, their COMMIT on the committing thread


class _LoopEvent:
    """A thread-safe event for a coroutine: set from any thread, waited for on the coroutine's loop."""

    __slots__ = ("_event", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._event = asyncio.Event()

    def set(self) -> None:
        if _running_loop() is self._loop:  # on the loop's own thread: no wake-up needed
            self._event.set()
            return
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            self._loop.call_soon_threadsafe(self._event.set)

    def clear(self) -> None:
        self._event.clear()

    async def wait(self) -> None:
        await self._event.wait()


class _Ticket:
    """One caller's writes, and the event that wakes it: its outcomes are in, or it leads now."""

    __slots__ = ("created", "key", "lead", "memory", "outcomes", "pending", "woken")

    def __init__(
        self,
        key: str,
        memory: Callable[[], WorldMemory],
        count: int,
        woken: threading.Event | _LoopEvent | None = None,
        created: datetime | None = None,
    ) -> None:
        self.key = key  # the memory's queue
        self.memory = memory  # the memory its groups commit to, looked up by the thread that leads
        # the memory it was made for (its caller's handle), or None: whichever holds the name then
        self.created = created
        self.outcomes: list[Outcome | None] = [None] * count
        self.pending = count
        self.lead = False
        self.woken = woken if woken is not None else threading.Event()


@dataclass(frozen=True, slots=True)
class _Slot:
    ticket: _Ticket
    index: int
    build: Build
    names: tuple[str, ...] = ()  # what its proposer will read: the group reads them in one go


class _Queue:
    """One memory's waiting writes and whether a leader is committing them."""

    def __init__(self) -> None:
        self.slots: deque[_Slot] = deque()
        self.leading = False


class WriteGroups:
    """Gathers the fast writes of one process, per memory, into groups (see the module's doc)."""

    def __init__(self, *, wait_s: float = 0.0, max_items: int = 64, on_loop: bool = False) -> None:
        if max_items < 1:
            raise InvalidValue("group size", max_items, "must be at least 1")
        if wait_s < 0:
            raise InvalidValue("group wait", wait_s, "must not be negative")
        self.wait_s = wait_s
        self.max_items = max_items
        self.on_loop = on_loop
        self._lock = threading.Lock()
        self._queues: dict[str, _Queue] = {}
        self._groups = self._items = self._largest = self._staged = 0
        self._resolved: set[str] = set()  # memories a worker thread looked up once (their domain is loaded)
        self._commits: ThreadPoolExecutor | None = None
        self._closed = False

    def stats(self) -> GroupStats:
        with self._lock:
            return GroupStats(groups=self._groups, items=self._items, largest=self._largest, staged=self._staged)

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
        ticket = _Ticket(memory.name, lambda: memory, len(proposals), created=memory.created)
        queue, leads = self._enqueue(ticket, [bound(p) for p in proposals], names)
        if leads:
            self._lead(queue, ticket)
        while ticket.pending:
            ticket.woken.wait()
            if self._takes_lead(ticket):
                self._lead(queue, ticket)
        return [o for o in ticket.outcomes if o is not None]

    async def submit_async(
        self, memory: str, build: Build, *, resolve: Callable[[str], WorldMemory], names: Sequence[str] = ()
    ) -> Update:
        """:meth:`submit` for a coroutine, to the memory named ``memory``: it waits on its loop, and
        only a group it leads commits in a worker thread. That thread looks the memory up
        (``resolve``, which raises what a missing memory should) and ``build`` makes the write for it,
        so the loop never waits on the store. Cancelled while it waits, its writes are withdrawn unless
        a group already holds them."""
        outcome = (await self.submit_all_async(memory, [build], resolve=resolve, names=[names]))[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def submit_all_async(
        self,
        memory: str,
        builds: Sequence[Build],
        *,
        resolve: Callable[[str], WorldMemory],
        names: Sequence[Sequence[str]] = (),
    ) -> list[Outcome]:
        """:meth:`submit_all` for a coroutine, as :meth:`submit_async` writes."""
        if not builds:
            return []
        key = normalise_name(memory)
        ticket = _Ticket(key, partial(resolve, memory), len(builds), _LoopEvent(asyncio.get_running_loop()))
        queue, leads = self._enqueue(ticket, builds, names)
        try:
            while True:
                if leads and not (self.on_loop and await self._lead_on_loop(queue, ticket)):
                    # shielded: a leader cancelled before a worker thread took the job must still
                    # lead, or nobody would (its own writes are withdrawn; the others' are not)
                    loop = asyncio.get_running_loop()
                    await asyncio.shield(loop.run_in_executor(None, self._lead, queue, ticket))
                if not ticket.pending:
                    break
                assert isinstance(ticket.woken, _LoopEvent)
                await ticket.woken.wait()
                leads = self._takes_lead(ticket)
        except asyncio.CancelledError:
            self._withdraw(queue, ticket)
            raise
        return [o for o in ticket.outcomes if o is not None]

    def _enqueue(self, ticket: _Ticket, builds: Sequence[Build], names: Sequence[Sequence[str]]) -> tuple[_Queue, bool]:
        """Queue the ticket's writes; whether its caller must lead (nobody commits this memory's writes)."""
        read = [tuple(n) for n in names] or [()] * len(builds)
        with self._lock:
            queue = self._queues.setdefault(ticket.key, _Queue())
            queue.slots.extend(_Slot(ticket, i, b, read[i]) for i, b in enumerate(builds))
            leads = not queue.leading
            queue.leading = True
        return queue, leads

    def _takes_lead(self, ticket: _Ticket) -> bool:
        """After a wake-up: whether the lead was handed to this ticket (it takes it)."""
        with self._lock:
            ticket.woken.clear()
            leads, ticket.lead = ticket.lead, False
        return leads

    def _withdraw(self, queue: _Queue, ticket: _Ticket) -> None:
        """A waiter gone: its writes no group has taken are dropped, and a lead handed to it is passed on."""
        with self._lock:
            queue.slots = deque(s for s in queue.slots if s.ticket is not ticket)
            if not ticket.lead:
                return
            ticket.lead = False
            self._pass_lead(ticket.key, queue)

    def _pass_lead(self, key: str, queue: _Queue) -> None:
        """The lead to the oldest waiting writer; with none, the empty queue is forgotten (the caller
        holds the lock)."""
        if queue.slots:
            nxt = queue.slots[0].ticket
            nxt.lead = True
            nxt.woken.set()
            return
        queue.leading = False
        if self._queues.get(key) is queue:
            del self._queues[key]

    def _lead(self, queue: _Queue, ticket: _Ticket) -> None:
        """Commit groups until this caller's writes are done, then pass the lead on (or drop it)."""
        handed = False
        try:
            while True:
                if self.wait_s and len(queue.slots) < self.max_items:
                    time.sleep(self.wait_s)  # more writers may join this group
                with self._lock:
                    group = [queue.slots.popleft() for _ in range(min(self.max_items, len(queue.slots)))]
                self._commit(group)
                with self._lock:
                    if not queue.slots or not ticket.pending:
                        self._pass_lead(ticket.key, queue)
                        handed = True
                        return
        finally:
            if not handed:  # this thread dies leading: no waiter may be left waiting for it
                self._abandon(queue, ticket)

    def _abandon(self, queue: _Queue, ticket: _Ticket) -> None:
        with self._lock:
            queue.slots = deque(s for s in queue.slots if s.ticket is not ticket)
            self._pass_lead(ticket.key, queue)

    async def _lead_on_loop(self, queue: _Queue, ticket: _Ticket) -> bool:
        """Lead on the event loop's thread: each group is proposed, verified and written here, and
        only its COMMIT waits for the disk, on the committing thread; the outcomes are handed out
        here. The interpreter's work of the writes and of the requests then stays on one thread.
        True once the lead is passed on (or dropped); False when the groups must be led from a
        worker thread from here on (a group that cannot be staged is put back first in the queue)."""
        while True:
            try:
                for _ in range(_READS_BEFORE_A_GROUP):  # requests already arrived are read and join the group
                    await asyncio.sleep(0)
                if self.wait_s and len(queue.slots) < self.max_items:
                    await asyncio.sleep(self.wait_s)
            except asyncio.CancelledError:  # the lead goes on: nobody else would take it
                with self._lock:
                    self._pass_lead(ticket.key, queue)
                raise
            with self._lock:
                size = min(self.max_items, LOOP_GROUP_MAX, len(queue.slots))
                group = [queue.slots.popleft() for _ in range(size)]
                if not group:
                    self._pass_lead(ticket.key, queue)
                    return True
            staged = self._stage(group)
            committing = None if staged is None else self._start_commit(staged)
            if staged is None or committing is None:
                with self._lock:
                    queue.slots.extendleft(reversed(group))
                return False
            # a task of its own: the group is handed out even if its leader is cancelled
            finishing = asyncio.ensure_future(self._finish(queue, ticket, group, staged, committing))
            try:
                passed = await asyncio.shield(finishing)
            except asyncio.CancelledError:
                finishing.add_done_callback(partial(self._pass_unless_passed, queue, ticket))
                raise
            if passed:
                return True

    def _stage(self, group: list[_Slot]) -> StagedGroup | None:
        """``group`` staged on this thread, or None where a worker thread must commit it: its memory
        not yet looked up by one (its domain may still have to be loaded), a write meant for a
        memory made again under its name, or a group its store cannot stage now."""
        key = group[0].ticket.key
        if self._closed or key not in self._resolved or any(s.ticket.created is not None for s in group):
            return None
        try:
            memory = group[0].ticket.memory()
            prefetch = {name for slot in group for name in slot.names}
            return memory.stage_group([s.build(memory) for s in group], prefetch=prefetch)
        except Exception:  # decided, and answered, by the worker thread's commit of the group
            return None

    def _start_commit(self, staged: StagedGroup) -> Future[list[Update]] | None:
        """``staged``'s COMMIT handed to the committing thread at once, so that it runs whatever
        becomes of the coroutine waiting for it; None, with nothing written, once closed."""
        try:
            return self._committer().submit(staged.commit)
        except RuntimeError:  # closed (or the interpreter is going down): no thread will commit it
            staged.abandon()
            return None

    async def _finish(
        self,
        queue: _Queue,
        ticket: _Ticket,
        group: list[_Slot],
        staged: StagedGroup,
        committing: Future[list[Update]],
    ) -> bool:
        """The outcomes of a staged group handed out once its COMMIT is done; whether the lead was
        passed on then (the leader's writes are done, or nobody waits)."""
        try:
            # shielded: cancelling this wait must not cancel the COMMIT before it starts
            stored = await asyncio.shield(asyncio.wrap_future(committing))
            outcomes = staged.outcomes(stored)
        except Exception as exc:  # the group failed whole: every writer in it hears why
            outcomes = [exc] * len(group)
        with self._lock:
            self._staged += 1
        self._hand_out(group, outcomes)
        with self._lock:
            if not queue.slots or not ticket.pending:
                self._pass_lead(ticket.key, queue)
                return True
        return False

    def _pass_unless_passed(self, queue: _Queue, ticket: _Ticket, finished: asyncio.Future[bool]) -> None:
        """A leader cancelled while its group committed: once the group is handed out, the lead goes
        on (unless handing it out passed it already)."""
        if finished.cancelled() or finished.exception() is not None or not finished.result():
            with self._lock:
                self._pass_lead(ticket.key, queue)

    def _committer(self) -> ThreadPoolExecutor:
        """The thread that runs staged groups' COMMITs: one of its own, as a shared pool's threads
        may all be waiting for the write lock that the staged group holds."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the write groups are closed")
            if self._commits is None:
                self._commits = ThreadPoolExecutor(max_workers=1, thread_name_prefix="l3mp-commit")
            return self._commits

    def close(self) -> None:
        """No more groups staged; the committing thread lets go once the COMMITs handed to it are done."""
        with self._lock:
            self._closed = True
            commits, self._commits = self._commits, None
        if commits is not None:
            commits.shutdown(wait=True)

    def _commit(self, group: list[_Slot]) -> None:
        """Commit ``group`` to the memory holding the name now; writes made for another memory of the
        name (a handle held while it was deleted and made again) are committed to theirs, which then
        refuses them, or with the writes of a handle of the memory holding it."""
        # a write that names the memory, looked up now, decides which memory that is
        memory_of = next((s.ticket.memory for s in group if s.ticket.created is None), group[0].ticket.memory)
        try:
            memory = memory_of()
        except Exception as exc:  # the group failed whole: every writer in it hears why
            self._hand_out(group, [exc] * len(group))
            return
        except BaseException as exc:  # the process is stopping: tell the writers, then stop too
            self._hand_out(group, [exc] * len(group))
            raise
        if isinstance(memory.store, StagesGroups):  # elsewhere every group goes to a worker thread
            with self._lock:
                self._resolved.add(group[0].ticket.key)
        mine = [s for s in group if s.ticket.created in (None, memory.created)]
        others = [s for s in group if s.ticket.created not in (None, memory.created)]
        self._commit_to(memory, mine)
        if others:
            self._commit(others)

    def _commit_to(self, memory: WorldMemory, group: list[_Slot]) -> None:
        try:
            prefetch = {name for slot in group for name in slot.names}
            outcomes: list[Outcome] = list(memory.apply_group([s.build(memory) for s in group], prefetch=prefetch))
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


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def bound(propose: Propose) -> Build:
    """A write already made for its memory, as a :data:`Build`."""
    return lambda _memory: propose
