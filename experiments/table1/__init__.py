"""The paper's Table I experiment, whole: six variants on identical simulated episodes, their
state changes judged exactly and their plans judged in the true world, over several seeds, with
Figs. 2-4 (L3M+P Sec. V.A). ``python -m experiments table1``, the same as ``l3mp bench table1``.

    python -m experiments table1 [--seeds 3] [--jobs 3] [--steps 100] [--task-every 5] [--error-rate 0.2]
        [--model simulated|configured] [--record DIR | --replay DIR] [--no-share]
        [--out experiments/results/table1.json] [--figures docs/figures]
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from experiments.harness import RESULTS, Benchmark
from experiments.table1.episode import LaneRun, SeedRun, Table1Config, lanes_heard_the_same, run_seed
from experiments.table1.judge import OUTCOMES, PlanJudgement, judge_plan
from experiments.table1.models import ModelSource, ReplayError
from experiments.table1.report import PAPER, markdown, outcomes, seed_figures, stat, timings
from experiments.table1.run import add_arguments, run_table1


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    add_arguments(parser)
    run_table1(parser.parse_args(argv), Console())
    return 0


BENCHMARK = Benchmark(name="table1", results=RESULTS / "table1.json", main=main)


__all__ = [
    "BENCHMARK",
    "OUTCOMES",
    "PAPER",
    "LaneRun",
    "ModelSource",
    "PlanJudgement",
    "ReplayError",
    "SeedRun",
    "Table1Config",
    "add_arguments",
    "judge_plan",
    "lanes_heard_the_same",
    "main",
    "markdown",
    "outcomes",
    "run_seed",
    "run_table1",
    "seed_figures",
    "stat",
    "timings",
]
