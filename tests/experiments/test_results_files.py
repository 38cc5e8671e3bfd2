"""The committed results say what they measured: no target passes without a sample, and a real
model's results carry none of the simulated model's parameters."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from experiments.harness import NOT_MEASURED
from experiments.updates.run import SIMULATED_ONLY

RESULTS = Path(__file__).resolve().parents[2] / "experiments" / "results"
FILES = sorted(RESULTS.glob("*.json"))
PASS_KEYS = ("pass", "passed", "met", "ok")
SAMPLE_KEYS = ("n", "samples", "count", "tasks", "steps", "updates", "runs")
RATIO = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
# what only the simulated model's answers have: its error knobs, and the errors it injected
SIMULATED_KEYS = frozenset({*SIMULATED_ONLY, "injected"})


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def dicts(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object in a JSON document, with its path."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from dicts(value, f"{where}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from dicts(value, f"{where}[{index}]")


def unsampled(entry: dict[str, Any]) -> list[str]:
    """Why an entry that claims a pass had nothing to judge: an "x/0" figure, a zero sample count,
    or no figure at all."""
    found = []
    for key, value in entry.items():
        ratio = RATIO.match(value) if isinstance(value, str) else None
        if ratio and int(ratio.group(2)) == 0:
            found.append(f"{key} = {value!r}")
        if key in SAMPLE_KEYS and value == 0:
            found.append(f"{key} = 0")
    figure = entry.get("measured", entry.get("value", 0))
    if figure is None or (isinstance(figure, float) and math.isnan(figure)):
        found.append(f"measured = {figure!r}")
    return found


def vacuous_passes(document: Any) -> list[str]:
    return [
        f"{where}: {', '.join(reasons)}"
        for where, entry in dicts(document)
        if any(entry.get(key) is True for key in PASS_KEYS) and (reasons := unsampled(entry))
    ]


def unlabelled_non_verdicts(document: Any) -> list[str]:
    """A target whose ``pass`` is null must say it was not measured."""
    return [
        where
        for where, entry in dicts(document)
        if "target" in entry and "pass" in entry and entry["pass"] is None and entry.get("verdict") != NOT_MEASURED
    ]


def is_real_model(document: Any) -> bool:
    model = document.get("model") if isinstance(document, dict) else None
    return isinstance(model, str) and not model.startswith("simulated")


def simulated_keys(document: Any) -> list[str]:
    return [f"{where}.{key}" for where, entry in dicts(document) for key in entry if key in SIMULATED_KEYS]


def test_there_are_results_files_with_targets() -> None:
    assert RESULTS / "updates-smollm2.json" in FILES
    assert sum(1 for f in FILES for _w, d in dicts(load(f)) if "pass" in d) >= 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_target_passes_without_a_sample(path: Path) -> None:
    document = load(path)
    assert not vacuous_passes(document)
    assert not unlabelled_non_verdicts(document)


def test_the_smollm2_runs_detection_target_is_not_measured() -> None:
    target = load(RESULTS / "updates-smollm2.json")["targets"]["detected_RSV"]
    assert target["pass"] is None and target["verdict"] == NOT_MEASURED


def test_real_model_results_carry_no_simulated_model_parameter() -> None:
    real = [path for path in FILES if is_real_model(load(path))]
    assert RESULTS / "updates-smollm2.json" in real
    assert RESULTS / "table1.json" not in real  # labelled simulated: its rates apply
    for path in real:
        assert not simulated_keys(load(path)), path.name


def test_the_checks_catch_what_they_are_for() -> None:
    """The walkers above on the shapes they guard against, so a pass over the files means something."""
    zero_ratio = {"targets": {"t": {"target": "all refused", "measured": "0/0", "pass": True}}}
    zero_count = {"rows": [{"n": 0, "passed": True, "measured": 1.0}]}
    no_figure = {"t": {"target": "median <= 1", "measured": None, "pass": True}}
    sampled = {"t": {"target": "all refused", "measured": "3/3", "pass": True}}
    assert vacuous_passes(zero_ratio) and vacuous_passes(zero_count) and vacuous_passes(no_figure)
    assert not vacuous_passes(sampled)
    assert unlabelled_non_verdicts({"t": {"target": "x", "measured": "0/0", "pass": None}})
    real = {"model": "configured: a local model", "parameters": {"error_rate": 0.2}}
    assert is_real_model(real) and simulated_keys(real) == [".parameters.error_rate"]
    assert not is_real_model({"model": "simulated (ground truth, 20% injected errors)"})
