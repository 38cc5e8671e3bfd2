"""Update benchmark: the natural-language pipeline's six variants (R-, R+, RS; with and without
verification) on a paper-scale simulated episode with the simulated model's injected errors.

Per update: the pipeline's own time (model latency excluded) and prompt tokens; per step: memory
accuracy against the ground truth; and how many injected errors verification refused. The same as
``l3mp bench updates`` (see ``experiments.update_eval``).

    .venv/bin/python -m experiments.updates [--seed 0] [--steps 100] [--error-rate 0.2]
        [--out experiments/results/updates.json]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console

from experiments._common import description
from experiments.update_eval import add_arguments, run_updates


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.updates", description=description(__doc__))
    add_arguments(parser)
    run_updates(parser.parse_args(argv), Console())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
