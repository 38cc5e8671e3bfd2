"""Groups led on the event loop (``group_commit_on_loop``): proposed, verified and written on the
loop's thread, only their COMMIT on the committing thread; a group that would wait for the write
lock goes to a worker thread whole; a failed COMMIT is every writer's answer and writes nothing; a
leader cancelled while its group commits leaves no writer waiting; a group on the loop is bounded."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_memory import GraphStore, StoreUnavailable, Update, WorldMemory
from kg_memory.memory import StagedGroup
from l3mp.operations import Operations, Services
from l3mp.operations.group import LOOP_GROUP_MAX
from l3mp.operations.models import ObservationsIn, UpdateOut
from l3mp.settings import Settings
from l3mp.wiring import open_store
from tests.l3mp.test_group_commit_async import until
from tests.l3mp.test_group_commit_ops import BOUND, CLIENTS, NAME, observing, operations, replayed


@pytest.fixture
def on_loop(tmp_path: Path) -> Iterator[Operations]:
    yield from operations(tmp_path, group_commit_on_loop=True)


def _everyone(ops: Operations, steps: int, first_step: int = 0, clients: range = range(CLIENTS)) -> list[UpdateOut]:
    """Each client's observations from ``first_step`` on, all clients at once (each one changes its room)."""

    async def client(c: int) -> list[UpdateOut]:
        return [await ops.observe_async(NAME, observing(c, step)) for step in range(first_step, first_step + steps)]

    async def all_clients() -> list[list[UpdateOut]]:
        return await asyncio.gather(*(client(c) for c in clients))

    return [a for answered in asyncio.run(all_clients()) for a in answered]


def _threads_of_staging(monkeypatch: pytest.MonkeyPatch) -> tuple[set[str], set[str]]:
    """The names of the threads that staged groups, and of those that committed them."""
    staging: set[str] = set()
    committing: set[str] = set()
    stage, commit = WorldMemory.stage_group, StagedGroup.commit

    def staged(self: WorldMemory, *args: Any, **kwargs: Any) -> StagedGroup | None:
        staging.add(threading.current_thread().name)
        return stage(self, *args, **kwargs)

    def committed(self: StagedGroup) -> list[Update]:
        committing.add(threading.current_thread().name)
        return commit(self)

    monkeypatch.setattr(WorldMemory, "stage_group", staged)
    monkeypatch.setattr(StagedGroup, "commit", committed)
    return staging, committing


def test_groups_are_written_on_the_loop_and_committed_on_the_committing_thread(
    on_loop: Operations, monkeypatch: pytest.MonkeyPatch
) -> None:
    staging, committing = _threads_of_staging(monkeypatch)
    steps, before = 5, on_loop.memory(NAME).version
    answers = _everyone(on_loop, steps)
    assert {a.status for a in answers} == {"applied"}
    assert sorted(a.version for a in answers) == list(range(before + 1, before + 1 + CLIENTS * steps))
    memory = on_loop.memory(NAME)
    assert replayed(memory.history()) == {str(f) for f in memory.state().facts}
    stats = on_loop.services.groups.stats()
    assert stats.items == CLIENTS * steps
    assert 0 < stats.staged < stats.groups  # the first group looked the memory up on a worker thread
    assert staging == {threading.main_thread().name}  # asyncio.run's loop runs on this thread
    assert {name.split("_")[0] for name in committing} == {"l3mp-commit"}


def test_with_the_setting_off_no_group_is_staged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    staging, _ = _threads_of_staging(monkeypatch)
    for ops in operations(tmp_path, group_commit_on_loop=False):
        answers = _everyone(ops, 2)
        assert {a.status for a in answers} == {"applied"}
        assert ops.services.groups.stats().staged == 0
    assert not staging


