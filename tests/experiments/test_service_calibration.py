"""The service benchmark's yardstick for this machine's speed: the group's side of the generator's
writes alone, measured in its blocks, each write applied (a failed one stops it rather than timing
less work)."""

from __future__ import annotations

import pytest

from experiments.service import calibration
from experiments.service.calibration import BLOCKS, group_side
from experiments.service.load import _machine_rows


def test_the_group_side_is_timed_in_blocks_of_applied_writes() -> None:
    speed = group_side(clients=3)
    assert len(speed["blocks_ms"]) == BLOCKS and all(b > 0 for b in speed["blocks_ms"])
    assert min(speed["blocks_ms"]) <= speed["group_side_ms_per_observation"] <= max(speed["blocks_ms"])
    assert "groups of 3 observations" in speed["about"]
    rows = dict(_machine_rows({"machine_now": speed, "server_cpu_vs_group_side": 2.5}))
    assert rows["server CPU / the group's side alone"] == "2.50"
    assert _machine_rows({"server_cpu_ms_per_observation": 1.0}) == []  # a results file from before it


def test_a_write_that_fails_stops_the_calibration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibration, "_body", lambda step, clients: b'{"observations": [{"room": "nowhere_1"}]}')
    with pytest.raises(RuntimeError, match="calibration's writes failed"):
        group_side(clients=2)
