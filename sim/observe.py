"""The simulated robot's perception: what it would see in the room it is in.

It sees the room, the furniture and appliances in it, the items on or in them (not those inside a
closed container), the people there and what they hold, and itself with what it holds; each with the
properties and relations that hold in the true state. Room connections are not reported: doors do not
move, and an observation is about the contents of one room. Closed containers in view are reported as
``opaque``: the robot sees the fridge but not what is in it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from kg_memory.model import Entity, Fact
from perception.observation import Observation, ObservedEntity
from sim.errors import ObservationError
from sim.household import CONTAINER_TYPES

_HIDDEN_RELATIONS = frozenset({"connected"})


def observe(
    home_entities_by_name: Mapping[str, Entity],
    state: frozenset[Fact],
    robot: str = "robot_1",
    *,
    time_step: int = 0,
) -> Observation:
    """What ``robot`` perceives in its room in ``state``; entities come from ``home_entities_by_name``."""
    about: dict[str, list[Fact]] = defaultdict(list)
    for fact in state:
        if fact.args:
            about[fact.args[0]].append(fact)
    room = _robot_room(about.get(robot, ()), robot)
    visible = _visible(state, room, robot)
    ordered = [room, robot, *sorted(visible - {room, robot})]
    entities = [_observed(_entity(home_entities_by_name, name, robot), about.get(name, ())) for name in ordered]
    return Observation(
        room=room, robot=robot, entities=tuple(entities), opaque=_closed_containers(entities), time_step=time_step
    )


def _robot_room(facts: Iterable[Fact], robot: str) -> str:
    rooms = sorted(f.args[1] for f in facts if f.predicate == "robot_at")
    if not rooms:
        raise ObservationError(robot, f"{robot} is in no room in this state, so it cannot observe anything")
    return rooms[0]


def _visible(state: frozenset[Fact], room: str, robot: str) -> set[str]:
    """Names in view: the room's fixtures and people, then what is on, in (open) or held by them."""
    fixtures: set[str] = set()
    people: set[str] = set()
    opened: set[str] = set()
    for fact in state:
        predicate, args = fact.predicate, fact.args
        if predicate in ("in_room", "appliance_in") and args[1] == room:
            fixtures.add(args[0])
        elif predicate == "person_in" and args[1] == room:
            people.add(args[0])
        elif predicate == "open":
            opened.add(args[0])
    items: set[str] = set()
    for fact in state:
        predicate, args = fact.predicate, fact.args
        if (
            (predicate == "on" and args[1] in fixtures)
            or (predicate == "inside" and args[1] in fixtures and args[1] in opened)
            or (predicate == "in_hand" and args[1] in people)
            or (predicate == "held" and args[1] == robot)
        ):
            items.add(args[0])
    return {room, robot} | fixtures | people | items


def _closed_containers(entities: Iterable[ObservedEntity]) -> tuple[str, ...]:
    """Containers in view without ``open``: the domain types ``open`` and ``inside`` by container (washers
    and dryers are containers), and a container that is not open is closed, so its contents are hidden.
    Surfaces, sinks and baskets cannot be closed, so what is on them is always in view."""
    return tuple(e.name for e in entities if e.type in CONTAINER_TYPES and "open" not in e.properties)


def _entity(entities: Mapping[str, Entity], name: str, robot: str) -> Entity:
    entity = entities.get(name)
    if entity is not None:
        return entity
    if name == robot:  # a domain constant the caller's mapping may leave out
        return Entity(robot, "robot", "robot")
    raise ObservationError(name, f"{name} appears in the state but not among the home's entities")


def _observed(entity: Entity, facts: Iterable[Fact]) -> ObservedEntity:
    properties = sorted(f.predicate for f in facts if f.arity == 1)
    relations = sorted((f.predicate, f.args[1]) for f in facts if f.arity == 2 and f.predicate not in _HIDDEN_RELATIONS)
    return ObservedEntity(
        name=entity.name, type=entity.type, label=entity.label, properties=tuple(properties), relations=tuple(relations)
    )
