"""What the robot perceives in one room, as a JSON-serializable snapshot.

An observation is perception's input to the memory: the entities the robot sees, each with the unary
facts that hold of it (``properties``) and the binary facts it is the first argument of
(``relations``), and the values of static numeric functions it measured (``measures``: the distances
an action's cost needs). It asserts facts only about what is in view; everything else in the memory is left
as it was, which is why it is a separate model rather than a delta.

Models are frozen pydantic models: lists are accepted and stored as tuples, names are normalised to
PDDL names on construction, and ``to_json``/``from_json`` round-trip exactly. This module depends on
``kg_memory`` only, so an adapter for a real robot (or AI2-THOR) can produce observations without the
simulator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kg_memory.errors import InvalidName, InvalidValue
from kg_memory.model import Entity, Fact, pddl_name


def _name(value: str, kind: str = "entity") -> str:
    """A PDDL name; a bad one is a ``ValueError`` so pydantic reports it as a validation error."""
    try:
        return pddl_name(value, kind)
    except InvalidName as exc:
        raise ValueError(str(exc)) from exc


class ObservedEntity(BaseModel):
    """One entity in view: ``properties`` like ``"open"``, ``relations`` like ``("on", "table_1")``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    type: str
    label: str = ""
    properties: tuple[str, ...] = ()
    relations: tuple[tuple[str, str], ...] = ()
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
    def _relations(cls, value: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        return tuple((_name(p, "predicate"), _name(other)) for p, other in value)

    def facts(self) -> frozenset[Fact]:
        unary = (Fact(p, (self.name,)) for p in self.properties)
        binary = (Fact(p, (self.name, other)) for p, other in self.relations)
        return frozenset((*unary, *binary))

    def entity(self) -> Entity:
        return Entity(self.name, self.type, self.label, self.attrs)


Measure = tuple[str, tuple[str, ...], float]  # ("distance", ("fridge_1", "apple_1"), 2.35)


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
