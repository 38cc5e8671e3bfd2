"""What the operations refuse before any domain work: too large, rejected, overloaded (the doors map
each to their own answer: an HTTP status, an MCP tool error)."""

from __future__ import annotations

from kg_memory import L3mpError
from l3mp.operations.models import UpdateOut


class ServiceError(L3mpError):
    """The service refuses a request before any domain work: too large, rejected, overloaded."""


class TooLarge(ServiceError):
    """A streamed request body went over its route's limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the request body exceeds {limit} bytes")


class Rejected(ServiceError):
    """An update was verified, found wrong and recorded as rejected: the state is untouched."""

    def __init__(self, update: UpdateOut) -> None:
        self.update = update
        super().__init__(f"update {update.id} was rejected")


class Overloaded(ServiceError):
    """The service refuses work for now (busy, rate-limited, past its deadline): retry after ``retry_after`` s."""

    def __init__(self, status: int, code: str, message: str, retry_after: int) -> None:
        self.status = status
        self.code = code
        self.retry_after = retry_after
        super().__init__(message)
