"""Group commit for coroutines (``WriteGroups.submit_async``): writes that wait on an event loop share
groups with each other and with writes from threads, a missing memory is an error, and a writer
cancelled while it waits takes its write and nothing else with it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from kg_memory import UnknownMemory, VersionConflict
from l3mp.operations import Operations
from l3mp.operations.models import DeltaIn, UpdateOut
from tests.l3mp.test_group_commit_ops import (
    BOUND,
    CLIENTS,
    NAME,
    held_commits,
    in_threads_started,
    observing,
    operations,
    replayed,
)


@pytest.fixture
def grouped(tmp_path: Path) -> Iterator[Operations]:
    yield from operations(tmp_path)


async def until(condition: Any) -> None:
    async with asyncio.timeout(BOUND):
        while not condition():
            await asyncio.sleep(0.005)


def test_concurrent_coroutines_are_each_recorded_once_in_shared_groups(grouped: Operations) -> None:
    steps, before = 5, grouped.memory(NAME).version

    async def client(c: int) -> list[UpdateOut]:
        return [await grouped.observe_async(NAME, observing(c, step)) for step in range(steps)]

    async def everyone() -> list[list[UpdateOut]]:
        return await asyncio.gather(*(client(c) for c in range(CLIENTS)))

    answers = [a for answered in asyncio.run(everyone()) for a in answered]
    assert {a.status for a in answers} == {"applied"}
    assert sorted(a.version for a in answers) == list(range(before + 1, before + 1 + CLIENTS * steps))
    memory = grouped.memory(NAME)
    assert replayed(memory.history()) == {str(f) for f in memory.state().facts}
    stats = grouped.services.groups.stats()
    assert stats.items == CLIENTS * steps
    assert stats.groups < stats.items  # writes arriving together on one loop were committed together


def test_a_coroutine_handed_the_lead_commits_the_queue_after_a_thread(grouped: Operations) -> None:
    """A thread leads and is held; a coroutine and another thread queue behind it. When the first
    thread's write is done, the coroutine is the oldest waiter: it leads, and the second thread is answered."""
    inside, release = held_commits(grouped)
    groups = grouped.services.groups

    async def scenario() -> tuple[list[Any], UpdateOut, list[Any]]:
        first = in_threads_started(1, lambda _: grouped.observe(NAME, observing(0, 0)))
        await until(inside.is_set)
        waiting = asyncio.create_task(grouped.observe_async(NAME, observing(1, 0)))
        await until(lambda: groups.waiting(NAME) == 1)
        second = in_threads_started(1, lambda _: grouped.observe(NAME, observing(2, 0)))
        await until(lambda: groups.waiting(NAME) == 2)
        release.set()
        answer = await asyncio.wait_for(waiting, BOUND)
        return await asyncio.to_thread(first), answer, await asyncio.to_thread(second)

    first, answer, second = asyncio.run(scenario())
    assert [first[0].status, answer.status, second[0].status] == ["applied"] * 3
    assert groups.stats().groups == 2  # the thread's own write, then the two that queued behind it


def test_a_missing_memory_is_not_found_and_leaves_no_queue(grouped: Operations) -> None:
    with pytest.raises(UnknownMemory):
        asyncio.run(grouped.observe_async("no_such_memory", observing(0, 0)))
    assert grouped.services.groups.waiting("no_such_memory") == 0
    assert asyncio.run(grouped.observe_async(NAME, observing(0, 0))).status == "applied"


