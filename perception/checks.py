"""What an observation claims about where it was made, checked against the memory before any delta.

A delta is computed from an observation as if it were true, so an observation that cannot be true of
this home must be refused first, or the delta does harm: a shelf the memory places in the hall, seen
"in the kitchen", would make every item the memory keeps on that shelf vanish from it.

* The room must be known: a stored entity of the domain's ``room`` type, or one this observation
  introduces as a room (exploration). Domains without a ``room`` type (``thor``: the room is the scene's
  name) leave it unchecked.
* The robot must be known (stored, a domain constant, or observed here) and, in a domain with a ``robot``
  type, be one: a person's name is not the robot that looked.
* An observed entity the memory places in another room by a static fact (furniture does not move) is a
  conflict to report, not a change to apply.
* An entity the memory knows keeps its type. Observed as a more general or a more specific kind of the
  same thing (an ``item`` the memory has as a ``dish``, a detector's coarser or finer class), it is the
  same entity: the observation is applied and a warning says which type was kept. Observed as an
  unrelated type (a ``dish`` seen as ``furniture``), it is another thing than the memory's, or a wrong
  name: the observation is refused whole, since its facts would be checked against the wrong type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from kg_memory.domain import Domain
from kg_memory.model import Issue, IssueCode
from kg_memory.verifier import StateView
from perception.observation import Observation, ObservedEntity

ROOM = "room"
ROBOT = "robot"


class _Typed(Protocol):
    """What the checks read of an entity, stored or observed: an observed one is made a memory entity
    only when it has a label or attributes to check (see :func:`_checked`), not for its name and type."""

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ObservationCheck:
    """Why an observation cannot be applied (``issues``), and what to tell about it if it can (``warnings``)."""

    issues: tuple[Issue, ...] = ()
    warnings: tuple[str, ...] = ()


def observation_issues(observation: Observation, state: StateView, domain: Domain) -> tuple[Issue, ...]:
    """Why ``observation`` cannot be applied to ``state`` as it stands (empty when it can)."""
    return check_observation(observation, state, domain).issues


def check_observation(observation: Observation, state: StateView, domain: Domain) -> ObservationCheck:
    """:func:`observation_issues`, and the warnings of an observation that may be applied."""
    observed: dict[str, _Typed] = {e.name: _checked(e) for e in observation.entities}
    stored: dict[str, _Typed] = {e.name: e for e in domain.constant_entities()}
    stored.update(state.entities((observation.room, observation.robot, *observed)))
    known = {**observed, **stored}  # an entity the memory has keeps its type
    issues = [*_room_issues(observation, known, domain), *_robot_issues(observation, known, domain)]
    unrelated, warnings = _retyped(observed, stored, domain)
    issues.extend(unrelated)
    if ROOM in domain.types and not issues:
        issues.extend(_misplaced(observation, known, state, domain))
    return ObservationCheck(tuple(issues), tuple(warnings))


def _checked(entity: ObservedEntity) -> _Typed:
    """``entity`` with its label and attributes checked as a memory entity's are (no lone surrogates,
    finite numbers: :class:`~kg_memory.errors.InvalidValue`); its name and type were checked already."""
    return entity.entity() if entity.label or entity.attrs else entity


def _retyped(
    observed: Mapping[str, _Typed], stored: Mapping[str, _Typed], domain: Domain
) -> tuple[list[Issue], list[str]]:
    """Entities observed as another type than the memory's: a warning if the types are related, else an issue."""
    issues: list[Issue] = []
    warnings: list[str] = []
    for name, seen in observed.items():
        kept = stored.get(name)
        if kept is None or kept.type == seen.type:
            continue
        if domain.is_subtype(seen.type, kept.type) or domain.is_subtype(kept.type, seen.type):
            warnings.append(f"{name}: observed as {seen.type}, kept as {kept.type}")
            continue
        issues.append(
            Issue(
                IssueCode.TYPE_MISMATCH,
                None,
                f"{name} is a {kept.type} in the memory, but the observation says it is a {seen.type}, which is "
                f"neither a kind of {kept.type} nor a more general one; nothing was applied: check the type "
                f"observed for {name}, or correct the memory first",
            )
        )
    return issues, warnings


def _is(entity: _Typed | None, type_: str, domain: Domain) -> bool:
    return entity is not None and domain.is_subtype(entity.type, type_)


def _room_issues(observation: Observation, known: Mapping[str, _Typed], domain: Domain) -> list[Issue]:
    room = known.get(observation.room)
    if ROOM not in domain.types or _is(room, ROOM, domain):
        return []
    what = "no entity of this memory" if room is None else f"a {room.type}, not a room"
    return [
        Issue(
            IssueCode.UNKNOWN_ENTITY if room is None else IssueCode.TYPE_MISMATCH,
            None,
            f"the observation was made in room {observation.room!r}, which is {what}; "
            "observe from a room the memory knows (or include the new room as an observed entity of type room)",
        )
    ]


def _robot_issues(observation: Observation, known: Mapping[str, _Typed], domain: Domain) -> list[Issue]:
    robot = known.get(observation.robot)
    if robot is None:
        return [
            Issue(
                IssueCode.UNKNOWN_ENTITY,
                None,
                f"the observation names robot {observation.robot!r}, which is no entity of this memory",
            )
        ]
    if ROBOT in domain.types and not _is(robot, ROBOT, domain):
        return [
            Issue(
                IssueCode.TYPE_MISMATCH,
                None,
                f"the observation names robot {observation.robot!r}, which is a {robot.type}, not a robot",
            )
        ]
    return []


def _misplaced(observation: Observation, known: Mapping[str, _Typed], state: StateView, domain: Domain) -> list[Issue]:
    """Stored static facts placing an observed (non-room) entity in a room other than the observation's."""
    movable = frozenset(n for n in observation.names() if not _is(known.get(n), ROOM, domain))
    placing = domain.derived(_placing_predicates)
    elsewhere = sorted(
        (
            f
            for f in state.facts_about(movable)
            if f.predicate in placing and f.args[0] in movable and f.args[1] != observation.room
        ),
        key=str,
    )
    return [
        Issue(
            IssueCode.OBSERVED_ELSEWHERE,
            fact,
            f"{fact.args[0]} was seen in {observation.room}, but the memory has {fact} and {fact.predicate} "
            "does not change by itself; nothing was applied: check the observation's room, or correct the "
            "memory first",
        )
        for fact in elsewhere
    ]


def _placing_predicates(domain: Domain) -> frozenset[str]:
    """Static binary predicates putting a thing in a room, like ``(in_room ?f - furniture ?r - room)``."""
    return frozenset(
        p.name
        for p in domain.predicates.values()
        if p.static
        and not p.numeric
        and p.arity == 2
        and domain.is_subtype(p.parameters[1].type, ROOM)
        and not domain.is_subtype(p.parameters[0].type, ROOM)
    )
