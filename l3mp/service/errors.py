"""The one place that maps domain errors (and rejected updates) to HTTP responses.

Every error body has the same shape: ``{"error": {"code", "message", "issues", "update"}}``.
The library never raises HTTP errors; routes raise :class:`Rejected` for a recorded rejection.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kg_memory import (
    ImportMismatch,
    InvalidName,
    InvalidValue,
    L3mpError,
    MemoryExists,
    StoreUnavailable,
    UnknownDomain,
    UnknownMemory,
    UnknownUpdate,
    Update,
    VersionConflict,
)
from kg_memory.history import HistoryCompacted
from l3mp.llm import LLMError, ModelUnavailable
from l3mp.service.schemas import ErrorBody, ErrorDetail, IssueOut, UpdateOut
from retrieval.errors import RetrievalError

log = logging.getLogger(__name__)


class TooLarge(Exception):
    """A streamed request body went over its route's limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the request body exceeds {limit} bytes")


class Rejected(Exception):
    """An update was verified, found wrong and recorded as rejected: the state is untouched."""

    def __init__(self, update: Update) -> None:
        self.update = update
        super().__init__(f"update {update.id} was rejected")


# (exception class, HTTP status, error code), most specific first
_MAPPING: tuple[tuple[type[Exception], int, str], ...] = (
    (UnknownMemory, 404, "unknown_memory"),
    (UnknownUpdate, 404, "unknown_update"),
    (UnknownDomain, 404, "unknown_domain"),
    (MemoryExists, 409, "memory_exists"),
    (VersionConflict, 409, "version_conflict"),
    (HistoryCompacted, 410, "history_compacted"),
    (TooLarge, 413, "too_large"),
    (StoreUnavailable, 503, "store_unavailable"),
    (ModelUnavailable, 503, "model_unavailable"),
    (LLMError, 502, "model_error"),
    (InvalidName, 422, "invalid_name"),
    (InvalidValue, 422, "invalid_value"),
    (ImportMismatch, 422, "import_mismatch"),
    (RetrievalError, 422, "retrieval_error"),
)

# who may call the documented routes, for the OpenAPI schema
RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (401, "API key missing"),
        (403, "API key wrong, or read-only on a write"),
        (404, "unknown memory, update or domain"),
        (413, "request body too large"),
        (422, "invalid input, or the update was rejected (recorded, with its issues)"),
        (503, "the store or the language model is unavailable"),
    )
}


def error_response(
    status: int, code: str, message: str, issues: list[IssueOut] | None = None, **extra: Any
) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(code=code, message=message, issues=issues or [], **extra))
    return JSONResponse(status_code=status, content=jsonable_encoder(body, exclude_none=True))


def status_of(exc: Exception) -> tuple[int, str]:
    for kind, status, code in _MAPPING:
        if isinstance(exc, kind):
            return status, code
    return 500, "internal_error"


async def _domain_error(request: Request, exc: Exception) -> JSONResponse:
    status, code = status_of(exc)
    if status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
    return error_response(status, code, str(exc))


async def _rejected(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Rejected)
    update = exc.update
    issues = [IssueOut.of(i) for i in update.issues]
    message = "; ".join(i.message for i in update.issues) or "the update was rejected"
    return error_response(422, "update_rejected", message, issues, update=UpdateOut.of(update))


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return error_response(400, "malformed_json", "the request body is not valid JSON")
    issues = [
        IssueOut(code="validation", message=f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}")
        for e in errors
    ]
    return error_response(422, "invalid_request", "the request does not match the schema", issues)


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    codes = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}
    response = error_response(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


def install(app: FastAPI) -> None:
    """Register every handler on ``app``."""
    app.add_exception_handler(Rejected, _rejected)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(L3mpError, _domain_error)
    app.add_exception_handler(TooLarge, _domain_error)
