"""Planning benchmark: the planning pipeline (RS retrieval, goal check, tiers validated against the
full state) against Fast Downward on the full state, at paper scale, 2,000 and 10,000 entities; the
paper's Fig. 3 as a PNG. The same as ``l3mp bench planning`` (see ``experiments.plan_eval``).

    .venv/bin/python -m experiments.planning [--paper-tasks 12] [--mid-tasks 3] [--large-tasks 3]
        [--out experiments/results/planning.json] [--plot experiments/results/planning.png]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console

from experiments._common import description
from experiments.plan_eval import add_arguments, run_planning


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.planning", description=description(__doc__))
    add_arguments(parser)
    run_planning(parser.parse_args(argv), Console())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
