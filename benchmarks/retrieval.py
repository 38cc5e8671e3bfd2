"""Retrieval benchmark: full, entity selection and search (RS) on simulator episodes.

Recall and precision of the facts each request needs, context tokens against the full graph's,
latency (no language model) and entity re-embedding, at paper scale with descriptive and with
``object_N`` names and on a 10,000-entity home; the same as ``l3mp bench retrieval``
(see ``l3mp.experiments.retrieval_eval``).

    .venv/bin/python -m benchmarks.retrieval [--seed 0] [--episodes 2] [--steps 100] [--entities 10000]
        [--large-steps 50] [--stores sqlite,neo4j] [--out benchmarks/results/retrieval.json]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from rich.console import Console

from benchmarks._common import description
from l3mp import bench_cli


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.retrieval", description=description(__doc__))
    bench_cli.add_retrieval_arguments(parser)
    bench_cli.run_retrieval(parser.parse_args(argv), Console())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
