"""Prompts, one module per task: typed inputs, ``render(inputs) -> list[Message]`` and the answer's
JSON schema (OpenAI strict mode) as ``SCHEMA``.
"""

from l3mp.prompts import entity_selection, goal, query_graph, state_change
from l3mp.prompts._common import ISSUES_HEADER, InvalidPromptInput, follow_up
from l3mp.prompts.entity_selection import EntitySelectionInput
from l3mp.prompts.goal import GoalInput
from l3mp.prompts.query_graph import QueryGraphInput
from l3mp.prompts.state_change import StateChangeInput

__all__ = [
    "ISSUES_HEADER",
    "EntitySelectionInput",
    "GoalInput",
    "InvalidPromptInput",
    "QueryGraphInput",
    "StateChangeInput",
    "entity_selection",
    "follow_up",
    "goal",
    "query_graph",
    "state_change",
]
