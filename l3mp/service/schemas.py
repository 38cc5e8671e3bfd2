"""The REST service's own bodies: errors, the dashboard's graph and health (the operations' requests
and answers are in :mod:`l3mp.operations.models`)."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

from l3mp.operations.models import IssueOut, UpdateOut

# -- errors ---------------------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    code: str
    message: str
    issues: list[IssueOut] = Field(default_factory=list)
    update: UpdateOut | None = Field(default=None, description="the recorded update, when one was rejected")
    request_id: str | None = Field(default=None, description="names the logged traceback of an unexpected error")


class ErrorBody(BaseModel):
    error: ErrorDetail


# -- dashboard ------------------------------------------------------------------------------------
# The graph payload is columnar: one list per named field, row i of each describing the same entity
# (or fact). Objects would repeat every key once per row, and the page loads this first for homes of
# tens of thousands of entities. js/payload.js declares the same shape for the page.


class GraphEntitiesOut(BaseModel):
    name: list[str]
    type: list[str]
    label: list[str]
    parent: list[str | None] = Field(description="what the entity is drawn in or on; null for rooms and the unplaced")

    @model_validator(mode="after")
    def _rows_line_up(self) -> GraphEntitiesOut:
        _same_length(self, "entities")
        return self


class GraphFactsOut(BaseModel):
    predicate: list[str]
    args: list[list[str]] = Field(description="each fact's arguments, in the predicate's order")

    @model_validator(mode="after")
    def _rows_line_up(self) -> GraphFactsOut:
        _same_length(self, "facts")
        return self


def _same_length(columns: BaseModel, what: str) -> None:
    lengths = {name: len(value) for name, value in columns}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"the {what}' columns differ in length: {lengths}")


class GraphDiffOut(BaseModel):
    added: list[str] = Field(description="facts true now that were not then")
    removed: list[str] = Field(description="facts true then that are not now")
    new_entities: list[str]


class GraphOut(BaseModel):
    """A memory's state for the dashboard, now or at a past ``version`` (then ``diff`` is what changed since)."""

    memory: str
    domain: str
    version: int
    now: int = Field(description="the memory's current version")
    lineage: dict[str, list[str]] = Field(description="each drawn type -> its chain of supertypes, itself first")
    constants: list[str]
    entities: GraphEntitiesOut
    facts: GraphFactsOut
    unknown_location: list[str] = Field(
        description="entities that must be somewhere but whose location the memory does not know"
    )
    diff: GraphDiffOut | None = Field(default=None, description="from version to now; null when viewing now")


# -- health ---------------------------------------------------------------------------------------


class HealthOut(BaseModel):
    status: str


ErrorDetail.model_rebuild()
