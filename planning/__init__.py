"""PDDL problems from retrieved facts, goal checking, planners through unified-planning,
validation against the full state and plan explanation. Built in the planning issue."""

__all__: list[str] = []
