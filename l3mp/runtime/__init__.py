"""The robot runtime: perceive, read reports, plan, execute, monitor and replan against an environment."""

from l3mp.runtime.environment import Environment, TaskRequest
from l3mp.runtime.inbox import InboxError, read_inbox
from l3mp.runtime.records import (
    ActionRecord,
    PlanRecord,
    ReplanCause,
    ReplanRecord,
    RunReport,
    StepRecord,
    TaskRecord,
    TaskStatus,
    UpdateRecord,
)
from l3mp.runtime.runtime import CHECKPOINT_KEY, Runtime, RuntimeConfig, jaccard, resume_step

__all__ = [
    "CHECKPOINT_KEY",
    "ActionRecord",
    "Environment",
    "InboxError",
    "PlanRecord",
    "ReplanCause",
    "ReplanRecord",
    "RunReport",
    "Runtime",
    "RuntimeConfig",
    "StepRecord",
    "TaskRecord",
    "TaskRequest",
    "TaskStatus",
    "UpdateRecord",
    "jaccard",
    "read_inbox",
    "resume_step",
]
