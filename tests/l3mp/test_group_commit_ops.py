"""Group commit in the operations: concurrent writes to one memory gathered into groups, each keeping
its own verdict, update and answer; with group commit off, the same answers one write at a time."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from experiments.service.loadgen import changing_observation, owned_entities
from kg_memory import Update, UpdateStatus, VersionConflict
from l3mp.examples import survey_json
from l3mp.operations import Operations, Services
from l3mp.operations.models import DeltaIn, EntitiesIn, MemoryIn, ObservationIn, ObservationsIn, UpdateOut
from l3mp.pipelines import SensorUpdater
from l3mp.service import create_app
from l3mp.settings import Settings
from l3mp.wiring import open_store
from perception import Observation

CLIENTS = 20
NAME = "load"
BOUND = 60.0  # seconds: a bound for a very busy machine, never a measured figure


def operations(tmp_path: Path, *, group_commit: bool = True, **settled: Any) -> Iterator[Operations]:
    """Operations on a memory of ``CLIENTS`` clients' rooms; ``settled``: other settings."""
    settings = Settings(sqlite_path=tmp_path / "ops.db", group_commit=group_commit, retriever="full", **settled)
    services = Services(settings=settings, store=open_store(settings))
    ops = Operations(services=services)
    ops.create_memory(MemoryIn(name=NAME, domain="example_home"))
    ops.add_entities(NAME, EntitiesIn.model_validate(survey_json()))
    ops.add_entities(NAME, EntitiesIn.model_validate(owned_entities(CLIENTS)))
    yield ops
    services.close()


@pytest.fixture(params=[True, False], ids=["grouped", "one-by-one"])
def ops(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Operations]:
    yield from operations(tmp_path, group_commit=request.param)


@pytest.fixture
def grouped(tmp_path: Path) -> Iterator[Operations]:
    yield from operations(tmp_path)


def observing(client: int, step: int, **extra: Any) -> ObservationIn:
    return ObservationIn.model_validate({**changing_observation(client, step), **extra})


def in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    """``work(i)`` for each i on its own thread, all started together; each one's result or exception."""
    results: list[Any] = [None] * count
    start = threading.Barrier(count)

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = work(i)
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(BOUND)
    assert not any(t.is_alive() for t in threads), "a writer never got its answer"
    return results


def replayed(history: list[Update]) -> set[str]:
    facts: set[str] = set()
    for update in history:
        if update.status is UpdateStatus.APPLIED:
            facts -= {str(f) for f in update.delta.remove}
            facts |= {str(f) for f in update.delta.add}
    return facts


def held_commits(ops: Operations, *, then_fail: Exception | None = None) -> tuple[threading.Event, threading.Event]:
    """The memory's first group commit waits for ``release`` once it is ``inside``, then commits
    (or raises ``then_fail`` instead)."""
    world = ops.memory(NAME)
    inside, release = threading.Event(), threading.Event()
    real = world.apply_group

    def held(proposals: Any, **kwargs: Any) -> list[Update | BaseException]:
        if not inside.is_set():
            inside.set()
            assert release.wait(BOUND)
            if then_fail is not None:
                raise then_fail
        return real(proposals, **kwargs)

    world.apply_group = held  # type: ignore[method-assign]
    return inside, release


def test_concurrent_observations_are_each_recorded_once_and_replay(ops: Operations) -> None:
    steps = 10
    before = ops.memory(NAME).version

    def client(c: int) -> list[UpdateOut]:
        return [ops.observe(NAME, observing(c, step)) for step in range(steps)]

    answers = [a for answered in in_threads(CLIENTS, client) for a in answered]
    assert all(isinstance(a, UpdateOut) for a in answers), [a for a in answers if not isinstance(a, UpdateOut)]
    assert len(answers) == CLIENTS * steps
    assert {a.status for a in answers} == {"applied"}  # every observation changed its room

    memory = ops.memory(NAME)
    history = memory.history()
    ids = [u.id for u in history]
    assert sorted(a.id for a in answers) == sorted(set(ids) & {a.id for a in answers})
    assert len(ids) == len(set(ids))
    versions = sorted(a.version for a in answers)
    assert versions == list(range(before + 1, before + 1 + CLIENTS * steps))  # contiguous, none twice
    assert memory.version == before + CLIENTS * steps
    assert replayed(history) == {str(f) for f in memory.state().facts}
    for c in range(CLIENTS):  # each client's last step (odd): lamp off, mug back on the desk
        assert f"(on mug_c{c} desk_c{c})" in {str(f) for f in memory.facts(entity=f"mug_c{c}")}
    stats = ops.services.groups.stats()
    if ops.services.settings.group_commit:
        assert stats.items == CLIENTS * steps
    else:
        assert stats.items == 0  # one write at a time, outside the groups


