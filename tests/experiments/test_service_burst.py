"""The service benchmark's burst is judged on what it measured: no probe, no verdict; a slow or failed
probe misses the /health target; a request is within its deadline as the client timed it."""

from __future__ import annotations

from experiments.harness import NOT_MEASURED
from experiments.service.burst import Burst, Outcome, figures, judge, refused_on_arrival


def burst(health: list[float], outcomes: list[Outcome], failures: list[str] | None = None) -> Burst:
    return Burst(
        requests=len(outcomes), slots=4, deadline=6.0, outcomes=outcomes, health=health, health_failures=failures or []
    )


BUSY = Outcome(503, 0.02, "1", "busy")
ADMITTED = Outcome(422, 3.1, None, "update_rejected")
LATE = Outcome(503, 6.05, "1", "deadline_exceeded")


def test_a_burst_without_probes_or_requests_is_not_measured() -> None:
    measured = figures(burst([], []))
    assert measured["health"]["max_ms"] is None and measured["refused_max_ms"] is None
    targets = judge(measured)
    assert {t["verdict"] for t in targets.values()} == {NOT_MEASURED}


def test_the_slowest_probe_is_judged_and_a_failed_probe_misses() -> None:
    fast = judge(figures(burst([0.002, 0.004, 0.05], [BUSY, ADMITTED])))
    assert fast["burst /health max ms"] == {"target": "max < 100 ms", "measured": 50.0, "pass": True}
    slow = judge(figures(burst([0.002, 0.12], [BUSY])))
    assert slow["burst /health max ms"]["pass"] is False
    failed = judge(figures(burst([0.002], [BUSY], failures=["HTTP 500"])))
    assert failed["burst /health max ms"]["pass"] is False


def test_refused_on_arrival_is_a_busy_refusal_and_the_deadline_is_the_clients_clock() -> None:
    run = burst([0.002], [BUSY, BUSY, ADMITTED, LATE])
    assert refused_on_arrival(run) == [BUSY, BUSY]
    measured = figures(run)
    assert measured["refused_on_arrival"] == 2 and measured["outcomes"]["503 busy"] == 2
    assert judge(measured)["burst requests within deadline"] == {
        "target": "all end within the 6 s deadline",
        "measured": "3/4",
        "pass": False,
    }
