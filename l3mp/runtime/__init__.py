"""The robot runtime: perceive, read reports, plan, execute, monitor and replan against an environment."""

from l3mp.runtime.config import RuntimeConfig
from l3mp.runtime.environment import Environment, TaskRequest
from l3mp.runtime.inbox import InboxError, read_inbox
from l3mp.runtime.open_world import OpenWorld
from l3mp.runtime.records import (
    ActionRecord,
    ExplorationOutcome,
    ExplorationRecord,
    PlanRecord,
    ReplanCause,
    ReplanRecord,
    RunReport,
    Stage,
    StepRecord,
    TaskRecord,
    TaskStatus,
    UpdateRecord,
)
from l3mp.runtime.runtime import CHECKPOINT_KEY, Runtime, jaccard, resume_step
from l3mp.runtime.task_loop import ClosedWorld, TaskLoop, TaskPlanning

__all__ = [
    "CHECKPOINT_KEY",
    "ActionRecord",
    "ClosedWorld",
    "Environment",
    "ExplorationOutcome",
    "ExplorationRecord",
    "InboxError",
    "OpenWorld",
    "PlanRecord",
    "ReplanCause",
    "ReplanRecord",
    "RunReport",
    "Runtime",
    "RuntimeConfig",
    "Stage",
    "StepRecord",
    "TaskLoop",
    "TaskPlanning",
    "TaskRecord",
    "TaskRequest",
    "TaskStatus",
    "UpdateRecord",
    "jaccard",
    "read_inbox",
    "resume_step",
]
