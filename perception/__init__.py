"""Observations of what the robot perceives, and observations → deltas against the memory; AI2-THOR's
metadata as observations of the ``thor`` domain."""

from perception.checks import observation_issues
from perception.delta import observation_delta, unseen_entities
from perception.errors import PerceptionError, ThorMetadataError
from perception.observation import Observation, ObservedEntity
from perception.thor import ThorNames, fits_table, label_of, scene_objects, thor_facts, thor_observation

__all__ = [
    "Observation",
    "ObservedEntity",
    "PerceptionError",
    "ThorMetadataError",
    "ThorNames",
    "fits_table",
    "label_of",
    "observation_delta",
    "observation_issues",
    "scene_objects",
    "thor_facts",
    "thor_observation",
    "unseen_entities",
]
