"""Prompts, one module per task: typed inputs, ``render(inputs) -> list[Message]`` and the answer's
JSON schema (OpenAI strict mode) as ``SCHEMA``.
"""

from l3mp.prompts import entity_selection, goal, mentions, query_graph, stages, state_change
from l3mp.prompts._common import ISSUES_HEADER, InvalidPromptInput, follow_up
from l3mp.prompts.entity_selection import EntitySelectionInput
from l3mp.prompts.goal import GoalInput
from l3mp.prompts.mentions import MentionsInput
from l3mp.prompts.query_graph import QueryGraphInput
from l3mp.prompts.stages import StagesInput
from l3mp.prompts.state_change import StateChangeInput

__all__ = [
    "ISSUES_HEADER",
    "EntitySelectionInput",
    "GoalInput",
    "InvalidPromptInput",
    "MentionsInput",
    "QueryGraphInput",
    "StagesInput",
    "StateChangeInput",
    "entity_selection",
    "follow_up",
    "goal",
    "mentions",
    "query_graph",
    "stages",
    "state_change",
]
