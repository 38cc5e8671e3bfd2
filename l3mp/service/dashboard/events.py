"""Server-sent events: a memory's new history rows, as they are written by any process.

The store is the only thing every writer shares (the service, a daemon, the CLI), so the stream polls
it: one indexed read of the rows after the last sequence number sent, and of the memory's record (the
memory may have been deleted), every ``poll`` seconds, in a worker thread so the event loop never
blocks. A comment line every ``heartbeat`` seconds keeps proxies from closing an idle stream and lets
the server notice a client that went away.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import anyio
from anyio import to_thread

from kg_memory import GraphStore, L3mpError, Memory, UnknownMemory, Update
from l3mp.operations.models import UpdateOut

_PAGE = 100  # rows per read; a burst larger than this is sent in pages without waiting


@dataclass(frozen=True, slots=True)
class StreamConfig:
    poll: float = 0.5  # seconds between reads of the store when nothing is new
    heartbeat: float = 15.0  # seconds of silence before a comment line
    retry_ms: int = 2_000  # how long a disconnected browser waits before reconnecting


def event(kind: str, data: object, event_id: int | None = None) -> str:
    """One SSE message; ``data`` as one line of JSON (JSON escapes newlines, so no line can break it)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _rows(store: GraphStore, memory: Memory, since_seq: int) -> list[Update]:
    """The rows of ``memory`` after ``since_seq``; :class:`UnknownMemory` once it is deleted, also when
    another memory holds its name now (whose sequence numbers start over). Checked after the read: a
    memory that holds the name then held it all along, so the rows are its own."""
    rows = store.history(memory.name, since_seq, _PAGE)
    if store.get_memory(memory.name).created != memory.created:
        raise UnknownMemory(memory.name)
    return rows


async def history_stream(
    store: GraphStore,
    memory: Memory,
    since_seq: int,
    disconnected: Callable[[], Awaitable[bool]],
    config: StreamConfig = StreamConfig(),
) -> AsyncIterator[str]:
    """Every update of ``memory`` after ``since_seq`` as an ``update`` event (id = its seq), until the
    client leaves or the memory is deleted."""
    yield f"retry: {config.retry_ms}\n" + event("hello", {"memory": memory.name, "since_seq": since_seq})
    quiet = 0.0
    while not await disconnected():
        try:
            rows = await to_thread.run_sync(_rows, store, memory, since_seq)
        except L3mpError as exc:  # the memory was deleted, or the store went away: say so and end
            yield event("error", {"message": str(exc)})
            return
        for update in rows:
            since_seq = update.seq
            yield event("update", UpdateOut.of(update).model_dump(mode="json"), update.seq)
        if len(rows) == _PAGE:
            continue
        if rows:
            quiet = 0.0
        elif quiet >= config.heartbeat:
            yield ": heartbeat\n\n"
            quiet = 0.0
        await anyio.sleep(config.poll)
        quiet += config.poll
