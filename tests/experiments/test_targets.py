"""Targets are judged only on what was measured: a target with no sample is "not measured", in the
results and in the printed tables, never a pass; a run lists only the parameters that applied to it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from experiments import costs, planning
from experiments.harness import NOT_MEASURED, judged, judged_all, verdict, verdict_word
from experiments.retrieval import judge as judge_retrieval
from experiments.updates import add_arguments, judge
from experiments.updates.run import applied_parameters, print_report

RESULTS = Path(__file__).resolve().parents[2] / "experiments" / "results"


def test_a_ratio_without_a_sample_is_not_measured() -> None:
    assert judged_all("all refused", 0, 0) == {
        "target": "all refused",
        "measured": "0/0",
        "pass": None,
        "verdict": NOT_MEASURED,
    }
    assert judged_all("all refused", 3, 3)["pass"] is True
    assert judged_all("all refused", 2, 3)["pass"] is False


def test_a_target_without_samples_is_not_measured_whatever_it_would_have_said() -> None:
    assert judged("no violation", 0, True, samples=0)["pass"] is None
    assert judged("median <= 1 s", None, None)["verdict"] == NOT_MEASURED
    assert judged("no violation", 0, True, samples=5) == {"target": "no violation", "measured": 0, "pass": True}


def test_the_table_cells_say_not_measured() -> None:
    assert "NOT MEASURED" in verdict_word(judged_all("t", 0, 0))
    assert "PASS" in verdict(judged_all("t", 1, 1)) and "MISS" in verdict(judged_all("t", 0, 1))


def variant(steps: int, errors: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "steps": steps,
        "verified": True,
        "overhead_ms": {"p95": 5.0},
        "violations": {"steps_with_any": 0},
        "errors": errors,
    }


def errors(detectable: int, detected: int) -> dict[str, Any]:
    return {"injected": {}, "answers_detectable": detectable, "answers_detected": detected, "answers_written": 0}


def test_update_targets_with_nothing_detectable_are_not_measured() -> None:
    targets = judge({"RSV": variant(10, errors(0, 0)), "R-V": variant(10, errors(4, 4))})
    assert targets["detected_RSV"]["pass"] is None and targets["detected_RSV"]["measured"] == "0/0"
    assert targets["detected_R-V"]["pass"] is True and targets["violations_RSV"]["pass"] is True


def test_a_real_models_update_run_measures_no_injected_errors() -> None:
    targets = judge({"RSV": variant(10, None)})
    assert targets["detected_RSV"]["verdict"] == NOT_MEASURED


def test_an_update_run_without_steps_measures_nothing() -> None:
    targets = judge({"RSV": variant(0, errors(0, 0))})
    assert {name: t["pass"] for name, t in targets.items()} == dict.fromkeys(targets)


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_a_real_model_run_lists_no_simulated_model_parameter() -> None:
    configured = applied_parameters(parsed("--model", "configured", "--cassettes", "/tmp/c"))
    assert "error_rate" not in configured and "correct_on_reprompt" not in configured
    assert configured["cassettes"] == "/tmp/c" and configured["model"] == "configured"
    simulated = applied_parameters(parsed())
    assert simulated["error_rate"] == 0.2 and simulated["correct_on_reprompt"] == 0.75
    assert "cassettes" not in simulated


def test_the_printed_report_of_the_real_model_run_says_not_measured() -> None:
    results = json.loads((RESULTS / "updates-smollm2.json").read_text(encoding="utf-8"))
    console = Console(record=True, width=200)
    print_report(console, results)
    text = console.export_text()
    assert "detectable injected errors refused" in text and "NOT MEASURED" in text
    assert "injected errors (simulated model)" not in text


def test_planning_targets_without_tasks_are_not_measured() -> None:
    empty = {"pipeline_s_median": None, "speedup_min": None, "valid_share_of_returned": None, "valid": 0, "tasks": 0}
    targets = planning.judge({"paper": empty, "mid": empty, "large": empty}, ["paper", "mid", "large"])
    assert all(t["verdict"] == NOT_MEASURED for t in targets.values()), targets


def test_cost_targets_over_no_solved_plan_are_not_measured() -> None:
    timeout = {"task": "a", "kind": "k", "mode": "optimal", "status": "timeout", "valid": False, "cost": None}
    targets = costs.judge({"paper": {"runs": [{**timeout, "proven": False}]}})
    assert targets["valid"]["pass"] is None and targets["optimal_cheapest"]["pass"] is None
    assert targets["optimal_proven"]["pass"] is False  # "some are proven" is a miss with none


def test_a_retrieval_figure_of_none_is_not_measured() -> None:
    search = {"recall": None, "token_ratio_mean": 0.05}
    scales = {"paper": {"sqlite": {"retrievers": {"search": search}, "re_embedded_after_warmup": 0}}}
    targets = judge_retrieval(scales)
    assert targets["recall_paper"]["verdict"] == NOT_MEASURED and targets["tokens_paper"]["pass"] is True
