"""Helpers shared by the backends: update rows and a few checks."""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any

from kg_memory.errors import InvalidValue, MemoryExists, NotApplicable, UnknownMemory
from kg_memory.model import Delta, Issue, Update, UpdateSource, UpdateStatus

UPDATE_COLUMNS = ("seq", "id", "source", "input", "delta", "status", "issues", "version", "time", "meta")


def attrs_from_text(text: str) -> dict[str, Any]:
    """An entity's stored attributes; most entities have none, and their rows are read by the
    thousand (verification, retrieval), so the empty object is not parsed."""
    return {} if text == "{}" else json.loads(text)


def update_row(update: Update) -> dict[str, Any]:
    """The flat, JSON-text form both backends persist."""
    return {
        "seq": update.seq,
        "id": update.id,
        "source": update.source.value,
        "input": update.input,
        "delta": json.dumps(update.delta.to_json()),
        "status": update.status.value,
        "issues": json.dumps([i.to_json() for i in update.issues]),
        "version": update.version,
        "time": update.time.isoformat(),
        "meta": update.meta_text(),
    }


# A delta this long (a survey of a whole home) takes milliseconds to decode, and the same one comes
# back for every entity last seen in it: such updates are kept decoded, keyed by their whole row.
_LARGE_DELTA = 4_096


def update_from_row(memory: str, row: Mapping[str, Any]) -> Update:
    """An update read back: its fields were validated when it was written, so only decoded."""
    if len(row["delta"]) > _LARGE_DELTA:
        return _large_update(memory, *(row[c] for c in UPDATE_COLUMNS))
    return _decoded(memory, row)


@functools.lru_cache(maxsize=32)
def _large_update(memory: str, *values: Any) -> Update:
    return _decoded(memory, dict(zip(UPDATE_COLUMNS, values, strict=True)))


def _decoded(memory: str, row: Mapping[str, Any]) -> Update:
    return Update.unchecked(
        memory=memory,
        source=UpdateSource(row["source"]),
        delta=Delta.from_stored(json.loads(row["delta"])),
        status=UpdateStatus(row["status"]),
        input=row["input"],
        issues=tuple(Issue.from_json(i) for i in json.loads(row["issues"])),
        version=int(row["version"]),
        seq=int(row["seq"]),
        id=row["id"],
        time=datetime.fromisoformat(row["time"]),
        meta=MappingProxyType(json.loads(row["meta"])),
    )


def check_commit(update: Update) -> None:
    if update.status is not UpdateStatus.APPLIED:
        raise InvalidValue("update to commit", update.id, f"status is {update.status}, commit only applied ones")
    overlap = update.delta.remove & update.delta.add
    if overlap:
        raise NotApplicable(update.memory, f"{sorted(map(str, overlap))} are both removed and added")


def check_record(update: Update) -> None:
    if update.status is UpdateStatus.APPLIED:
        raise InvalidValue("update to record", update.id, "applied updates go through commit")


def check_group(memory: str, updates: Sequence[Update]) -> None:
    """A group for ``commit_group``: updates of ``memory``, each fit for commit or record."""
    for update in updates:
        if update.memory != memory:
            raise InvalidValue("update in a group", update.id, f"it is for memory {update.memory!r}, not {memory!r}")
        if update.status is UpdateStatus.APPLIED:
            check_commit(update)
        else:
            check_record(update)


def check_load(memory: str, updates: Sequence[Update]) -> None:
    """An import's batch: stamped updates of one memory, in consecutive ``seq`` order."""
    for before, after in itertools.pairwise(updates):
        if after.seq != before.seq + 1:
            raise NotApplicable(memory, f"update {after.id} has seq {after.seq}, expected {before.seq + 1}")


def check_created(memory: str, stored: str, created: datetime | None) -> None:
    """Raise :class:`UnknownMemory` when the memory holding the name now (made at ``stored``, as the
    store keeps it) is not the one a writer meant (made at ``created``): that one was deleted."""
    if created is not None and datetime.fromisoformat(stored) != created:
        raise UnknownMemory(memory)


def check_deletable(name: str, *, hidden: bool, importing: bool | None) -> None:
    """Raise unless the memory found (``hidden``: an import is filling it) is the kind
    :meth:`~kg_memory.store.GraphStore.delete_memory` was asked to delete."""
    if importing is None or importing == hidden:
        return
    raise MemoryExists.importing(name) if hidden else MemoryExists.in_use(name)
