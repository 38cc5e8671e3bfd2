"""Group commit when the memory is deleted and made again under its name while writes wait: a write
made for the deleted memory (its caller's handle) fails with UnknownMemory and writes nothing, and a
write for the memory made again, queued in the same group, is applied to that one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from kg_memory import Delta, DomainRegistry, Entity, Proposal, UnknownMemory, Update, UpdateSource, WorldMemory
from kg_memory.memory import Propose
from kg_memory.stores import SQLiteStore
from l3mp.operations.group import WriteGroups

BOUND = 30.0  # seconds: a bound for a busy machine, not a target


def _lamp(name: str, *, hold: threading.Event | None = None, inside: threading.Event | None = None) -> Propose:
    def propose(_view: object) -> Proposal:
        if inside is not None and hold is not None:
            inside.set()
            assert hold.wait(BOUND)
        return Proposal(delta=Delta(new_entities=(Entity(name, "light"),)), source=UpdateSource.SENSOR)

    return propose


def _in_thread(work: Callable[[], Update], outcomes: dict[str, object], key: str) -> threading.Thread:
    def run() -> None:
        try:
            outcomes[key] = work()
        except Exception as exc:
            outcomes[key] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.parametrize("stale_first", [True, False])
def test_a_write_for_the_deleted_memory_fails_alone_in_a_group_with_writes_for_the_new_one(
    tmp_path: Path, stale_first: bool
) -> None:
    store = SQLiteStore(tmp_path / "groups.db", DomainRegistry())
    groups = WriteGroups()
    outcomes: dict[str, object] = {}
    try:
        old = WorldMemory.create(store, "home", "example_home")
        inside, hold = threading.Event(), threading.Event()
        leader = _in_thread(lambda: groups.submit(old, _lamp("lamp_a", hold=hold, inside=inside)), outcomes, "a")
        assert inside.wait(BOUND)  # the first group is being drafted on the old memory
        store.delete_memory("home")
        new = WorldMemory.create(store, "home", "example_home")
        order = [("stale", old, "lamp_s"), ("fresh", new, "lamp_f")]
        waiting = []
        for key, handle, lamp in order if stale_first else order[::-1]:
            waiting.append(_in_thread(lambda h=handle, n=lamp: groups.submit(h, _lamp(n)), outcomes, key))
            while groups.waiting("home") < len(waiting):  # queued in this order, behind the held group
                threading.Event().wait(0.01)
        hold.set()
        for thread in [leader, *waiting]:
            thread.join(BOUND)
        assert isinstance(outcomes["a"], UnknownMemory)  # its memory went while it was drafted
        assert isinstance(outcomes["stale"], UnknownMemory)
        fresh = outcomes["fresh"]
        assert isinstance(fresh, Update) and fresh.version == 1
        assert set(new.entities()) == {"robot_1", "lamp_f"}
        assert [u.seq for u in new.history()] == [1, 2]  # its creation, then the fresh write alone
    finally:
        store.close()
