"""Planning from memory: PDDL problems from facts, context pruning, classical planners
through unified-planning, and our fast action evaluator (the ground truth of what a plan
does), goal checking, tiered planning validated against the full state, and explanations."""

from planning.errors import PlanningError
from planning.evaluator import ActionEvaluator, GroundAction, PlanRun, StepOutcome
from planning.explain import ExplainError, explain, numbered
from planning.goal_checker import GoalCheck, check_goal
from planning.goal_reader import GoalSyntaxError, parse_goal
from planning.planner import (
    DEFAULT_PLANNER,
    OPTIMAL_PLANNER,
    PlanResult,
    PlanStatus,
    available_planners,
    check_readable,
    solve,
)
from planning.problem import Context, full_context, goal_objects, goal_types, problem_pddl, pruned_context
from planning.shared import SolveMemo, shared_solves
from planning.tiers import TIERS, TierAttempt, TieredPlan, TieredPlanner
from planning.world import World, WorldError

__all__ = [
    "DEFAULT_PLANNER",
    "TIERS",
    "ActionEvaluator",
    "Context",
    "ExplainError",
    "GoalCheck",
    "GoalSyntaxError",
    "GroundAction",
    "PlanRun",
    "PlanResult",
    "PlanStatus",
    "PlanningError",
    "StepOutcome",
    "TierAttempt",
    "TieredPlan",
    "TieredPlanner",
    "World",
    "WorldError",
    "available_planners",
    "check_goal",
    "explain",
    "full_context",
    "goal_objects",
    "goal_types",
    "numbered",
    "parse_goal",
    "problem_pddl",
    "pruned_context",
    "solve",
    "shared_solves",
    "SolveMemo",
    "check_readable",
    "OPTIMAL_PLANNER",
]
