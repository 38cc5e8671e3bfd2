"""How the runtime runs: its budgets per task, its pipelines' settings, and whether the world is open."""

from __future__ import annotations

from dataclasses import dataclass, field

from kg_memory.errors import InvalidValue
from l3mp.pipelines import NLUpdateConfig
from l3mp.pipelines.plans import PlanConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeConfig:
    max_replans: int = 3  # per task
    max_actions: int = 60  # per task, over all its plans
    max_reports: int = 20  # read per drain; the rest wait for the next one
    update: NLUpdateConfig = field(default_factory=lambda: NLUpdateConfig(retriever="full"))
    plan: PlanConfig = field(default_factory=lambda: PlanConfig(retriever="full"))
    # open world (l3mp.runtime.open_world): ask, explore for unknown locations, split into stages
    open_world: bool = False
    max_explorations: int = 8  # exploration sub-goals per task
    max_stage_depth: int = 2  # how deep stages may be split again

    def __post_init__(self) -> None:
        if self.max_explorations < 0 or self.max_stage_depth < 0:
            raise InvalidValue("runtime config", self, "max_explorations and max_stage_depth must be ≥ 0")
        if self.max_replans < 0 or self.max_actions < 1 or self.max_reports < 1:
            raise InvalidValue("runtime config", self, "max_replans must be ≥ 0, max_actions and max_reports ≥ 1")
