"""Identical planner calls inside ``shared_solves()``: run once (also when asked at once), only
outcomes the input decides kept, nothing shared outside the block."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from kg_memory import DomainRegistry
from planning import PlanStatus, _fd_text, full_context, problem_pddl, shared_solves, solve
from planning._fd_text import FastDownwardOutcome
from planning.evaluator import GroundAction
from planning.shared import credited
from sim import HomeSpec, Simulator, generate_home

PROBLEM = "(define (problem task) (:domain household) (:objects) (:init) (:goal (and)))"
OTHER = PROBLEM.replace("task", "other")
HANG_GUARD = 60.0  # only ends a broken test; no figure depends on it


class CountingPlanner:
    """Stands in for Fast Downward: counts runs, answers with ``code``, and can hold a run until released."""

    def __init__(self, code: int = 0) -> None:
        self.code = code
        self.seconds = 0.25  # what the fake planner says it took
        self.runs = 0
        self.started = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def __call__(self, planner: str, domain: str, problem: str, timeout: float, **_: object) -> FastDownwardOutcome:
        self.runs += 1
        self.started.set()
        assert self.release.wait(HANG_GUARD)
        plan = (GroundAction("move", ("robot_1", "kitchen", "hall")),) if self.code == 0 else ()
        return FastDownwardOutcome(self.code, plan, self.seconds, "")


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingPlanner]:
    fake = CountingPlanner()
    monkeypatch.setattr(_fd_text, "run", fake)
    yield fake


def test_a_shared_solve_is_asked_once(counting: CountingPlanner) -> None:
    domain = DomainRegistry().get("household")
    with shared_solves() as memo:
        first = solve(domain, PROBLEM)
        again = solve(domain, PROBLEM)
        other = solve(domain, OTHER)
    assert counting.runs == 2 and (memo.runs, memo.shared) == (2, 1)
    assert again is first and first.status is PlanStatus.SOLVED and first.plan_seconds == 0.25
    assert other is not first
    solve(domain, PROBLEM)  # the block has ended: nothing is shared any more
    assert counting.runs == 3


@pytest.mark.parametrize(("code", "status"), [(21, PlanStatus.TIMEOUT), (1, PlanStatus.ERROR)])
def test_timeouts_and_errors_are_not_kept(counting: CountingPlanner, code: int, status: PlanStatus) -> None:
    counting.code = code
    domain = DomainRegistry().get("household")
    with shared_solves() as memo:
        results = [solve(domain, PROBLEM) for _ in range(2)]
    assert [r.status for r in results] == [status, status]
    assert counting.runs == 2 and memo.shared == 0


def test_unsolvable_is_kept(counting: CountingPlanner) -> None:
    counting.code = 12
    domain = DomainRegistry().get("household")
    with shared_solves():
        results = [solve(domain, PROBLEM) for _ in range(2)]
    assert results[0].status is PlanStatus.UNSOLVABLE and results[1] is results[0] and counting.runs == 1


def test_an_anytime_search_is_never_shared(counting: CountingPlanner) -> None:
    domain = DomainRegistry().get("household")
    with shared_solves() as memo:
        for _ in range(2):
            solve(domain, PROBLEM, "fast-downward-anytime")
    assert counting.runs == 2 and memo.runs == 0


def test_a_second_caller_waits_for_the_call_in_flight(counting: CountingPlanner) -> None:
    counting.release.clear()
    domain = DomainRegistry().get("household")
    answers: dict[str, object] = {}

    def ask(name: str) -> None:
        answers[name] = solve(domain, PROBLEM)

    with shared_solves() as memo:
        first = threading.Thread(target=ask, args=("first",))
        first.start()
        assert counting.started.wait(HANG_GUARD)
        second = threading.Thread(target=ask, args=("second",))
        second.start()
        deadline = time.monotonic() + HANG_GUARD
        while memo.waits < 1 and time.monotonic() < deadline:  # the second is parked on the first's event
            time.sleep(0.001)
        counting.release.set()
        first.join(HANG_GUARD)
        second.join(HANG_GUARD)
    assert memo.waits == 1 and counting.runs == 1
    assert answers["second"] is answers["first"]


def test_a_waiter_runs_the_planner_itself_when_the_first_call_timed_out(counting: CountingPlanner) -> None:
    counting.code, counting.release = 21, threading.Event()
    domain = DomainRegistry().get("household")
    statuses: list[PlanStatus] = []
    with shared_solves() as memo:
        first = threading.Thread(target=lambda: statuses.append(solve(domain, PROBLEM).status))
        first.start()
        assert counting.started.wait(HANG_GUARD)
        second = threading.Thread(target=lambda: statuses.append(solve(domain, PROBLEM).status))
        second.start()
        deadline = time.monotonic() + HANG_GUARD
        while memo.waits < 1 and time.monotonic() < deadline:
            time.sleep(0.001)
        counting.release.set()
        first.join(HANG_GUARD)
        second.join(HANG_GUARD)
    assert statuses == [PlanStatus.TIMEOUT, PlanStatus.TIMEOUT] and counting.runs == 2


def test_one_sharing_block_per_process() -> None:
    with shared_solves(), pytest.raises(RuntimeError, match="already active"), shared_solves():
        pass


def test_the_real_planner_answers_a_repeat_from_the_first_run() -> None:
    sim = Simulator(generate_home(HomeSpec(seed=0, rooms=4, items=8, people=2)), seed=0)
    goal = sim.new_task().task.goal
    context = full_context(sim.world)
    text = problem_pddl(sim.domain, context.entities, context.facts, goal)
    with shared_solves() as memo:
        first = solve(sim.domain, text)
        again = solve(sim.domain, text)
    assert first.solved and again is first and (memo.runs, memo.shared) == (1, 1)
    assert sim.judge(first.plan, goal).success


def test_a_shared_call_credits_its_caller_the_seconds_it_was_spared(counting: CountingPlanner) -> None:
    counting.seconds = 1000.0  # far above any lookup: the credit is the first call's seconds less that lookup
    domain = DomainRegistry().get("household")
    with shared_solves():
        with credited() as first:
            solve(domain, PROBLEM)
        with credited() as second:
            solve(domain, PROBLEM)
    assert first.seconds == 0.0
    assert 999.0 < second.seconds <= 1000.0
