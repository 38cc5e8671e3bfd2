"""Update benchmark: the natural-language pipeline's six variants (R-, R+, RS; with and without
verification) on a paper-scale simulated episode, with the simulated model's injected errors or the
configured model (paper Sec. V.A, Table I, Figs. 2 and 4).

Per update: the pipeline's own time (model latency excluded) and prompt tokens; per step: memory
accuracy against the ground truth; and how many injected errors verification refused.

    python -m experiments updates [--seed 0] [--steps 100] [--error-rate 0.2]
        [--model simulated|configured] [--out experiments/results/updates.json]
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from experiments.harness import RESULTS, Benchmark
from experiments.updates.episode import VARIANTS, Lane, Step, Variant, run_episode
from experiments.updates.report import cumulative_success, summarize, summarize_lane
from experiments.updates.run import add_arguments, judge, run_updates


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    add_arguments(parser)
    run_updates(parser.parse_args(argv), Console())
    return 0


BENCHMARK = Benchmark(name="updates", results=RESULTS / "updates.json", main=main)

__all__ = [
    "BENCHMARK",
    "VARIANTS",
    "Lane",
    "Step",
    "Variant",
    "add_arguments",
    "cumulative_success",
    "judge",
    "main",
    "run_episode",
    "run_updates",
    "summarize",
    "summarize_lane",
]
