"""The six update variants through one simulated episode, judged and written.

Targets: the pipeline's own time per update (model latency excluded) at paper scale; no rule
violation in a verified memory at any step; every injected error the verifier can flag is refused.
Tokens per update are reported for R-, R+ and RS (the paper: RS uses 67.6% fewer than R-).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from experiments.harness import (
    NOT_MEASURED,
    judged,
    judged_all,
    machine_info,
    open_store,
    parameters,
    progress,
    targets_table,
    write_results,
)
from experiments.updates.episode import VARIANTS, run_episode
from experiments.updates.report import summarize
from sim.model import ErrorRates

OVERHEAD_TARGET_MS = 30.0
PAPER_RS_REDUCTION = 0.676


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="home, simulator and simulated-model seed")
    parser.add_argument("--steps", type=int, default=100, help="events in the episode")
    parser.add_argument("--error-rate", type=float, default=0.2, help="share of answers with an injected error")
    parser.add_argument("--correct-on-reprompt", type=float, default=0.75, help="share of re-prompts answered right")
    parser.add_argument("--variants", default=",".join(v.name for v in VARIANTS), help="comma-separated variants")
    parser.add_argument("--no-gc-freeze", action="store_true", help="leave the setup's objects to the collector")
    parser.add_argument(
        "--model",
        choices=("simulated", "configured"),
        default="simulated",
        help="simulated (ground truth with injected errors) or configured (the L3MP_LLM_* model, e.g. a local server)",
    )
    parser.add_argument("--cassettes", type=Path, help="record the configured model's traffic here, one file a variant")
    parser.add_argument("--deadline", type=float, default=120.0, help="seconds per update, model calls included")


def run_updates(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    from retrieval import SentenceTransformerEmbedder
    from sim import HomeSpec, generate_home

    chosen = [v for v in VARIANTS if v.name in {n.strip() for n in args.variants.split(",")}]
    if not chosen or args.steps < 1 or not 0 <= args.error_rate <= 1:
        raise SystemExit("use --steps >= 1, --error-rate in [0, 1] and variants among R-, R-V, R+, R+V, RS, RSV")
    rates = ErrorRates(rate=args.error_rate, correct_on_reprompt=args.correct_on_reprompt)
    home = generate_home(HomeSpec(seed=args.seed))
    started = time.perf_counter()
    real, model_label = _configured(args) if args.model == "configured" else (None, SIMULATED)
    label = f"update episode ({model_label})"
    with open_store("sqlite") as store, progress(console, label, args.steps) as advance:
        lanes = run_episode(
            home,
            store,
            SentenceTransformerEmbedder(),
            steps=args.steps,
            rates=rates,
            seed=args.seed,
            variants=chosen,
            on_step=lambda _step: advance(),
            freeze_gc=not args.no_gc_freeze,
            real=real,
            deadline=args.deadline,
        )
    results = {**_header(args), **summarize(lanes)}
    results["model"] = model_label
    results["per_update"] = {lane.variant.name: _per_update(lane.steps) for lane in lanes}
    results["home"] = {"entities": len(home.entities), "facts": len(home.facts)}
    results["wall_s"] = round(time.perf_counter() - started, 1)
    results["targets"] = judge(results["variants"])
    write_results(args.out, results)
    print_report(console, results)
    _print_per_update(console, results)
    console.print(f"results written to {args.out} ({results['wall_s']} s)")
    return results


SIMULATED = "simulated: answers from the simulator's ground truth with injected errors (no real LLM)"


def _configured(args: argparse.Namespace) -> tuple[Callable[[Any], Any], str]:
    """A factory of the configured model per variant (recorded to a cassette each, if asked), and its label."""
    from l3mp.llm import CassetteRecorder
    from l3mp.settings import Settings
    from l3mp.wiring import configured_model

    settings = Settings()

    def build(variant: Any) -> Any:
        model = configured_model(settings)
        if args.cassettes is None:
            return model
        return CassetteRecorder(model, args.cassettes / f"{variant.name}.jsonl")

    label = f"configured: {settings.llm_model} at {settings.llm_base_url} (max_tokens {settings.llm_max_tokens})"
    return build, label


def _per_update(steps: list[Any]) -> dict[str, Any]:
    """Latency (model included), tokens and the reasons of rejections, per update."""
    seconds = sorted(s.seconds for s in steps)
    reasons: dict[str, int] = {}
    for step in steps:
        for reason in step.reasons:
            code = reason.split(":", 1)[0]
            reasons[code] = reasons.get(code, 0) + 1
    return {
        "updates": len(steps),
        "exact_match_rate": round(sum(s.success for s in steps) / len(steps), 4) if steps else 0.0,
        "seconds": {
            "median": round(seconds[len(seconds) // 2], 2) if seconds else 0.0,
            "max": round(seconds[-1], 2) if seconds else 0.0,
        },
        "tokens_per_update": round(sum(s.prompt_tokens + s.completion_tokens for s in steps) / max(1, len(steps)), 1),
        "rejection_reasons": reasons,
        "examples": sorted({r[:160] for s in steps for r in s.reasons})[:5],
    }


def _print_per_update(console: Console, results: dict[str, Any]) -> None:
    table = Table(title=f"per update, {results['model']}")
    for column in ("variant", "exact", "median s", "max s", "tokens", "rejections by reason"):
        table.add_column(column)
    for name, figures in results["per_update"].items():
        reasons = ", ".join(f"{k} {v}" for k, v in figures["rejection_reasons"].items()) or "-"
        table.add_row(
            name,
            f"{100 * figures['exact_match_rate']:.0f}%",
            f"{figures['seconds']['median']:.1f}",
            f"{figures['seconds']['max']:.1f}",
            f"{figures['tokens_per_update']:,.0f}",
            reasons,
        )
    console.print(table)


SIMULATED_ONLY = ("error_rate", "correct_on_reprompt")  # the simulated model's own knobs
CONFIGURED_ONLY = ("cassettes",)  # where the configured model's traffic was recorded


def applied_parameters(args: argparse.Namespace) -> dict[str, Any]:
    """The options that applied to the run: a configured model's run has no injected-error rates."""
    return parameters(args, skip=SIMULATED_ONLY if args.model == "configured" else CONFIGURED_ONLY)


