"""The planning package's root error; each leaf is defined beside the code that raises it."""

from __future__ import annotations

from kg_memory.errors import L3mpError


class PlanningError(L3mpError):
    """Misuse of the planning package (an unknown planner, a problem that does not parse)."""
