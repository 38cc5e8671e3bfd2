"""Update pipelines: what people say (Alg. 3) and what the robot senses, into verified memory updates."""

from l3mp.updates.nl import NLUpdateConfig, NLUpdater, NLUpdateResult
from l3mp.updates.sensor import SensorResult, SensorUpdater

__all__ = ["NLUpdateConfig", "NLUpdateResult", "NLUpdater", "SensorResult", "SensorUpdater"]