def _header(args: argparse.Namespace) -> dict[str, Any]:
    """The results file's first fields: the store instead of ``gc_frozen``, and the parameters that applied."""
    return {
        "benchmark": "updates",
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "store": "sqlite",
        "parameters": applied_parameters(args),
    }


def judge(variants: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    targets = {}
    for name, figures in variants.items():
        p95 = figures["overhead_ms"]["p95"]
        target = f"{name}: pipeline overhead ≤ {OVERHEAD_TARGET_MS:.0f} ms/update (p95)"
        targets[f"overhead_{name}"] = judged(target, p95, p95 <= OVERHEAD_TARGET_MS, samples=figures["steps"])
        if figures["verified"]:
            steps = figures["violations"]["steps_with_any"]
            target = f"{name}: steps with a rule violation stored = 0"
            targets[f"violations_{name}"] = judged(target, steps, not steps, samples=figures["steps"])
            targets[f"detected_{name}"] = _detected(name, figures["errors"])
    return targets


def _detected(name: str, errors: dict[str, Any] | None) -> dict[str, Any]:
    """Refused / detectable injected errors; a model without injected errors (a real one) measures none."""
    target = f"{name}: detectable injected errors refused"
    if errors is None:
        return judged(target, "no injected errors (not the simulated model)", None)
    return judged_all(target, errors["answers_detected"], errors["answers_detectable"])


def _accuracy_table(results: dict[str, Any]) -> Table:
    variants = results["variants"]
    table = Table(title="memory accuracy against ground truth (fact Jaccard) after step")
    table.add_column("step", justify="right")
    for name in variants:
        table.add_column(name, justify="right")
    steps = next(iter(variants.values()))["steps"]
    marks = sorted({*range(10, steps + 1, 10), steps} - {0})
    for mark in marks:
        table.add_row(str(mark), *(f"{v['per_step']['accuracy'][mark - 1]:.4f}" for v in variants.values()))
    return table


STATUSES = ("applied", "noop", "rejected")
Cell = Callable[[dict[str, Any]], str]
ROWS: tuple[tuple[str, Cell], ...] = (
    ("state changes registered", lambda v: f"{100 * v['success_rate']:.1f}%"),
    ("final accuracy / exact steps", lambda v: f"{v['final_accuracy']:.4f} / {v['exact_steps']}"),
    ("prompt tokens per update", lambda v: f"{v['prompt_tokens_per_update']:,.0f}"),
    ("  per successful update", lambda v: f"{v['prompt_tokens_per_success'] or 0:,.0f}"),
    ("answers per update", lambda v: f"{v['attempts_per_update']:.2f}"),
    ("overhead mean / p50 / p95 ms", lambda v: "{mean:.1f} / {p50:.1f} / {p95:.1f}".format(**v["overhead_ms"])),
    (
        "applied / noop / rejected",
        lambda v: "/".join(str(v["status"].get(s, 0)) for s in ("applied", "noop", "rejected")),
    ),
    ("injected errors", lambda v: str(sum(v["errors"]["injected"].values())) if v["errors"] else NOT_MEASURED),
    ("  detectable / refused / written", lambda v: _errors(v["errors"])),
    ("steps with a rule violation", lambda v: str(v["violations"]["steps_with_any"])),
)


def _errors(errors: dict[str, Any] | None) -> str:
    if errors is None:
        return NOT_MEASURED
    return f"{errors['answers_detectable']} / {errors['answers_detected']} / {errors['answers_written']}"


def _model(results: dict[str, Any]) -> str:
    rate = results["parameters"].get("error_rate")
    return results["model"] if rate is None else f"{100 * rate:.0f}% injected errors (simulated model)"


def print_report(console: Console, results: dict[str, Any]) -> None:
    variants = results["variants"]
    entities, steps = results["home"]["entities"], results["parameters"]["steps"]
    table = Table(title=f"updates: {entities} entities, {steps} steps, {_model(results)}")
    table.add_column("measure")
    for name in variants:
        table.add_column(name, justify="right")
    for label, cell in ROWS:
        table.add_row(label, *(cell(v) for v in variants.values()))
    console.print(table)
    console.print(_accuracy_table(results))
    if "rs_token_reduction_vs_full" in results:
        ours = 100 * results["rs_token_reduction_vs_full"]
        console.print(
            f"RS uses {ours:.1f}% fewer prompt tokens per update than R- (paper: {100 * PAPER_RS_REDUCTION:.1f}%)"
        )
    console.print(targets_table("update targets", results["targets"].values()))
