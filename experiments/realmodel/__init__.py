"""Real-model benchmark: how well a packaged local model (llama.cpp) turns what residents say into
memory edits, and their requests into goals, on hand-written data about the surveyed household home
(tests/fixtures/realmodel: a first set and a held-out set written later by someone else).

Lanes: each model and thread count, each reading configuration: choose+likelihood (the domain's
readings, the model's likelihood of each breaking close ties, scored through the server's /v1/score:
the settings' default reader and ranker, the lane the targets judge), choose+choice (the model copies
out the reading it picks), choose+none (the report's words alone, once, no model), write (the model
writes the edits under the per-request schema). Each report is read into one update of the surveyed
home and undone after; outcomes exact, partial, wrong, rejected, noop. Each request's goal (chosen, or
written by the planner's goal stage) is right, wrong or none. Also the server's time to the first
token, cold and warm.

By default (what ``python -m experiments`` runs) only choose+likelihood and choose+none, on the
default packaged model at one thread: well under a minute. The other models, thread counts and
configurations are opt-in; write is the slow one (several model calls per update: over half an hour
for both sets).

    python -m experiments realmodel [--models smollm2-135m,gemma3-270m] [--threads 1,2]
        [--configs choose+likelihood,choose+choice,choose+none,write] [--limit N]
        [--record DIR | --replay DIR] [--merge] [--out experiments/results/realmodel.json]

--record keeps each lane's chat completions (and a likelihood lane's scores) as cassettes, with the
client's output mode in modes.json beside them; --replay reads a lane from them, with no server.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from experiments.harness import RESULTS, Benchmark
from experiments.realmodel.run import add_arguments, run_benchmark


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    add_arguments(parser)
    run_benchmark(parser.parse_args(argv), Console())
    return 0


BENCHMARK = Benchmark(name="realmodel", results=RESULTS / "realmodel.json", main=main)

__all__ = ["BENCHMARK", "main", "run_benchmark"]