def test_a_cancelled_waiter_withdraws_its_write_and_the_queue_goes_on(grouped: Operations) -> None:
    inside, release = held_commits(grouped)
    groups = grouped.services.groups
    before = grouped.memory(NAME).version

    async def scenario() -> tuple[list[Any], UpdateOut]:
        first = in_threads_started(1, lambda _: grouped.observe(NAME, observing(0, 0)))
        await until(inside.is_set)
        doomed = asyncio.create_task(grouped.observe_async(NAME, observing(1, 0)))
        await until(lambda: groups.waiting(NAME) == 1)
        doomed.cancel()
        with pytest.raises(asyncio.CancelledError):
            await doomed
        assert groups.waiting(NAME) == 0  # withdrawn before any group took it
        release.set()
        later = await asyncio.wait_for(grouped.observe_async(NAME, observing(2, 0)), BOUND)
        return await asyncio.to_thread(first), later

    first, later = asyncio.run(scenario())
    assert (first[0].status, later.status) == ("applied", "applied")
    memory = grouped.memory(NAME)
    assert memory.version == before + 2
    assert "(light_on lamp_c1)" not in {str(f) for f in memory.facts(entity="lamp_c1")}  # never written


def test_deltas_and_observations_from_one_loop_share_groups_and_conflicts_stay_alone(grouped: Operations) -> None:
    version = grouped.memory(NAME).version

    async def writes() -> list[Any]:
        deltas = [
            grouped.apply_delta_async(NAME, DeltaIn(add=[f"(light_on lamp_c{c})"], input=f"lamp {c}"))
            for c in range(5, 10)
        ]
        observations = [grouped.observe_async(NAME, observing(c, 0)) for c in range(5)]
        stale = grouped.apply_delta_async(NAME, DeltaIn(add=["(light_on lamp_c10)"], expected_version=version - 1))
        return await asyncio.gather(*deltas, *observations, stale, return_exceptions=True)

    *answers, conflict = asyncio.run(writes())
    assert [a.status for a in answers] == ["applied"] * 10
    assert isinstance(conflict, VersionConflict)
    memory = grouped.memory(NAME)
    assert memory.version == version + 10
    assert "(light_on lamp_c10)" not in {str(f) for f in memory.facts(entity="lamp_c10")}
    assert grouped.services.groups.stats().groups < 11


def test_a_delta_the_domain_refuses_is_recorded_rejected_and_written_alone(grouped: Operations) -> None:
    version = grouped.memory(NAME).version

    async def writes() -> list[UpdateOut]:
        bad = grouped.apply_delta_async(NAME, DeltaIn(add=["(on mug_c0 mug_c0)"], input="nonsense"))
        good = grouped.apply_delta_async(NAME, DeltaIn(add=["(light_on lamp_c1)"]))
        return list(await asyncio.gather(bad, good))

    bad, good = asyncio.run(writes())
    assert (bad.status, good.status) == ("rejected", "applied") and bad.issues
    assert grouped.memory(NAME).version == version + 1
    recorded = {u.id: u.status.value for u in grouped.memory(NAME).history()}
    assert (recorded[bad.id], recorded[good.id]) == ("rejected", "applied")


def test_a_leader_cancelled_before_a_worker_thread_takes_its_group_leaves_nobody_waiting(
    grouped: Operations,
) -> None:
    """The memory's first group goes to a worker thread; every worker is busy, and the leading
    request is cancelled before one takes the job: the job still runs, and the next writer is answered."""

    async def scenario() -> UpdateOut:
        loop = asyncio.get_running_loop()
        pool = ThreadPoolExecutor(max_workers=1)
        loop.set_default_executor(pool)
        release = threading.Event()
        busy = loop.run_in_executor(None, release.wait, BOUND)  # the only worker thread is taken
        leader = asyncio.create_task(grouped.observe_async(NAME, observing(0, 0)))
        await until(lambda: groups.waiting(NAME) == 1)  # the leader's write, queued for its thread
        waiter = asyncio.create_task(grouped.observe_async(NAME, observing(1, 0)))
        await until(lambda: groups.waiting(NAME) == 2)
        leader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leader
        release.set()
        await busy
        return await asyncio.wait_for(waiter, BOUND)

    groups = grouped.services.groups
    assert asyncio.run(scenario()).status == "applied"
    assert groups.waiting(NAME) == 0
