"""What the robot perceives in one room, as a JSON-serializable snapshot.

An observation is perception's input to the memory: the entities the robot sees, each with the unary
facts that hold of it (``properties``) and the binary facts it is the first argument of
(``relations``: ``{"predicate": "on", "object": "table_1"}``, or the older ``["on", "table_1"]``), and
the values of static numeric functions it measured (``measures``: the distances an action's cost
needs). It asserts facts only about what is in view; everything else in the memory is left as it was,
which is why it is a separate model rather than a delta.

Models are frozen pydantic models: lists are accepted and stored as tuples, names are normalised to
PDDL names on construction, and ``to_json``/``from_json`` round-trip exactly. This module depends on
``kg_memory`` only, so an adapter for a real robot (or AI2-THOR) can produce observations without the
simulator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, NamedTuple

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from kg_memory.errors import InvalidName, InvalidValue
from kg_memory.model import Entity, Fact, pddl_name


def _name(value: str, kind: str = "entity") -> str:
    """A PDDL name; a bad one is a ``ValueError`` so pydantic reports it as a validation error."""
    try:
        return pddl_name(value, kind)
    except InvalidName as exc:
        raise ValueError(str(exc)) from exc


class Relation(NamedTuple):
    """A binary fact ``(predicate subject object)`` of the entity it belongs to, the subject.

    A pair, so code may unpack it as one (and build observations from plain pairs); it is read from
    either JSON form, an object ``{"predicate": "on", "object": "table_1"}`` or a pair ``["on",
    "table_1"]``, and written as a pair, the form every reader understands.
    """

    predicate: str
    object: str


class _RelationObject(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    predicate: str
    object: str


def _relation_in(value: object) -> object:
    """The object form as a pair; a pair (or anything else) goes on to be validated as a pair."""
    if not isinstance(value, Mapping):
        return value
    try:
        relation = _RelationObject.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'relation'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f'write a relation as {{"predicate": "on", "object": "table_1"}} ({problems})') from None
    return (relation.predicate, relation.object)


# What a request body may say: the object form first (preferred), the pair kept for older clients.
_RELATION_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {
            "type": "object",
            "title": "Relation",
            "description": "preferred: the relation's predicate and its second argument (this entity is the first)",
            "properties": {
                "predicate": {"type": "string", "examples": ["on"]},
                "object": {"type": "string", "examples": ["table_1"]},
            },
            "required": ["predicate", "object"],
            "additionalProperties": False,
        },
        {
            "type": "array",
            "title": "RelationPair",
            "description": "the older form, still accepted: [predicate, object]",
            "prefixItems": [{"type": "string"}, {"type": "string"}],
            "minItems": 2,
            "maxItems": 2,
        },
    ]
}
RelationIn = Annotated[
    tuple[str, str], BeforeValidator(_relation_in), WithJsonSchema(_RELATION_SCHEMA, mode="validation")
]


class ObservedEntity(BaseModel):
    """One entity in view: ``properties`` like ``"open"``, ``relations`` like ``("on", "table_1")``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    type: str
    label: str = ""
    properties: tuple[str, ...] = ()
    relations: tuple[RelationIn, ...] = Field(
        default=(),
        description='binary facts this entity is the first argument of, each {"predicate": "on", "object": '
        '"table_1"} (preferred) or the older pair ["on", "table_1"]; either way the same facts',
    )
    attrs: dict[str, str | int | float | bool] = Field(default_factory=dict)  # e.g. a simulator's own id

    @field_validator("name", "type")
    @classmethod
    def _pddl(cls, value: str) -> str:
        return _name(value)

    @field_validator("properties")
    @classmethod
    def _properties(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_name(p, "predicate") for p in value)

    @field_validator("relations")
    @classmethod
    def _relations(cls, value: tuple[Relation, ...]) -> tuple[Relation, ...]:
        return tuple(Relation(_name(p, "predicate"), _name(other)) for p, other in value)

    def facts(self) -> frozenset[Fact]:
        # every name here was made a PDDL name when the entity was validated
        unary = (Fact.unchecked(p, (self.name,)) for p in self.properties)
        binary = (Fact.unchecked(p, (self.name, other)) for p, other in self.relations)
        return frozenset((*unary, *binary))

    def entity(self) -> Entity:
        return Entity(self.name, self.type, self.label, self.attrs)


# ("distance", ("fridge_1", "apple_1"), 2.35); strict: a JSON true is no distance of 1, nor "2" one of 2
Measure = tuple[str, tuple[str, ...], Annotated[float, Field(strict=True)]]


class Observation(BaseModel):
    """Everything the robot ``robot`` sees in ``room`` at ``time_step``.

    ``opaque`` names observed entities whose contents cannot be seen (closed containers): what is
    in them is not expected in view, so not seeing it says nothing about whether it is still there.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    room: str
    robot: str = "robot_1"
    entities: tuple[ObservedEntity, ...] = ()
    opaque: tuple[str, ...] = ()
    time_step: int = Field(default=0, ge=0)
    measures: tuple[Measure, ...] = Field(
        default=(),
        description='static numeric facts measured, e.g. ["distance", ["fridge_1", "apple_1"], 2.35] '
        "(a new value replaces the stored one)",
    )

    @field_validator("room", "robot")
    @classmethod
    def _pddl(cls, value: str) -> str:
        return _name(value)

    @field_validator("opaque")
    @classmethod
    def _opaque(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_name(n) for n in value)

    @field_validator("measures")
    @classmethod
    def _measures(cls, value: tuple[Measure, ...]) -> tuple[Measure, ...]:
        facts = []
        for function, args, number in value:
            try:
                fact = Fact(_name(function, "predicate"), tuple(_name(a) for a in args), number)
            except InvalidValue as exc:  # a ValueError, so pydantic reports it as a validation error
                raise ValueError(str(exc)) from exc
            facts.append((fact.predicate, fact.args, float(number)))
        return tuple(facts)

    @model_validator(mode="after")
    def _opaque_are_observed(self) -> Observation:
        unseen = sorted(set(self.opaque) - set(self.names()))
        if unseen:
            raise ValueError(f"opaque names entities that are not observed: {', '.join(unseen)}")
        return self

    def facts(self) -> frozenset[Fact]:
        """Every fact the observation asserts, its measures included."""
        measured = (Fact(function, args, value) for function, args, value in self.measures)
        return frozenset((*(f for e in self.entities for f in e.facts()), *measured))

    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entities)

    def get(self, name: str) -> ObservedEntity | None:
        return next((e for e in self.entities if e.name == name), None)

    def to_entities(self) -> tuple[Entity, ...]:
        """The observed entities as memory entities (name, type, label), e.g. to create unknown ones."""
        return tuple(e.entity() for e in self.entities)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        """Compact JSON text (what an update records as its input)."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, data: str | bytes | Mapping[str, Any]) -> Observation:
        """From JSON text or from the dict :meth:`to_dict` gives."""
        if isinstance(data, str | bytes):
            return cls.model_validate_json(data)
        return cls.model_validate(dict(data))
