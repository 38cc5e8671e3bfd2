"""The update pipelines on simulated episodes: accuracy against ground truth, tokens, overhead and
error detection for R-, R+ and RS, with and without verification (paper Sec. V.A, Table I, Fig. 2, 4)."""

from experiments.update_eval.episode import VARIANTS, Lane, Step, Variant, run_episode
from experiments.update_eval.report import cumulative_success, summarize, summarize_lane
from experiments.update_eval.run import add_arguments, judge, run_updates

__all__ = [
    "VARIANTS",
    "Lane",
    "Step",
    "Variant",
    "add_arguments",
    "cumulative_success",
    "judge",
    "run_episode",
    "run_updates",
    "summarize",
    "summarize_lane",
]
