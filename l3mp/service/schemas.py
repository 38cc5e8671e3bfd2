"""Request and response bodies of the REST service (the OpenAPI schema is built from these)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kg_memory import Entity, Interval, Issue, Memory, Update
from kg_memory.model import MAX_NAME_LENGTH
from l3mp.outcomes import Ambiguous, ExplorationStep, NotFound, PlanOutcome, Unrecognised
from planning import PlanStatus

_FACT: Any = Field(
    default_factory=list,
    max_length=10_000,
    description='PDDL facts, e.g. "(on mug_1 table_1)"',
    examples=[["(on mug_1 table_1)"]],
)


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- errors ---------------------------------------------------------------------------------------


class IssueOut(BaseModel):
    code: str = Field(description="machine-readable kind, e.g. functional, unknown_entity, validation")
    fact: str | None = None
    message: str

    @classmethod
    def of(cls, issue: Issue) -> IssueOut:
        return cls(**issue.to_json())


class ErrorDetail(BaseModel):
    code: str
    message: str
    issues: list[IssueOut] = Field(default_factory=list)
    update: UpdateOut | None = Field(default=None, description="the recorded update, when one was rejected")
    request_id: str | None = Field(default=None, description="names the logged traceback of an unexpected error")


class ErrorBody(BaseModel):
    error: ErrorDetail


# -- memories and state ---------------------------------------------------------------------------


class MemoryIn(_In):
    name: str = Field(min_length=1, max_length=MAX_NAME_LENGTH, examples=["home"])
    domain: str = Field(min_length=1, max_length=MAX_NAME_LENGTH, examples=["example_home"])


class MemoryOut(BaseModel):
    name: str
    domain: str
    version: int
    created: datetime

    @classmethod
    def of(cls, memory: Memory) -> MemoryOut:
        return cls(name=memory.name, domain=memory.domain, version=memory.version, created=memory.created)


class EntityBody(BaseModel):
    name: str = Field(min_length=1, max_length=MAX_NAME_LENGTH)
    type: str = Field(min_length=1, max_length=MAX_NAME_LENGTH)
    label: str = Field(default="", max_length=1_000)
    attrs: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @classmethod
    def of(cls, entity: Entity) -> EntityBody:
        return cls(**entity.to_json())

    def to_entity(self) -> Entity:
        return Entity(self.name, self.type, self.label, self.attrs)


class EntitiesIn(_In):
    """Perception's write: new entities with the facts that place them (a sensor update)."""

    entities: list[EntityBody] = Field(min_length=1, max_length=10_000)
    facts: list[str] = _FACT
    input: str = Field(default="", max_length=10_000)


class FactsOut(BaseModel):
    version: int
    facts: list[str]


# -- updates --------------------------------------------------------------------------------------


class DeltaOut(BaseModel):
    remove: list[str]
    add: list[str]
    new_entities: list[EntityBody]


class UpdateOut(BaseModel):
    id: str
    memory: str
    seq: int
    source: str = Field(description="nl, sensor, execution, api or revert")
    input: str
    delta: DeltaOut
    status: str = Field(description="applied, rejected or noop")
    issues: list[IssueOut]
    version: int
    time: datetime
    meta: dict[str, Any]

    @classmethod
    def of(cls, update: Update) -> UpdateOut:
        return cls.model_validate(update.to_json())


class HistoryOut(BaseModel):
    updates: list[UpdateOut]
    next_since_seq: int = Field(description="pass as since_seq to read the next page")


class HistoryPageOut(BaseModel):
    updates: list[UpdateOut]
    next_cursor: int | None = Field(description="pass as cursor for the next page; null on the last page")


class LastSeenOut(BaseModel):
    entity: str
    time: datetime | None = Field(description="when perception last saw it; null if it never did")
    update: UpdateOut | None


class IntervalEndOut(BaseModel):
    version: int
    time: datetime
    update: str


