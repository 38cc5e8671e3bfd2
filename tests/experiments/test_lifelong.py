"""The lifelong benchmark runs end to end, small (CI); the big runs' figures are in docs/benchmarks/lifelong.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import lifelong


@pytest.mark.slow
def test_lifelong_benchmark_runs_small(tmp_path: Path) -> None:
    out, figure = tmp_path / "lifelong.json", tmp_path / "lifelong.png"
    argv = ["--updates", "2000", "--stores", "sqlite", "--samples", "10", "--out", str(out), "--plot", str(figure)]
    assert lifelong.main(argv) == 0
    results = json.loads(out.read_text())["stores"]["sqlite"]
    assert [r["updates"] for r in results["rows"]][-1] >= 1_990  # the survey takes a few versions
    assert results["exchange"]["updates"] >= 1_990 and results["exchange"]["import_per_s"] > 0
    assert len(results["targets"]) == 6 and figure.stat().st_size > 10_000
