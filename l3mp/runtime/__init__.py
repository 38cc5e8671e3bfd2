"""The robot runtime: perceive, read reports, plan, execute, monitor and replan against an environment."""

from l3mp.runtime.environment import Disturbance, Environment, MoveTarget, SimEnvironment, TaskRequest, relocate
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
    "Disturbance",
    "Environment",
    "MoveTarget",
    "PlanRecord",
    "ReplanCause",
    "ReplanRecord",
    "RunReport",
    "Runtime",
    "RuntimeConfig",
    "SimEnvironment",
    "StepRecord",
    "TaskRecord",
    "TaskRequest",
    "TaskStatus",
    "UpdateRecord",
    "jaccard",
    "relocate",
    "resume_step",
]
