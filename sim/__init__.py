"""The lab's worlds. The text household simulator (L3M+P Sec. V.A): a generated home as
ground truth, human events reported in English, tasks with reference plans, robot
actions executed and judged, and deterministic episodes; its Environment and simulated
language model are in ``sim.environment`` and ``sim.model``. AI2-THOR is in ``sim.thor``."""

from sim.episode import Episode, EpisodeConfig, generate_episode, read_episode, summarize, write_episode
from sim.errors import EpisodeFormatError, InvalidHomeSpec, ObservationError, SimulationError
from sim.events import Event, EventGenerator
from sim.household import Home, HomeSpec, generate_home
from sim.observe import observe
from sim.simulator import Judgement, PlannedTask, Simulator
from sim.tasks import TASK_KINDS, Task, TaskGenerator

__all__ = [
    "TASK_KINDS",
    "Episode",
    "EpisodeConfig",
    "EpisodeFormatError",
    "Event",
    "EventGenerator",
    "Home",
    "HomeSpec",
    "Judgement",
    "PlannedTask",
    "InvalidHomeSpec",
    "ObservationError",
    "SimulationError",
    "Simulator",
    "Task",
    "TaskGenerator",
    "generate_episode",
    "generate_home",
    "observe",
    "read_episode",
    "summarize",
    "write_episode",
]