def test_writes_queued_behind_a_commit_form_the_next_group(grouped: Operations) -> None:
    """The first writer leads and is held inside its commit while nine more queue: they are one group."""
    inside, release = held_commits(grouped)
    results: list[Any] = []
    first = threading.Thread(target=lambda: results.append(grouped.observe(NAME, observing(0, 0))))
    first.start()
    assert inside.wait(BOUND)
    others = [
        threading.Thread(target=lambda c=c: results.append(grouped.observe(NAME, observing(c, 0))))
        for c in range(1, 10)
    ]
    for thread in others:
        thread.start()
    while grouped.services.groups.waiting(NAME) < 9:  # every one queued behind the held commit
        assert all(t.is_alive() for t in others), "a writer finished while the leader was held"
        threading.Event().wait(0.01)
    release.set()
    for thread in [first, *others]:
        thread.join(BOUND)
    assert len(results) == 10 and {r.status for r in results} == {"applied"}
    stats = grouped.services.groups.stats()
    assert (stats.groups, stats.items, stats.largest) == (2, 10, 9)


def test_a_group_that_fails_whole_fails_only_its_writers_and_the_next_group_commits(grouped: Operations) -> None:
    world = grouped.memory(NAME)
    before = world.version
    inside, release = held_commits(grouped, then_fail=RuntimeError("the store went away"))
    failed: list[BaseException] = []

    def first_writer() -> None:
        try:
            grouped.observe(NAME, observing(0, 0))
        except RuntimeError as exc:
            failed.append(exc)

    first = threading.Thread(target=first_writer)
    first.start()
    assert inside.wait(BOUND)
    later = in_threads_started(3, lambda c: grouped.observe(NAME, observing(c + 1, 0)))
    while grouped.services.groups.waiting(NAME) < 3:
        threading.Event().wait(0.01)
    release.set()
    first.join(BOUND)
    answers = later()
    assert [str(e) for e in failed] == ["the store went away"]
    assert [a.status for a in answers] == ["applied"] * 3
    assert world.version == before + 3  # the three later writers only


def test_a_batch_and_single_writes_queued_together_each_get_their_own_answers(grouped: Operations) -> None:
    """A batch larger than a group, queued with single writers behind a held commit: every write is
    answered, in its own order, and the groups never exceed their cap."""
    groups = grouped.services.groups
    groups.max_items = 4
    inside, release = held_commits(grouped)
    first = in_threads_started(1, lambda _: grouped.observe(NAME, observing(0, 0)))
    assert inside.wait(BOUND)
    batch = ObservationsIn(observations=[observing(1, step) for step in range(6)])
    batched = in_threads_started(1, lambda _: grouped.observe_batch(NAME, batch))
    singles = in_threads_started(3, lambda c: grouped.observe(NAME, observing(c + 2, 0)))
    while groups.waiting(NAME) < 6 + 3:
        threading.Event().wait(0.01)
    release.set()
    answers = [*first(), *singles()]
    [items] = batched()
    assert [a.status for a in answers] == ["applied"] * 4
    assert [i.status for i in items] == ["applied"] * 6
    assert [i.version for i in items] == sorted(i.version for i in items)  # the batch's own order
    for step, item in enumerate(items):  # each against the state its predecessor left
        assert "(light_on lamp_c1)" in {str(f) for f in (item.delta.add if step % 2 == 0 else item.delta.remove)}
    stats = groups.stats()
    assert stats.items == 1 + 6 + 3 and stats.largest <= 4


def in_threads_started(count: int, work: Callable[[int], Any]) -> Callable[[], list[Any]]:
    """Start ``work(i)`` on threads now; the returned call joins them and gives their results."""
    results: list[Any] = [None] * count
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, work(i))) for i in range(count)]
    for thread in threads:
        thread.start()

    def joined() -> list[Any]:
        for thread in threads:
            thread.join(BOUND)
        assert not any(t.is_alive() for t in threads)
        return results

    return joined


