"""Summaries of an update episode: accuracy per step, tokens, overhead and error detection per variant."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from experiments.harness import quantile
from experiments.updates.episode import Lane, Step


def _quantile(values: Sequence[float], q: int) -> float:
    return quantile(values, q) if values else 0.0


def cumulative_success(steps: Sequence[Step]) -> list[float]:
    """Share of the state changes registered correctly so far, after each step (the paper's Fig. 2)."""
    done = 0
    rates = []
    for i, step in enumerate(steps, start=1):
        done += step.success
        rates.append(round(done / i, 4))
    return rates


def _errors(steps: Sequence[Step]) -> dict[str, Any]:
    """The simulated model's injected errors and what became of them."""
    injected = Counter(kind for s in steps for kind in s.injected)
    return {
        "injected": dict(sorted(injected.items())),
        "answers_detectable": sum(s.detectable for s in steps),
        "answers_detected": sum(s.detected for s in steps),
        "answers_written": sum(s.slipped for s in steps),
    }


def summarize_lane(lane: Lane) -> dict[str, Any]:
    """A variant's figures; ``errors`` is None for a model without injected errors (a real one)."""
    steps = lane.steps
    overhead_ms = [s.overhead * 1000 for s in steps]
    tokens = [s.prompt_tokens for s in steps]
    succeeded = [s.prompt_tokens for s in steps if s.success]
    return {
        "variant": lane.variant.name,
        "retriever": lane.variant.retriever,
        "verified": lane.variant.verify,
        "steps": len(steps),
        "success_rate": cumulative_success(steps)[-1] if steps else 0.0,
        "final_accuracy": steps[-1].accuracy if steps else 1.0,
        "mean_accuracy": round(statistics.fmean(s.accuracy for s in steps), 4) if steps else 1.0,
        "exact_steps": sum(s.exact for s in steps),
        "status": dict(Counter(s.status for s in steps)),
        "prompt_tokens_per_update": round(statistics.fmean(tokens), 1) if tokens else 0.0,
        "prompt_tokens_per_success": round(statistics.fmean(succeeded), 1) if succeeded else None,
        "completion_tokens_per_update": round(statistics.fmean(s.completion_tokens for s in steps), 1) if steps else 0,
        "attempts_per_update": round(statistics.fmean(s.attempts for s in steps), 3) if steps else 0.0,
        "overhead_ms": {
            "mean": round(statistics.fmean(overhead_ms), 2) if overhead_ms else 0.0,
            "p50": round(_quantile(overhead_ms, 50), 2),
            "p95": round(_quantile(overhead_ms, 95), 2),
            "max": round(max(overhead_ms, default=0.0), 2),
        },
        "errors": _errors(steps) if lane.oracle is not None else None,
        "violations": {
            "steps_with_any": sum(s.violations > 0 for s in steps),
            "max": max((s.violations for s in steps), default=0),
        },
        "per_step": {
            "accuracy": [round(s.accuracy, 4) for s in steps],
            "exact": [s.exact for s in steps],
            "success_rate": cumulative_success(steps),
            "violations": [s.violations for s in steps],
        },
    }


def summarize(lanes: Sequence[Lane]) -> dict[str, Any]:
    variants = {lane.variant.name: summarize_lane(lane) for lane in lanes}
    result: dict[str, Any] = {"variants": variants}
    full, search = variants.get("R-V") or variants.get("R-"), variants.get("RSV") or variants.get("RS")
    if full and search and full["prompt_tokens_per_update"]:
        saved = 1 - search["prompt_tokens_per_update"] / full["prompt_tokens_per_update"]
        result["rs_token_reduction_vs_full"] = round(saved, 4)
    return result


def steps_json(lane: Lane) -> list[dict[str, Any]]:
    return [asdict(s) for s in lane.steps]
