"""The one place that maps domain errors (and rejected updates) to HTTP responses.

Every error body has the same shape: ``{"error": {"code", "message", "issues", "update"}}``.
The library never raises HTTP errors; routes raise :class:`Rejected` for a recorded rejection.
Every ``L3mpError`` has its own code (or a parent's, deliberately) and is a 4xx, or a 502/503 when
a model, the store or the embedder failed; anything else unexpected is a JSON 500 with a request id
that names the logged traceback, never a plain-text page.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kg_memory import (
    DomainError,
    HistoryCompacted,
    ImportMismatch,
    InvalidName,
    InvalidValue,
    KgMemoryError,
    L3mpError,
    MemoryExists,
    NotApplicable,
    StoreFailure,
    StoreUnavailable,
    UnbalancedParentheses,
    UnknownDomain,
    UnknownMemory,
    UnknownUpdate,
    VersionConflict,
)
from l3mp.llm import (
    DeadlinePassed,
    InvalidMessage,
    LLMError,
    MalformedOutput,
    ModelUnavailable,
    PromptTooLong,
)
from l3mp.llm.local import AssemblyFailed, LocalModelError, ModelNotInstalled, UnknownModel
from l3mp.llm.scoring import ScoringUnsupported
from l3mp.operations.errors import Overloaded, Rejected, ServiceError, TooLarge
from l3mp.operations.models import IssueOut
from l3mp.pipelines import AnswerProblem, DomainClash, ImportFailed, PipelineError
from l3mp.prompts import InvalidPromptInput
from l3mp.ros.errors import RosError, RosSessionError, RosTypeError
from l3mp.ros.plansys2_tree import TreeError
from l3mp.ros.wire import AttachmentError
from l3mp.service.schemas import ErrorBody, ErrorDetail
from perception import PerceptionError, ThorMetadataError
from planning import ExplainError, GoalSyntaxError, PlanningError, WorldError
from planning.deadline import EvaluationDeadlinePassed
from planning.pddl_io import PddlError, UnsupportedFeature
from retrieval import EmbeddingError, InvalidParameters, InvalidQuery, RetrievalError, UnknownRetriever

log = logging.getLogger(__name__)

RETRY_UNAVAILABLE = 5  # seconds, the Retry-After of a 503 for a store or model that is down


# (HTTP status, error code) per error class. An error takes the entry of the first class of its MRO
# that has one, so a subclass's own entry always wins over its parent's, whatever the order here.
# A class without an entry answers with its nearest mapped parent's (the model's stand-ins, the
# daemon's inbox): tests/l3mp/service/test_error_codes.py lists which, and why.
CODES: dict[type[Exception], tuple[int, str]] = {
    # the memory
    UnknownMemory: (404, "unknown_memory"),
    UnknownUpdate: (404, "unknown_update"),
    UnknownDomain: (404, "unknown_domain"),
    MemoryExists: (409, "memory_exists"),
    VersionConflict: (409, "version_conflict"),
    NotApplicable: (409, "not_applicable"),
    HistoryCompacted: (410, "history_compacted"),
    InvalidName: (422, "invalid_name"),
    InvalidValue: (422, "invalid_value"),
    ImportMismatch: (422, "import_mismatch"),
    DomainError: (422, "domain_error"),
    UnbalancedParentheses: (422, "unbalanced_parentheses"),
    StoreUnavailable: (503, "store_unavailable"),
    StoreFailure: (503, "store_failure"),
    KgMemoryError: (422, "memory_error"),
    # the service's own refusals (Rejected and Overloaded answer through their own handlers, with the
    # update's issues and the refusal's status, code and Retry-After)
    TooLarge: (413, "too_large"),
    Rejected: (422, "update_rejected"),
    Overloaded: (503, "busy"),
    ServiceError: (400, "refused"),
    # the language model
    ModelUnavailable: (503, "model_unavailable"),
    LocalModelError: (503, "local_model_unavailable"),
    UnknownModel: (404, "unknown_model"),
    ModelNotInstalled: (503, "model_not_installed"),
    AssemblyFailed: (503, "model_assembly_failed"),
    ScoringUnsupported: (502, "scoring_unsupported"),
    DeadlinePassed: (503, "model_deadline_passed"),
    PromptTooLong: (422, "prompt_too_long"),
    InvalidMessage: (422, "invalid_message"),
    MalformedOutput: (502, "malformed_model_output"),
    LLMError: (502, "model_error"),
    InvalidPromptInput: (422, "invalid_prompt_input"),
    # domains, imports and the pipelines
    DomainClash: (409, "domain_clash"),
    ImportFailed: (422, "import_failed"),
    AnswerProblem: (502, "unusable_model_answer"),
    PipelineError: (422, "pipeline_error"),
    # the ROS 2 door (never raised by a REST route; mapped so that none answers as a bare L3mpError)
    RosTypeError: (422, "ros_type_error"),
    TreeError: (422, "plansys2_tree_error"),
    AttachmentError: (422, "ros_attachment_error"),
    RosSessionError: (503, "ros_session_unavailable"),
    RosError: (503, "ros_unavailable"),
    # retrieval
    InvalidQuery: (422, "invalid_query"),
    InvalidParameters: (422, "invalid_retrieval_parameters"),
    UnknownRetriever: (422, "unknown_retriever"),
    EmbeddingError: (503, "embedding_unavailable"),
    RetrievalError: (422, "retrieval_error"),
    # planning
    EvaluationDeadlinePassed: (503, "plan_deadline_passed"),
    WorldError: (422, "world_error"),
    GoalSyntaxError: (422, "goal_syntax_error"),
    UnsupportedFeature: (422, "unsupported_pddl_feature"),
    PddlError: (422, "pddl_error"),
    ExplainError: (422, "explain_error"),
    PlanningError: (422, "planning_error"),
    # perception
    ThorMetadataError: (422, "thor_metadata_error"),
    PerceptionError: (422, "perception_error"),
    # any other error of ours (the simulator's, say) is about what was asked for
    L3mpError: (422, "invalid_input"),
}

# who may call the documented routes, for the OpenAPI schema
RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (401, "API key missing"),
        (403, "API key wrong, or read-only on a write"),
        (404, "unknown memory, update or domain"),
        (409, "the memory exists, or changed since it was read"),
        (413, "request body too large"),
        (422, "invalid input, or the update was rejected (recorded, with its issues)"),
        (503, "the store, the language model or the embedding model is unavailable"),
    )
}


# the model-bound routes' extra answers
BUSY_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {
        "model": ErrorBody,
        "description": description,
        "headers": {"Retry-After": {"schema": {"type": "integer"}}},
    }
    for status, description in (
        (429, "over the key's rate of model requests (see Retry-After)"),
        (503, "every model slot is busy, the request's deadline passed, or the model or store is down"),
    )
}


def error_response(
    status: int, code: str, message: str, issues: list[IssueOut] | None = None, **extra: Any
) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(code=code, message=message, issues=issues or [], **extra))
    return JSONResponse(status_code=status, content=jsonable_encoder(body, exclude_none=True))


def mapped_class(kind: type[BaseException]) -> type[Exception] | None:
    """The class whose entry in :data:`CODES` an error of ``kind`` answers with: the nearest in its MRO."""
    return next((cls for cls in kind.__mro__ if cls in CODES), None)


def status_of(exc: Exception) -> tuple[int, str]:
    mapped = mapped_class(type(exc))
    if mapped is None:
        return 500, "internal_error"  # not an L3mpError: see _unexpected
    return CODES[mapped]


async def _domain_error(request: Request, exc: Exception) -> JSONResponse:
    status, code = status_of(exc)
    if status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
    response = error_response(status, code, str(exc))
    if status == 503:  # the store or the model is down: worth a retry, not at once
        response.headers["Retry-After"] = str(RETRY_UNAVAILABLE)
    return response


async def _rejected(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Rejected)
    update = exc.update
    message = "; ".join(i.message for i in update.issues) or "the update was rejected"
    return error_response(422, "update_rejected", message, update.issues, update=update)


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
    if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeDecodeError | RecursionError):
        # FastAPI's 400 for a body its JSON decoder could not even start on: not UTF-8, or too deep
        return error_response(400, "malformed_json", f"the request body is not valid JSON ({exc.__cause__})")
    codes = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}
    response = error_response(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


async def _overloaded(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Overloaded)
    response = error_response(exc.status, exc.code, str(exc))
    response.headers["Retry-After"] = str(exc.retry_after)
    return response


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    """A bug or an untranslated library error: logged with its traceback under a request id."""
    request_id = uuid.uuid4().hex
    log.error("request %s: %s %s failed", request_id, request.method, request.url.path, exc_info=exc)
    message = f"an unexpected error; it was logged as request {request_id}"
    response = error_response(500, "internal_error", message, request_id=request_id)
    response.headers["X-Request-ID"] = request_id
    return response


def install(app: FastAPI) -> None:
    """Register every handler on ``app``."""
    app.add_exception_handler(Exception, _unexpected)
    app.add_exception_handler(Overloaded, _overloaded)
    app.add_exception_handler(Rejected, _rejected)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(L3mpError, _domain_error)
    app.add_exception_handler(TooLarge, _domain_error)
