"""The paper's Figs. 2-4 as PNG files (matplotlib, no display), each titled with the model's name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FIG2, FIG3, FIG4 = "table1_fig2_state_changes.png", "table1_fig3_planner_time.png", "table1_fig4_tokens.png"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # write files; never open a window
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, figure: Any, path: Path) -> Path:
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def fig2(results: dict[str, Any], path: Path) -> Path:
    """Cumulative state-change success after each step, per variant: the seeds' mean and 95% CI band."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(8, 4.5))
    for name, summary in results["summary"].items():
        curve = summary["cumulative_success"]
        steps = range(1, len(curve) + 1)
        means = [100 * c["mean"] for c in curve]
        (line,) = axes.plot(steps, means, label=name)
        if all(c["ci95"] is not None for c in curve):
            low = [m - 100 * c["ci95"] for m, c in zip(means, curve, strict=True)]
            high = [m + 100 * c["ci95"] for m, c in zip(means, curve, strict=True)]
            axes.fill_between(steps, low, high, color=line.get_color(), alpha=0.12)
    axes.set_xlabel("state change")
    axes.set_ylabel("cumulative success %")
    axes.set_ylim(0, 102)
    axes.legend(ncols=3, loc="lower right")
    axes.set_title(f"Fig. 2: state changes registered exactly\nmodel: {results['model']}", fontsize=10)
    return _save(plt, figure, path)


def fig3(timed: dict[str, Any], path: Path) -> Path:
    """Seconds per task: RSV's pipeline (retrieval included) vs the planner alone on the full true state."""
    plt = _pyplot()
    pairs = timed["fig3"]["pairs"]
    series = [[p["pipeline_s"] for p in pairs], [p["full_state_s"] for p in pairs if p["full_status"] == "solved"]]
    figure, axes = plt.subplots(figsize=(6, 4.5))
    if pairs:
        axes.boxplot(series, tick_labels=["RSV pipeline\n(retrieval + planner)", "planner on the\nfull true state"])
        axes.set_yscale("log")
    else:
        axes.text(0.5, 0.5, "RSV solved no task", ha="center", transform=axes.transAxes)
    axes.set_ylabel("seconds per task (log)")
    speedup = timed["fig3"]["speedup_mean"]
    note = f", {speedup:.1f}x faster on average" if speedup else ""
    axes.set_title(f"Fig. 3: tasks RSV solved ({len(pairs)}){note}\nmodel: {timed['model']}", fontsize=10)
    return _save(plt, figure, path)


def fig4(results: dict[str, Any], path: Path) -> Path:
    """Distributions of tokens (prompt + completion) per successful state change, per variant."""
    plt = _pyplot()
    names = list(results["summary"])
    series = [
        [t for seed in results["seeds"].values() for t in seed["variants"][name]["tokens_of_successful_changes"]]
        for name in names
    ]
    figure, axes = plt.subplots(figsize=(8, 4.5))
    axes.boxplot([s or [0] for s in series], tick_labels=names, showfliers=False)
    axes.set_ylabel("tokens per successful state change")
    axes.set_title(f"Fig. 4: tokens per successful state change\nmodel: {results['model']}", fontsize=10)
    return _save(plt, figure, path)


def write_figures(results: dict[str, Any], timed: dict[str, Any], folder: Path) -> list[Path]:
    return [fig2(results, folder / FIG2), fig3(timed, folder / FIG3), fig4(results, folder / FIG4)]
