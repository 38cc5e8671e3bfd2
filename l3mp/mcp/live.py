"""Resource updates: a subscribed memory's state and history resources, notified when it changes.

Every writer (REST, MCP, the CLI, a daemon in another process) shares only the store, so the change
feed is the store's history: its newest sequence number, and which memory holds the name (one deleted
and made again starts its numbers over), every ``poll`` seconds, in a worker thread. One poller per
subscribed memory, started by its first subscriber and stopped with its last (or with the server). Each
change, its deletion included, is published on the subscription bus (2026-07-28 ``subscriptions/listen``)
and sent to the handshake era's ``resources/subscribe`` sessions.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio
import mcp.types as types
from anyio import to_thread
from anyio.abc import TaskGroup
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated

from kg_memory import L3mpError, UnknownMemory
from l3mp.operations import Operations
from l3mp.operations.feed import newest_seq

logger = logging.getLogger(__name__)

_URI = re.compile(r"^l3mp://memories/(?P<name>[^/]+)/(?:state|history)$")


def memory_uris(name: str) -> tuple[str, str]:
    return f"l3mp://memories/{name}/state", f"l3mp://memories/{name}/history"


def memory_of(uri: str) -> str | None:
    """The memory a state or history resource is of (None for any other URI)."""
    found = _URI.match(uri)
    return found.group("name") if found else None


Mark = tuple[datetime, int] | None  # which memory holds the name (its creation time) and its newest seq


def mark_of(ops: Operations, memory: str) -> Mark:
    """What a subscriber's resources show of ``memory``: the memory that holds the name now and its
    newest update; None while none does. A memory deleted and made again under the name restarts its
    sequence numbers, so its creation time tells it apart; the seq is taken only when the same memory
    held the name before and after it was read."""
    try:
        while True:
            created = ops.get_memory(memory).created
            seq = newest_seq(ops, memory)
            if ops.get_memory(memory).created == created:
                return created, seq
    except UnknownMemory:
        return None


@dataclass
class _Watch:
    subscribers: int
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class Live:
    """The pollers of the subscribed memories and the handshake era's subscribed sessions."""

    def __init__(
        self, ops: Callable[[], Operations], bus: InMemorySubscriptionBus, *, poll: Callable[[], float]
    ) -> None:
        self._ops = ops
        self.bus = bus
        self.poll = poll
        self._watches: dict[str, _Watch] = {}
        self._sessions: dict[str, dict[int, ServerSession]] = {}  # uri -> connection id -> session
        self._tasks: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While the server runs: the pollers live in this task group and end with it."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            try:
                yield
            finally:
                self._tasks = None
                self._watches.clear()
                tasks.cancel_scope.cancel()

    async def watch(self, memory: str) -> bool:
        """One more subscriber of ``memory``; its first starts the poller (from the newest update now,
        read before this returns, so that any change after the subscription is seen). False when it is
        not watched: an unknown memory's subscription stands and never fires."""
        if (known := self._watches.get(memory)) is not None:
            known.subscribers += 1
            return True
        try:
            mark = await to_thread.run_sync(mark_of, self._ops(), memory)
        except L3mpError as exc:
            logger.debug("not watching %s: %s", memory, exc)
            return False
        if mark is None:
            logger.debug("not watching %s: no memory of that name", memory)
            return False
        if (known := self._watches.get(memory)) is not None:  # another subscriber came first
            known.subscribers += 1
            return True
        if self._tasks is None:
            return False
        watch = _Watch(subscribers=1)
        self._watches[memory] = watch
        self._tasks.start_soon(self._follow, memory, mark, watch.scope)
        return True

    def unwatch(self, memory: str) -> None:
        watch = self._watches.get(memory)
        if watch is None:
            return
        watch.subscribers -= 1
        if watch.subscribers <= 0:
            del self._watches[memory]
            watch.scope.cancel()

    async def _follow(self, memory: str, mark: Mark, scope: anyio.CancelScope) -> None:
        """Publish each change of ``memory``'s mark: a new update, its deletion, a memory made again."""
        with scope:
            while True:
                await anyio.sleep(self.poll())
                try:
                    now = await to_thread.run_sync(mark_of, self._ops(), memory)
                except L3mpError as exc:  # the store is away for now
                    logger.debug("watching %s: %s", memory, exc)
                    continue
                if now != mark:
                    mark = now
                    await self.publish(memory)

    async def publish(self, memory: str) -> None:
        """Tell every subscriber of ``memory``'s resources that they changed."""
        for uri in memory_uris(memory):
            await self.bus.publish(ResourceUpdated(uri=uri))
            for key, session in list(self._sessions.get(uri, {}).items()):
                try:
                    await session.send_resource_updated(uri)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    self._drop(uri, key)

    # -- subscriptions ------------------------------------------------------------------------

    async def on_subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        """Handshake era ``resources/subscribe``: remember the session, watch the memory."""
        uri = str(params.uri)
        sessions = self._sessions.setdefault(uri, {})
        key = _connection_id(ctx.session)
        if (memory := memory_of(uri)) is not None and key not in sessions and await self.watch(memory):
            sessions[key] = ctx.session
        return types.EmptyResult()

    async def on_unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        self._drop(str(params.uri), _connection_id(ctx.session))
        return types.EmptyResult()

    def _drop(self, uri: str, key: int) -> None:
        if self._sessions.get(uri, {}).pop(key, None) is not None and (memory := memory_of(uri)) is not None:
            self.unwatch(memory)

    async def middleware(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        """2026-07-28 ``subscriptions/listen``: its memories are watched while the stream is open."""
        if ctx.method != "subscriptions/listen":
            return await call_next(ctx)
        memories = [m for uri in _listened(ctx.params) if (m := memory_of(uri)) is not None]
        memories = [m for m in memories if await self.watch(m)]
        try:
            return await call_next(ctx)
        finally:
            for memory in memories:
                self.unwatch(memory)


def _listened(params: Any) -> list[str]:
    """The resources a listen request names; none for a malformed request (the SDK refuses it)."""
    notifications = params.get("notifications") if isinstance(params, Mapping) else None
    uris = notifications.get("resourceSubscriptions") if isinstance(notifications, Mapping) else None
    return [u for u in uris if isinstance(u, str)] if isinstance(uris, list) else []


def _connection_id(session: ServerSession) -> int:
    """One key per connection: the SDK builds a session object per request, over one connection."""
    return id(getattr(session, "_connection", session))
