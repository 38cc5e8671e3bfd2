"""The typed requests and answers of l3mp's operations: one model per request and per answer,
served alike by REST (the OpenAPI schema is built from these), MCP and the other doors."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kg_memory import Entity, Interval, Issue, Memory, Update, UpdateSource, UpdateStatus
from kg_memory.history import MAX_PAGE
from kg_memory.model import MAX_NAME_LENGTH
from l3mp.outcomes import Ambiguous, ExplorationStep, NotFound, PlanOutcome, Unrecognised
from perception import Observation
from planning import PlanStatus

_FACT: Any = Field(
    default_factory=list,
    max_length=10_000,
    description='PDDL facts, e.g. "(on mug_1 table_1)"',
    examples=[["(on mug_1 table_1)"]],
)


class _In(BaseModel):
    """A request. Its integers (versions, cursors, limits) are ``strict``: in pydantic's lax mode a
    JSON ``true`` would be read as 1 and ``"3"`` as 3. Query parameters arrive as strings and are
    parsed by each door's own annotations before they reach these models, so strictness never
    refuses them."""

    model_config = ConfigDict(extra="forbid")


# -- updates' issues -------------------------------------------------------------------------------


class IssueOut(BaseModel):
    code: str = Field(description="machine-readable kind, e.g. functional, unknown_entity, validation")
    fact: str | None = None
    message: str

    @classmethod
    def of(cls, issue: Issue) -> IssueOut:
        return cls(**issue.to_json())


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


class StateOut(BaseModel):
    """A memory's whole state, now or as it was at a past version."""

    memory: str
    domain: str
    version: int = Field(description="the version this state is of")
    now: int = Field(description="the memory's current version")
    entities: list[EntityBody] = Field(description="the domain's constants included")
    facts: list[str]
    unknown_location: list[str] = Field(
        description="entities that must be somewhere but whose location the memory does not know "
        "(perception lost track of them); not: nowhere"
    )


class SearchIn(_In):
    text: str = Field(min_length=1, max_length=1_000, description="words of an entity's name or label, or a type")
    limit: int = Field(default=20, ge=1, le=1_000, description="at most this many entities", strict=True)


class FoundOut(BaseModel):
    entity: EntityBody
    facts: list[str] = Field(description="the facts that name it")


class SearchOut(BaseModel):
    version: int
    found: list[FoundOut]
    truncated: bool = Field(description="more entities matched than limit")


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


class HistoryPageOut(BaseModel):
    """One page of a list of updates; every list of updates pages the same way."""

    updates: list[UpdateOut]
    next_cursor: int | None = Field(description="pass as cursor for the next page; null on the last page")


class HistoryOut(HistoryPageOut):
    next_since_seq: int = Field(
        description="deprecated: the older name of the cursor (never null; pass as since_seq)", deprecated=True
    )


class HistoryIn(_In):
    """Which updates to list (every filter optional, combined with AND), and which page."""

    entity: str | None = Field(default=None, max_length=MAX_NAME_LENGTH, description="updates that touched it")
    since: datetime | None = Field(default=None, description="at or after this time (ISO 8601 with a timezone)")
    until: datetime | None = Field(default=None, description="before this time (ISO 8601 with a timezone)")
    source: UpdateSource | None = None
    status: UpdateStatus | None = None
    cursor: int = Field(default=0, ge=0, le=2**53, description="next_cursor of the previous page", strict=True)
    limit: int = Field(default=100, ge=1, le=MAX_PAGE, strict=True)
    order: Literal["oldest", "newest"] = "oldest"


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


class ExplainOut(BaseModel):
    """An update in words: what it changed, in the domain's English, and why it was refused if it was."""

    update: UpdateOut
    sentences: list[str]


_EXPECTED = "fail with 409 unless still current"


class DeltaIn(_In):
    remove: list[str] = _FACT
    add: list[str] = _FACT
    expected_version: int | None = Field(default=None, ge=0, description=_EXPECTED, strict=True)
    input: str = Field(default="", max_length=10_000)


class NLUpdateIn(_In):
    text: str = Field(max_length=10_000, examples=["Alex moved the blue mug to the hall shelf."])


class ObservationIn(Observation):
    """What the robot sees in one room, applied only while the memory is at ``expected_version`` when given."""

    expected_version: int | None = Field(default=None, ge=0, description=_EXPECTED, strict=True)
    time_step: int = Field(default=0, ge=0, strict=True)  # Observation's, strict like every request's integers

    def observation(self) -> Observation:
        # every field was validated as this request's: copied over, not validated again
        return Observation.model_construct(**{name: getattr(self, name) for name in Observation.model_fields})


# a batch's observations, each its own update: a high-rate sensor's many rooms or frames in one request
MAX_BATCH = 256


class ObservationsIn(_In):
    """Observations applied in order, each as its own sensor update with its own verdict."""

    observations: list[ObservationIn] = Field(min_length=1, max_length=MAX_BATCH)


class ItemErrorOut(BaseModel):
    """Why one item of a batch was not recorded at all (a refused update is an update, not this)."""

    error: str = Field(description="the error's code, as an error response's, e.g. version_conflict")
    status: int = Field(description="the HTTP status the item alone would have had, e.g. 409")
    message: str


class ObservationsOut(BaseModel):
    """One verdict per observation, in the request's order: its update (applied, noop or rejected
    with its issues), or the error that kept it from being recorded."""

    updates: list[UpdateOut | ItemErrorOut]


class RevertIn(_In):
    expected_version: int | None = Field(default=None, ge=0, strict=True)
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