@pytest.mark.parametrize(
    "seen",
    [
        changing_observation(3, 0),  # applied: lamp on, mug to the basin
        {"room": "room_c3", "entities": [{"name": "desk_c3", "type": "furniture"}]},  # the mug unseen: lost
        {"room": "attic_9", "entities": []},  # refused up front: no such room
        {"room": "room_c3", "entities": [{"name": "lamp_c3", "type": "dish"}]},  # refused: a light is no dish
    ],
    ids=["applied", "lost-track", "unknown-room", "retyped"],
)
def test_a_grouped_observation_records_what_one_alone_records(tmp_path: Path, seen: dict[str, Any]) -> None:
    observation = Observation.model_validate(seen)
    recorded = []
    for group_commit in (True, False):
        for ops in operations(tmp_path / str(group_commit), group_commit=group_commit):
            answer = ops.observe(NAME, ObservationIn.model_validate(seen))
            recorded.append(answer.model_dump(exclude={"id", "time"}))
    grouped, alone = recorded
    assert grouped == alone
    assert grouped["input"] == observation.to_json()


def test_a_stale_expected_version_is_a_conflict_and_writes_nothing(ops: Operations) -> None:
    version, recorded = ops.memory(NAME).version, len(ops.memory(NAME).history())
    with pytest.raises(VersionConflict):
        ops.observe(NAME, observing(0, 0, expected_version=version - 1))
    with pytest.raises(VersionConflict):
        ops.apply_delta(NAME, DeltaIn(add=["(light_on lamp_c0)"], expected_version=version - 1))
    assert ops.memory(NAME).version == version and len(ops.memory(NAME).history()) == recorded


def test_sensor_propose_sees_the_groups_earlier_writes(grouped: Operations) -> None:
    """Two observations of one room in one group: the second's delta is against the first's result."""
    world = grouped.memory(NAME)
    updater = SensorUpdater(world)
    first, second = (Observation.model_validate(changing_observation(5, s)) for s in (0, 1))
    outcomes = world.apply_group([lambda v: updater.propose(first, v), lambda v: updater.propose(second, v)])
    assert all(isinstance(o, Update) for o in outcomes), outcomes
    a, b = outcomes
    assert isinstance(a, Update) and isinstance(b, Update)
    assert {str(f) for f in a.delta.add} == {"(light_on lamp_c5)", "(on mug_c5 basin_c5)"}
    assert {str(f) for f in b.delta.remove} == {"(light_on lamp_c5)", "(on mug_c5 basin_c5)"}
    assert (a.version, b.version) == (world.version - 1, world.version)


@pytest.mark.slow
@pytest.mark.parametrize("group_commit", [True, False], ids=["grouped", "one-by-one"])
def test_rejected_observation_answers_422_and_its_neighbours_200(tmp_path: Path, group_commit: bool) -> None:
    settings = Settings(sqlite_path=tmp_path / "rest.db", group_commit=group_commit, retriever="full")
    with TestClient(create_app(settings)) as client:
        assert client.post("/v1/memories", json={"name": NAME, "domain": "example_home"}).status_code == 201
        for body in (survey_json(), owned_entities(CLIENTS)):
            assert client.post(f"/v1/memories/{NAME}/entities", json=body).status_code == 200

        def post(c: int) -> tuple[int, dict[str, Any]]:
            body = {"room": "attic_9", "entities": []} if c == 0 else changing_observation(c, 0)
            response = client.post(f"/v1/memories/{NAME}/observations", json=body)
            return response.status_code, response.json()

        answers = in_threads(8, post)
        assert answers[0][0] == 422 and answers[0][1]["error"]["update"]["status"] == "rejected"
        assert [status for status, _ in answers[1:]] == [200] * 7
        assert {body["status"] for _, body in answers[1:]} == {"applied"}
        facts = client.get(f"/v1/memories/{NAME}/facts").json()
        assert facts["version"] == 2 + 7  # the survey and the rooms, then the seven accepted
        assert all(f"(on mug_c{c} basin_c{c})" in facts["facts"] for c in range(1, 8))
