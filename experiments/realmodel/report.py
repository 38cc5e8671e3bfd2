"""A lane's figures from its rows (per set and both together), the targets on the default lane, and
the tables."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments.harness import judged, quantile, targets_table
from experiments.realmodel.data import SETS
from experiments.realmodel.judge import GOAL_OUTCOMES, OUTCOMES

EXACT_TARGET = 0.60
WRONG_TARGET = 0.05
MEDIAN_SECONDS_TARGET = 10.0
GOALS_TARGET = 0.50
ALL = "all"  # both sets together


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summarize_reports(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Outcome counts and shares, seconds and tokens per update, over ``rows``."""
    counts = Counter(r["outcome"] for r in rows)
    seconds = [r["seconds"] for r in rows]
    n = len(rows)
    return {
        "updates": n,
        "counts": {o: counts[o] for o in OUTCOMES},
        "shares": {o: _share(counts[o], n) for o in OUTCOMES},
        "wrong_or_partial": _share(counts["wrong"] + counts["partial"], n),
        "tokens_per_update": {
            "prompt": round(statistics.fmean(r["prompt_tokens"] for r in rows), 1) if rows else None,
            "completion": round(statistics.fmean(r["completion_tokens"] for r in rows), 1) if rows else None,
        },
        "seconds": {
            "median": round(quantile(seconds, 50), 3) if rows else None,
            "p90": round(quantile(seconds, 90), 3) if rows else None,
        },
    }


def summarize_tasks(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counts = Counter(r["outcome"] for r in rows)
    return {
        "tasks": len(rows),
        "counts": {o: counts[o] for o in GOAL_OUTCOMES},
        "share_right": _share(counts["right"], len(rows)),
        "tokens_per_task": round(statistics.fmean(r["prompt_tokens"] + r["completion_tokens"] for r in rows), 1)
        if rows
        else None,
        "seconds_median": round(quantile([r["seconds"] for r in rows], 50), 3) if rows else None,
    }


def summarize(reports: Sequence[Mapping[str, Any]], tasks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per set (``reports``, ``heldout``) and both together (``all``)."""
    sets = [*SETS, ALL]
    return {
        "reports": {s: summarize_reports([r for r in reports if s == ALL or r["set"] == s]) for s in sets},
        "tasks": {s: summarize_tasks([t for t in tasks if s == ALL or t["set"] == s]) for s in sets},
    }


def without_timing(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A summary less what depends on the machine's speed: what a replay must reproduce exactly."""
    reports = {s: {k: v for k, v in f.items() if k != "seconds"} for s, f in summary["reports"].items()}
    tasks = {s: {k: v for k, v in f.items() if k != "seconds_median"} for s, f in summary["tasks"].items()}
    return {"reports": reports, "tasks": tasks}


def judge(lane: Mapping[str, Any] | None, label: str) -> dict[str, dict[str, Any]]:
    """The targets, on the default lane over both sets together; not measured without it."""
    texts = {
        "registered_exactly": f"{label}: registered exactly ≥ {EXACT_TARGET:.0%}",
        "wrong_writes": f"{label}: wrong writes ≤ {WRONG_TARGET:.0%} (partial reported apart)",
        "median_seconds": f"{label}: median seconds per update ≤ {MEDIAN_SECONDS_TARGET:g}",
        "tasks_right_goal": f"{label}: tasks with the right goal ≥ {GOALS_TARGET:.0%}",
    }
    if lane is None:
        return {key: judged(text, "lane not run", None) for key, text in texts.items()}
    reports, tasks = lane["summary"]["reports"][ALL], lane["summary"]["tasks"][ALL]
    n, shares = reports["updates"], reports["shares"]
    median = reports["seconds"]["median"]
    right = tasks["share_right"]
    return {
        "registered_exactly": judged(
            texts["registered_exactly"], shares["exact"], _at_least(shares["exact"], EXACT_TARGET), samples=n
        ),
        "wrong_writes": judged(
            texts["wrong_writes"],
            f"{shares['wrong']} (partial {shares['partial']}, wrong+partial {reports['wrong_or_partial']})",
            None if shares["wrong"] is None else shares["wrong"] <= WRONG_TARGET,
            samples=n,
        ),
        "median_seconds": judged(
            texts["median_seconds"], median, None if median is None else median <= MEDIAN_SECONDS_TARGET, samples=n
        ),
        "tasks_right_goal": judged(
            texts["tasks_right_goal"], right, _at_least(right, GOALS_TARGET), samples=tasks["tasks"]
        ),
    }


def _at_least(share: float | None, target: float) -> bool | None:
    return None if share is None else share >= target


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f}%"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def lanes_table(results: Mapping[str, Any]) -> Table:
    """One row per lane and set: the outcome shares, seconds, tokens, tasks and time to first token."""
    modes = ", ".join(sorted({run["mode"] for run in results["runs"]}))
    table = Table(title=f"real model: reports read into memory edits, requests into goals ({modes})")
    columns = ("lane", "set", "n", *OUTCOMES, "med s", "p90 s", "tok/upd", "goals right", "TTFT cold/warm s")
    for column in columns:
        table.add_column(column, justify="left" if column in ("lane", "set") else "right")
    for key, lane in results["lanes"].items():
        ttft = results["runs"][lane["run"]]["servers"].get(lane["server"] or "", {}).get("ttft")
        for n, name in enumerate((*SETS, ALL)):
            figures, tasks = lane["summary"]["reports"][name], lane["summary"]["tasks"][name]
            tokens = figures["tokens_per_update"]
            table.add_row(
                key if n == 0 else "",
                name,
                str(figures["updates"]),
                *(_pct(figures["shares"][o]) for o in OUTCOMES),
                _seconds(figures["seconds"]["median"]),
                _seconds(figures["seconds"]["p90"]),
                "-" if tokens["prompt"] is None else f"{tokens['prompt'] + tokens['completion']:,.0f}",
                f"{tasks['counts']['right']}/{tasks['tasks']}",
                f"{ttft['cold_s']:.2f}/{ttft['warm_s']:.2f}" if ttft and n == 0 else "",
                end_section=name == ALL,
            )
    return table


def print_report(console: Console, results: Mapping[str, Any]) -> None:
    console.print(lanes_table(results))
    console.print(targets_table(f"real-model targets ({results['default_lane']})", results["targets"].values()))
