"""Table I from the seeds' runs: per seed and variant, then the mean and a 95% confidence interval
(Student's t over the seeds) of every figure; the paper's own numbers beside ours; the markdown table.

What depends only on the model's answers and the simulator (success, outcomes, tokens) goes in
:func:`outcomes`, which a replay reproduces byte for byte; times go in :func:`timings`.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from experiments.harness import quantile
from experiments.table1.episode import FIG3_VARIANT, LaneRun, SeedRun, lanes_heard_the_same
from experiments.table1.judge import OUTCOMES
from experiments.updates import cumulative_success

# Table I of L3M+P (GPT-4o, LAPKT SIW-then-BFS(f)): success % of state changes and of plans.
PAPER = {
    "R-": (71.5, 72.5),
    "R-V": (71.0, 72.5),
    "R+": (77.5, 80.0),
    "R+V": (92.5, 85.0),
    "RS": (96.0, 87.5),
    "RSV": (98.0, 90.0),
}
PAPER_SPEEDUP = 12.5  # RSV's retrieval and planner vs the planner on the full state (Fig. 3)
PAPER_TOKEN_SAVING = 0.676  # RSV's tokens per successful state change vs R- (Fig. 4)

# Two-sided 95% critical values of Student's t by degrees of freedom; the normal's beyond 30.
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
_T95 |= {11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042}


def t95(df: int) -> float:
    if df in _T95:
        return _T95[df]
    smaller = [d for d in _T95 if d <= df]
    return 1.96 if df > 30 else _T95[max(smaller)]  # between tabled values: the wider interval


def stat(values: Sequence[float], digits: int = 4) -> dict[str, Any]:
    """Mean, the 95% CI's half-width (None from one seed) and the values."""
    mean = statistics.fmean(values) if values else math.nan
    half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else None
    return {
        "mean": round(mean, digits),
        "ci95": None if half is None else round(half, digits),
        "values": [round(v, digits) for v in values],
    }


def lane_figures(run: LaneRun) -> dict[str, Any]:
    steps, plans = run.lane.steps, run.plans
    succeeded = [s.prompt_tokens + s.completion_tokens for s in steps if s.success]
    outcomes = Counter(p.outcome for p in plans)
    return {
        "state_change_success": round(sum(s.success for s in steps) / len(steps), 4) if steps else 0.0,
        "plan_success": round(outcomes["success"] / len(plans), 4) if plans else 0.0,
        "plan_outcomes": {o: outcomes[o] for o in OUTCOMES},
        "successes_unlike_reference": sum(p.outcome == "success" and not p.matches_reference for p in plans),
        "final_accuracy": round(steps[-1].accuracy, 4) if steps else 1.0,
        "update_status": dict(sorted(Counter(s.status for s in steps).items())),
        "tokens_per_successful_change": round(statistics.fmean(succeeded), 1) if succeeded else None,
        "tokens_of_successful_changes": succeeded,
        "plan_tokens_per_task": round(statistics.fmean(p.prompt_tokens + p.completion_tokens for p in plans), 1)
        if plans
        else None,
        "cumulative_success": cumulative_success(steps),
        "updates": [
            {"step": s.step, "success": s.success, "status": s.status, "attempts": s.attempts, "tokens": _tokens(s)}
            for s in steps
        ],
        "plans": [asdict(p) for p in plans],
    }


def _tokens(step: Any) -> int:
    return int(step.prompt_tokens + step.completion_tokens)


def seed_figures(run: SeedRun) -> dict[str, Any]:
    """One seed's plain figures: ``outcomes`` (replayable) and ``timings`` (measured); picklable, so a
    worker process can hand them back."""
    return {
        "seed": run.seed,
        "outcomes": {
            "home": run.home,
            "identical_episode": lanes_heard_the_same([run]),
            "events": run.events,
            "tasks": run.tasks,
            "variants": {name: lane_figures(lane) for name, lane in run.lanes.items()},
        },
        "timings": {
            "full_state": run.full_state,
            "plan_seconds": {name: lane.plan_seconds for name, lane in run.lanes.items()},
            "overhead_ms": {name: [1000 * s.overhead for s in lane.lane.steps] for name, lane in run.lanes.items()},
            "solves": run.solves,
        },
    }


