"""Observations and, with the updates issue, observations → deltas against the memory."""

from perception.observation import Observation, ObservedEntity

__all__ = ["Observation", "ObservedEntity"]
