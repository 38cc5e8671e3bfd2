"""A slow model never takes the service down.

50 concurrent NL updates at a model that stalls: the real server (a subprocess) admits a few into
its model slots and refuses the rest at once with 503 and Retry-After; ``GET /health`` keeps
answering throughout; every NL request ends within the route's deadline. The run is the service
benchmark's burst (``experiments.service.burst``); the bounds here hold on a machine whose cores are
busy with other work, and how fast /health answers under the burst is the benchmark's figure
(``python -m experiments service --burst-only``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.service.burst import DEADLINE, REQUESTS, SLOTS, measure_burst

pytestmark = pytest.mark.slow  # a server process and 50 requests stalled for seconds


@pytest.mark.serial  # a latency, measured with no other test sharing the cores
def test_fifty_nl_updates_at_a_stalling_model_leave_health_fast(tmp_path: Path) -> None:
    burst = measure_burst(tmp_path, requests=REQUESTS, slots=SLOTS, deadline=DEADLINE, stall=60)
    assert burst.model_received >= 1  # the admitted requests really reached the model

    outcomes, health = burst.outcomes, burst.health
    assert len(outcomes) == REQUESTS
    for o in outcomes:
        assert o.status in (200, 422, 429, 503), o  # a recorded outcome, or refused
        assert o.seconds < DEADLINE + 10.0, o.seconds  # within the deadline (and a busy machine's slack)
        if o.status in (429, 503):
            assert o.retry_after is not None and int(o.retry_after) >= 1
    refused = [o.seconds for o in outcomes if o.status == 503 and o.seconds < DEADLINE]
    assert len(refused) >= REQUESTS - 2 * SLOTS  # not queued: refused on arrival
    assert not burst.health_failures, burst.health_failures
    assert len(health) >= 20, "health was not polled throughout the load"
    slowest = sorted(health)[-3:]
    # never held behind the model calls (which stall for a minute): a bound, not the benchmark's target
    assert max(health) < 2.0, f"GET /health took up to {max(health) * 1000:.0f} ms (slowest: {slowest})"


def test_a_key_over_its_model_rate_gets_429_with_retry_after(tmp_path: Path) -> None:
    from l3mp.operations.errors import Overloaded
    from l3mp.operations.gate import RateLimit

    limit = RateLimit(per_minute=2)
    limit.take("key:a")
    limit.take("key:a")
    with pytest.raises(Overloaded) as refused:
        limit.take("key:a")
    assert refused.value.status == 429 and refused.value.retry_after >= 1
    limit.take("key:b")  # per key: another caller is not affected
