"""One set of typed operations over l3mp's memories, served alike by every door (REST, MCP, ...)."""

from l3mp.operations.errors import Overloaded, Rejected, ServiceError, TooLarge
from l3mp.operations.gate import ModelGate, client_key
from l3mp.operations.ops import Operations
from l3mp.operations.services import Services

__all__ = [
    "ModelGate",
    "Operations",
    "Overloaded",
    "Rejected",
    "ServiceError",
    "Services",
    "TooLarge",
    "client_key",
]