def outcomes(runs: Sequence[dict[str, Any]], model: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """Every number that depends on the simulator and the model's answers, nothing timed."""
    seeds: dict[str, dict[str, Any]] = {str(run["seed"]): run["outcomes"] for run in runs}
    names = list(runs[0]["outcomes"]["variants"]) if runs else []
    summary = {name: _summary(name, [s["variants"][name] for s in seeds.values()]) for name in names}
    result: dict[str, Any] = {"benchmark": "table1", "model": model, "parameters": parameters}
    result["identical_episodes"] = all(s["identical_episode"] for s in seeds.values())
    result["paper"] = {
        "source": "L3M+P Table I (GPT-4o, LAPKT SIW-then-BFS(f)); success % of state changes / plans",
        "table1": {k: {"state_changes": v[0], "plans": v[1]} for k, v in PAPER.items()},
        "fig3_speedup": PAPER_SPEEDUP,
        "fig4_token_saving_rsv_vs_r_minus": PAPER_TOKEN_SAVING,
    }
    result["summary"] = summary
    if "R-" in summary and "RSV" in summary:
        r_minus, rsv = (summary[n]["tokens_per_successful_change"]["mean"] for n in ("R-", "RSV"))
        result["token_saving_rsv_vs_r_minus"] = round(1 - rsv / r_minus, 4) if r_minus else None
    result["seeds"] = seeds
    return result


def _summary(name: str, figures: Sequence[dict[str, Any]]) -> dict[str, Any]:
    curves = [f["cumulative_success"] for f in figures]
    length = min((len(c) for c in curves), default=0)
    tokens = [f["tokens_per_successful_change"] for f in figures if f["tokens_per_successful_change"] is not None]
    return {
        "state_change_success": stat([f["state_change_success"] for f in figures]),
        "plan_success": stat([f["plan_success"] for f in figures]),
        "plan_outcome_share": {
            o: stat([f["plan_outcomes"][o] / max(1, sum(f["plan_outcomes"].values())) for f in figures])
            for o in OUTCOMES
        },
        "successes_unlike_reference": sum(f["successes_unlike_reference"] for f in figures),
        "final_accuracy": stat([f["final_accuracy"] for f in figures]),
        "tokens_per_successful_change": stat(tokens, digits=1),
        "cumulative_success": [stat([c[i] for c in curves]) for i in range(length)],
        "paper": {"state_changes": PAPER[name][0], "plans": PAPER[name][1]} if name in PAPER else None,
    }


def timings(runs: Sequence[dict[str, Any]], model: str) -> dict[str, Any]:
    """The measured times: plan pipelines per variant, update overhead, Fig. 3's pairs and speedup."""
    pairs = [p | {"seed": run["seed"]} for run in runs for p in run["timings"]["full_state"]]
    solved = [p for p in pairs if p["pipeline_s"] > 0 and p["full_status"] == "solved"]
    ratios = [p["full_state_s"] / p["pipeline_s"] for p in solved]
    names = list(runs[0]["timings"]["plan_seconds"]) if runs else []
    variants = {}
    for name in names:
        plan_s = [s for run in runs for s in run["timings"]["plan_seconds"][name]]
        overhead = [ms for run in runs for ms in run["timings"]["overhead_ms"][name]]
        variants[name] = {
            "plan_pipeline_s": {"median": _q(plan_s, 50), "p95": _q(plan_s, 95), "max": _q(plan_s, 100)},
            "update_overhead_ms": {"median": _q(overhead, 50), "p95": _q(overhead, 95)},
        }
    return {
        "benchmark": "table1",
        "model": model,
        "variants": variants,
        "planner_calls": {str(run["seed"]): run["timings"].get("solves", {}) for run in runs},
        "fig3": {
            "variant": FIG3_VARIANT,
            "pairs": pairs,
            "speedup_mean": round(statistics.fmean(ratios), 2) if ratios else None,
            "speedup_median": round(statistics.median(ratios), 2) if ratios else None,
            "paper_speedup_mean": PAPER_SPEEDUP,
        },
    }


def _q(values: Sequence[float], q: int) -> float | None:
    if not values:
        return None
    return round(max(values) if q == 100 else quantile(values, q), 4)


def _cell(figure: dict[str, Any], scale: float = 100.0, digits: int = 1) -> str:
    mean, half = figure["mean"] * scale, figure["ci95"]
    return f"{mean:.{digits}f}" if half is None else f"{mean:.{digits}f} ± {half * scale:.{digits}f}"


def markdown(results: dict[str, Any], timed: dict[str, Any] | None = None) -> str:
    """Table I as markdown: ours (mean ± 95% CI over the seeds) beside the paper's."""
    params, summary = results["parameters"], results["summary"]
    seeds = len(params["seeds"])
    lines = [
        f"Model: **{results['model']}**. {seeds} seed(s); per seed one home, {params['steps']} state changes and a "
        f"task after every {params['task_every']}th; mean ± 95% CI (Student's t over the seeds). "
        "Paper: L3M+P Table I (GPT-4o).",
        "",
        "| variant | state changes % (ours) | (paper) | plans % (ours) | (paper) "
        "| failed plans: memory wrong / goal error / no plan % | tokens per successful state change |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, s in summary.items():
        paper = s["paper"] or {"state_changes": "-", "plans": "-"}
        share = s["plan_outcome_share"]
        failures = " / ".join(f"{100 * share[o]['mean']:.1f}" for o in ("memory_wrong", "goal_error", "no_plan"))
        tokens = s["tokens_per_successful_change"]
        lines.append(
            f"| {name} | {_cell(s['state_change_success'])} | {paper['state_changes']} | {_cell(s['plan_success'])} "
            f"| {paper['plans']} | {failures} | {_cell(tokens, 1.0, 0)} |"
        )
    if results.get("token_saving_rsv_vs_r_minus") is not None:
        saving = 100 * results["token_saving_rsv_vs_r_minus"]
        lines += ["", f"RSV uses {saving:.1f}% fewer tokens per successful state change than R- (paper: 67.6%)."]
    if timed and timed["fig3"]["speedup_mean"] is not None:
        fig3 = timed["fig3"]
        lines.append(
            f"RSV's pipeline (retrieval included) vs the planner on the full true state, tasks RSV solved: "
            f"{fig3['speedup_mean']:.1f}x faster on average, median {fig3['speedup_median']:.1f}x (paper: 12.5x)."
        )
    return "\n".join(lines) + "\n"
