"""Observations of what the robot perceives, and observations → deltas against the memory."""

from perception.delta import observation_delta, unseen_entities
from perception.observation import Observation, ObservedEntity

__all__ = ["Observation", "ObservedEntity", "observation_delta", "unseen_entities"]
