"""The three retrievers on simulator episodes (issue 4, item 6): recall, precision, size, latency.

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
"""

from experiments._shared import open_store
from experiments.retrieval_eval.probes import Probe, event_needed, event_probe, next_probe, task_probe
from experiments.retrieval_eval.run import RETRIEVER_NAMES, Scale, judge, run_scale, scales
from sim.model.queries import Noise, mention, query_graph

__all__ = [
    "Noise",
    "Probe",
    "RETRIEVER_NAMES",
    "Scale",
    "event_needed",
    "event_probe",
    "judge",
    "mention",
    "next_probe",
    "open_store",
    "query_graph",
    "run_scale",
    "scales",
    "task_probe",
]
