"""Language models: one protocol, an OpenAI-compatible client, cassettes and a scripted double.

The simulated model, which answers from the household simulator's ground truth, is the lab's
(``sim.model``): the product never loads it.
"""

from l3mp.llm._json import parse_json
from l3mp.llm.base import (
    Completion,
    Deadline,
    DeadlinePassed,
    InvalidMessage,
    LanguageModel,
    LLMError,
    MalformedOutput,
    Message,
    ModelUnavailable,
    PromptTooLong,
    Usage,
)
from l3mp.llm.cassette import CassetteError, CassettePlayer, CassetteRecorder, UnrecordedRequest, request_key
from l3mp.llm.openai_client import OpenAICompatibleModel
from l3mp.llm.scripted import ScriptedModel, ScriptExhausted

__all__ = [
    "CassetteError",
    "CassettePlayer",
    "CassetteRecorder",
    "Completion",
    "Deadline",
    "DeadlinePassed",
    "InvalidMessage",
    "LLMError",
    "LanguageModel",
    "MalformedOutput",
    "Message",
    "ModelUnavailable",
    "OpenAICompatibleModel",
    "PromptTooLong",
    "ScriptExhausted",
    "ScriptedModel",
    "UnrecordedRequest",
    "Usage",
    "parse_json",
    "request_key",
]
