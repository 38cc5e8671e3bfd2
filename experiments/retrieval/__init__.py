"""Retrieval benchmark: full, entity selection and search (RS) on simulator episodes: recall and
precision of the facts each request needs, context tokens against the full graph's, latency (no
language model) and entity re-embedding, at paper scale with descriptive and with ``object_N`` names
and on a 10,000-entity home.

Every step of an episode is a request a retriever must serve. For a human event the context
must hold the facts the true delta removes (a model can only remove what it sees); for a task,
the facts about the goal's entities and where they are (an item's ``on``/``inside``/``in_hand``/
``held`` fact and the ``in_room``/``person_in`` fact of what holds it). Each retriever gets the
request as it would from a language model: ``full`` nothing, ``entities`` the true entity names,
``search`` a query graph derived from the truth with a model's noise (labels instead of names,
synonyms and shortened labels, types left out, relations paraphrased or missing), seeded.

The memory is a perception survey of the home kept in step with the truth: after retrieval,
each event's true delta is applied as a language update, so what is measured is retrieval, not
a model. Latency is the ``retrieve`` call (no model); for ``search`` it includes embedding the
query's texts the first time they occur, which is also reported separately.

    python -m experiments retrieval [--seed 0] [--episodes 2] [--steps 100] [--entities 10000]
        [--large-steps 50] [--stores sqlite,neo4j] [--out experiments/results/retrieval.json]
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from experiments.harness import RESULTS, Benchmark
from experiments.retrieval.episodes import RETRIEVER_NAMES, Scale, judge, run_scale, scales
from experiments.retrieval.probes import Probe, event_needed, event_probe, next_probe, task_probe
from experiments.retrieval.run import add_arguments, run_retrieval
from sim.model.queries import Noise, mention, query_graph


def main(argv: Sequence[str] | None = None) -> int:
    parser = BENCHMARK.parser(__doc__)
    add_arguments(parser)
    run_retrieval(parser.parse_args(argv), Console())
    return 0


BENCHMARK = Benchmark(name="retrieval", results=RESULTS / "retrieval.json", main=main)

__all__ = [
    "BENCHMARK",
    "Noise",
    "Probe",
    "RETRIEVER_NAMES",
    "Scale",
    "add_arguments",
    "event_needed",
    "event_probe",
    "judge",
    "main",
    "mention",
    "next_probe",
    "query_graph",
    "run_retrieval",
    "run_scale",
    "scales",
    "task_probe",
]
