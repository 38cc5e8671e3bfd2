"""Planning from memory: PDDL problems from facts, context pruning, classical planners
through unified-planning, and our fast action evaluator (the ground truth of what a plan
does). Goal checking from English and tiered replanning come with the planning issue."""

from planning.evaluator import ActionEvaluator, GroundAction, PlanOutcome, StepOutcome
from planning.planner import DEFAULT_PLANNER, PlanningError, PlanResult, PlanStatus, solve
from planning.problem import Context, full_context, goal_objects, goal_types, problem_pddl, pruned_context
from planning.world import World, WorldError

__all__ = [
    "DEFAULT_PLANNER",
    "ActionEvaluator",
    "Context",
    "GroundAction",
    "PlanOutcome",
    "PlanResult",
    "PlanStatus",
    "PlanningError",
    "StepOutcome",
    "World",
    "WorldError",
    "full_context",
    "goal_objects",
    "goal_types",
    "problem_pddl",
    "pruned_context",
    "solve",
]