class IntervalOut(BaseModel):
    fact: str
    start: IntervalEndOut
    end: IntervalEndOut | None = Field(description="null while the fact still holds")

    @classmethod
    def of(cls, interval: Interval) -> IntervalOut:
        end = None
        if interval.end_version is not None and interval.end_time is not None and interval.end_update is not None:
            end = IntervalEndOut(version=interval.end_version, time=interval.end_time, update=interval.end_update)
        start = IntervalEndOut(version=interval.start_version, time=interval.start_time, update=interval.start_update)
        return cls(fact=str(interval.fact), start=start, end=end)


class DeltaIn(_In):
    remove: list[str] = _FACT
    add: list[str] = _FACT
    expected_version: int | None = Field(default=None, ge=0, description="fail with 409 unless still current")
    input: str = Field(default="", max_length=10_000)


class NLUpdateIn(_In):
    text: str = Field(max_length=10_000, examples=["Alex moved the blue mug to the hall shelf."])


class RevertIn(_In):
    expected_version: int | None = Field(default=None, ge=0)
    input: str = Field(default="", max_length=10_000)


# -- plans ----------------------------------------------------------------------------------------


class PlanIn(_In):
    request: str = Field(default="", max_length=10_000, description="what to do, in English (needs a model)")
    goal: str | None = Field(default=None, max_length=10_000, description="a PDDL goal formula (no model)")
    open_world: bool = Field(
        default=False, description="ask about ambiguous or unknown mentions and explore for unknown locations"
    )
    answers: dict[str, str] = Field(
        default_factory=dict, description="follow-up to needs_information: mention -> the entity it means"
    )
    explored: list[str] = Field(default_factory=list, description="rooms and containers already searched")
    optimal: bool | None = Field(
        default=None, description="the cheapest plan, proven within the deadline (default: the plan_optimal setting)"
    )


class SeenOut(BaseModel):
    """Where an entity was when the memory lost track of it."""

    fact: str
    place: str
    version: int
    time: str = Field(description="ISO 8601")
    source: str


class UnknownOut(BaseModel):
    """An entity whose location the memory does not know (not: is nowhere)."""

    entity: str
    label: str
    type: str
    location: Literal["unknown"]
    last_seen: SeenOut | None = Field(description="null if history never placed it")


class AttemptOut(BaseModel):
    """One planner call of a plan request: on what context, with what outcome, and why it was not enough."""

    tier: str = Field(description="retrieved, widened or full")
    objects: int
    facts: int
    status: PlanStatus
    planner: str
    plan: list[str]
    valid: bool | None = Field(description="the plan run from the full state; null when there was no plan")
    reason: str = Field(description="why this tier did not give the answer (empty for the one that did)")
    build_seconds: float
    parse_seconds: float
    plan_seconds: float
    validate_seconds: float
    problem: str = Field(description="the PDDL problem the planner got")


class PlanOut(BaseModel):
    status: PlanOutcome = Field(
        description=(
            "solved, unsolvable, timeout, error, invalid_request, invalid_goal; impossible (issues name each gap); "
            "needs_information (questions: {about, candidates} or {unknown, closest} or {where, searched}); "
            "needs_exploration (plan reaches an information-gathering sub-goal, see exploration)"
        )
    )
    request: str
    goal: str | None
    plan: list[str]
    explanation: list[str]
    tier: str | None
    issues: list[str]
    version: int
    usage: dict[str, int]
    timings: dict[str, float]
    retrieval: dict[str, Any]
    attempts: list[AttemptOut]
    questions: list[Ambiguous | Unrecognised | NotFound] = Field(
        default_factory=list, description="what to settle (needs_information)"
    )
    unknowns: list[UnknownOut] = Field(default_factory=list, description="entities whose location is unknown")
    exploration: list[ExplorationStep] = Field(default_factory=list, description="exploration sub-goals tried")
    stages: None = Field(default=None, description="always null: only the runtime splits a request into stages")
    cost: float | None = Field(default=None, description="the plan's cost (its length without action costs)")
    optimal: bool = Field(default=False, description="proven the cheapest plan for the whole state")
    optimality: str = Field(default="", description="why a plan asked to be optimal is not proven so")
    cost_explanation: str = ""


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
    diff: GraphDiffOut | None = Field(default=None, description="from version to now; null when viewing now")


# -- health ---------------------------------------------------------------------------------------


class HealthOut(BaseModel):
    status: str


ErrorDetail.model_rebuild()
