"""The simulated (oracle) language model: answers the project's prompts from the household
simulator's ground truth with injected errors, and the query-graph answer keys it draws on.
Every completion it gives is labelled as simulated."""

from sim.model._prompt import NoGroundTruth
from sim.model.queries import DEFAULT_NOISE, Noise, event_query, task_names, task_query
from sim.model.simulated import ERROR_KINDS, ErrorRates, InjectedError, InvalidErrorRates, SimulatedModel

__all__ = [
    "DEFAULT_NOISE",
    "ERROR_KINDS",
    "ErrorRates",
    "InjectedError",
    "InvalidErrorRates",
    "NoGroundTruth",
    "Noise",
    "SimulatedModel",
    "event_query",
    "task_names",
    "task_query",
]
