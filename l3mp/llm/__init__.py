"""Language models: one protocol, an OpenAI-compatible client, cassettes, a scripted double and a
simulated model answering from the household simulator's ground truth."""

from l3mp.llm.base import (
    Completion,
    InvalidMessage,
    LanguageModel,
    LLMError,
    MalformedOutput,
    Message,
    ModelUnavailable,
    Usage,
)
from l3mp.llm.cassette import CassetteError, CassettePlayer, CassetteRecorder, UnrecordedRequest, request_key
from l3mp.llm.openai_client import OpenAICompatibleModel
from l3mp.llm.scripted import ScriptedModel, ScriptExhausted
from l3mp.llm.simulated import (
    ERROR_KINDS,
    ErrorRates,
    InjectedError,
    InvalidErrorRates,
    NoGroundTruth,
    SimulatedModel,
)

__all__ = [
    "ERROR_KINDS",
    "CassetteError",
    "CassettePlayer",
    "CassetteRecorder",
    "Completion",
    "ErrorRates",
    "InjectedError",
    "InvalidErrorRates",
    "InvalidMessage",
    "LLMError",
    "LanguageModel",
    "MalformedOutput",
    "Message",
    "ModelUnavailable",
    "NoGroundTruth",
    "OpenAICompatibleModel",
    "ScriptExhausted",
    "ScriptedModel",
    "SimulatedModel",
    "UnrecordedRequest",
    "Usage",
    "request_key",
]