def test_a_group_that_would_wait_for_the_write_lock_is_committed_by_a_worker_thread(on_loop: Operations) -> None:
    _everyone(on_loop, 1)  # the memory looked up: from now on its groups are led on the loop
    staged_before = on_loop.services.groups.stats().staged
    other = sqlite3.connect(on_loop.services.settings.sqlite_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's writer, say

    async def scenario() -> UpdateOut:
        write = asyncio.create_task(on_loop.observe_async(NAME, observing(0, 1)))
        await asyncio.sleep(0.2)
        assert not write.done()  # waiting for the lock, on a worker thread: the loop runs on
        other.execute("ROLLBACK")
        return await asyncio.wait_for(write, BOUND)

    try:
        answer = asyncio.run(scenario())
    finally:
        other.close()
    assert answer.status == "applied"
    assert on_loop.services.groups.stats().staged == staged_before
    answers = _everyone(on_loop, 1, first_step=1, clients=range(1, CLIENTS))  # led on the loop again
    assert {a.status for a in answers} == {"applied"}
    assert on_loop.services.groups.stats().staged > staged_before


def test_a_failed_commit_is_each_writer_s_answer_and_writes_nothing(
    on_loop: Operations, monkeypatch: pytest.MonkeyPatch
) -> None:
    _everyone(on_loop, 1)
    memory = on_loop.memory(NAME)
    version, facts, history = memory.version, memory.facts(), memory.history()

    def failing(self: StagedGroup) -> list[Update]:
        self.abandon()  # as a COMMIT the disk refused: rolled back
        raise StoreUnavailable("sqlite", "commit", "disk I/O error")

    monkeypatch.setattr(StagedGroup, "commit", failing)

    async def two() -> list[Any]:
        return await asyncio.gather(
            *(on_loop.observe_async(NAME, observing(c, 1)) for c in range(2)), return_exceptions=True
        )

    answers = asyncio.run(two())
    assert all(isinstance(a, StoreUnavailable) for a in answers), answers
    assert (memory.version, memory.facts(), memory.history()) == (version, facts, history)
    monkeypatch.undo()
    assert {a.status for a in _everyone(on_loop, 1, first_step=1)} == {"applied"}


def test_a_leader_cancelled_while_its_group_commits_leaves_nobody_waiting(
    on_loop: Operations, monkeypatch: pytest.MonkeyPatch
) -> None:
    _everyone(on_loop, 1)
    inside, release = threading.Event(), threading.Event()
    commit = StagedGroup.commit

    def held(self: StagedGroup) -> list[Update]:
        if not inside.is_set():
            inside.set()
            assert release.wait(BOUND)
        return commit(self)

    monkeypatch.setattr(StagedGroup, "commit", held)
    groups = on_loop.services.groups
    before = on_loop.memory(NAME).version

    async def scenario() -> tuple[list[UpdateOut], list[UpdateOut]]:
        leader = asyncio.create_task(on_loop.observe_async(NAME, observing(0, 1)))
        await until(inside.is_set)  # the leader's group is committing
        queued = [asyncio.create_task(on_loop.observe_async(NAME, observing(c, 1))) for c in (1, 2)]
        await until(lambda: groups.waiting(NAME) == 2)
        leader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leader
        release.set()
        answered = await asyncio.wait_for(asyncio.gather(*queued), BOUND)
        later = await asyncio.wait_for(on_loop.observe_async(NAME, observing(3, 1)), BOUND)
        return list(answered), [later]

    queued, later = asyncio.run(scenario())
    assert {a.status for a in [*queued, *later]} == {"applied"}
    memory = on_loop.memory(NAME)
    # the cancelled leader's write was in its group already: it was committed all the same
    assert memory.version == before + 4
    assert replayed(memory.history()) == {str(f) for f in memory.state().facts}


def test_a_group_written_on_the_loop_holds_a_bounded_number_of_writes(
    on_loop: Operations, monkeypatch: pytest.MonkeyPatch
) -> None:
    _everyone(on_loop, 1)
    sizes: list[int] = []
    stage = WorldMemory.stage_group

    def staged(self: WorldMemory, proposals: Any, **kwargs: Any) -> StagedGroup | None:
        sizes.append(len(proposals))
        return stage(self, proposals, **kwargs)

    monkeypatch.setattr(WorldMemory, "stage_group", staged)
    batch = ObservationsIn(observations=[observing(c, 1) for c in range(CLIENTS)])
    answers = asyncio.run(on_loop.observe_batch_async(NAME, batch))
    assert [a.status if isinstance(a, UpdateOut) else a for a in answers] == ["applied"] * CLIENTS
    assert sum(sizes) == CLIENTS and max(sizes) == LOOP_GROUP_MAX  # twenty writes queued at once


def test_a_leader_cancelled_before_its_group_is_taken_leaves_nobody_waiting(on_loop: Operations) -> None:
    _everyone(on_loop, 1)

    async def scenario() -> UpdateOut:
        leader = asyncio.create_task(on_loop.observe_async(NAME, observing(0, 1)))
        waiter = asyncio.create_task(on_loop.observe_async(NAME, observing(1, 1)))
        await asyncio.sleep(0)  # the leader lets requests already arrived join its group; the other waits
        leader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leader
        return await asyncio.wait_for(waiter, BOUND)

    assert asyncio.run(scenario()).status == "applied"
    assert on_loop.services.groups.waiting(NAME) == 0


def test_a_commit_handed_to_the_committing_thread_runs_when_the_loop_goes_away(
    on_loop: Operations, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's tasks are cancelled (``asyncio.run`` returns) while a staged group waits for the
    committing thread: the COMMIT still runs, so the write lock and the store are let go of."""
    _everyone(on_loop, 1)
    groups = on_loop.services.groups
    before = on_loop.memory(NAME).version
    busy, staged = threading.Event(), threading.Event()
    stage = WorldMemory.stage_group

    def staging(self: WorldMemory, *args: Any, **kwargs: Any) -> StagedGroup | None:
        found = stage(self, *args, **kwargs)
        staged.set()
        return found

    monkeypatch.setattr(WorldMemory, "stage_group", staging)

    async def leave_while_committing() -> None:
        groups._committer().submit(busy.wait, BOUND)  # the committing thread is busy for now
        write = asyncio.create_task(on_loop.observe_async(NAME, observing(0, 1)))
        await until(staged.is_set)
        await asyncio.sleep(0)  # its COMMIT handed over, waiting behind the busy thread
        assert not write.done()
        # returning cancels the write's coroutines; then the committing thread gets to its COMMIT

    asyncio.run(leave_while_committing())
    busy.set()

    async def settled() -> None:
        await until(lambda: on_loop.memory(NAME).version == before + 1)

    asyncio.run(settled())
    answers = _everyone(on_loop, 1, first_step=1, clients=range(1, CLIENTS))
    assert {a.status for a in answers} == {"applied"}
    assert groups.stats().staged >= 2  # the write lock was let go of: the next groups were staged


def test_a_store_that_cannot_stage_leaves_every_group_to_a_worker_thread(
    neo4j_store: GraphStore, tmp_path: Path
) -> None:
    settings = Settings(sqlite_path=tmp_path / "unused.db", retriever="full", group_commit_on_loop=True)
    assert not Services(settings=settings, store=neo4j_store).groups.on_loop
    sqlite = open_store(settings)
    try:
        assert Services(settings=settings, store=sqlite).groups.on_loop
    finally:
        sqlite.close()
