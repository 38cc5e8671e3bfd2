"""Prompts, one module per task: typed inputs, ``render(inputs) -> list[Message]``, the answer's shape
as a JSON schema (OpenAI strict mode) ``SCHEMA``, and for the prompts over a context ``schema(inputs)``,
the same shape with the request's words (:mod:`l3mp.prompts.schemas`). Their system messages depend on
the domain only, so servers cache them; the request is the last user message.
"""

from l3mp.prompts import entity_selection, goal, mentions, query_graph, schemas, stages, state_change
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
    "schemas",
    "stages",
    "state_change",
]
