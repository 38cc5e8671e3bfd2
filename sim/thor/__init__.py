"""AI2-THOR in the lab: :class:`ThorEnvironment` (the runtime's Environment on a real
``ai2thor.controller.Controller``), recorded-session replay, and a stand-in for the Unity side that
speaks ai2thor's FIFO protocol (replaying recordings, or scripted state: not THOR physics)."""

from sim.thor.environment import ThorConfig, ThorEnvironment, action_dicts
from sim.thor.replay import ReplayResult, StepCheck, replay_trace

__all__ = ["ReplayResult", "StepCheck", "ThorConfig", "ThorEnvironment", "action_dicts", "replay_trace"]
