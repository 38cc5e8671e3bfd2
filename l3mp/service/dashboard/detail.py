"""Level of detail for large memories: an outline (floors, rooms with counts, how rooms connect), then
one room or floor at a time, so the page never loads or draws tens of thousands of entities at once.

Floors come from a room's ``floor`` attribute; a home whose rooms have none is one floor. Each view
reads the state once per version (:mod:`l3mp.service.dashboard.index`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, Field, model_validator

from kg_memory import Domain, Fact, InvalidValue, State, WorldMemory
from l3mp.service.dashboard import views
from l3mp.service.dashboard.index import UNPLACED, Indexed, indexed
from l3mp.service.schemas import GraphDiffOut, GraphOut


def _floor_order(floor: str) -> tuple[int, float, str]:
    try:
        return (0, float(floor), floor)
    except ValueError:
        return (1, 0.0, floor)


# -- the outline ----------------------------------------------------------------------------------


class OutlineFloorOut(BaseModel):
    name: str = Field(description='the rooms\' "floor" attribute; "" when they have none (one floor)')
    rooms: int
    entities: int = Field(description="entities on the floor, its rooms included")


class OutlineRoomsOut(BaseModel):
    """The rooms as named columns (row i of each is one room), like the graph's entities."""

    name: list[str]
    type: list[str]
    label: list[str]
    floor: list[str]
    entities: list[int] = Field(description="what is in the room at any depth, the room excluded")
    kinds: list[dict[str, int]] = Field(description="those entities counted by kind (the type under object)")

    @model_validator(mode="after")
    def _rows_line_up(self) -> OutlineRoomsOut:
        lengths = {name: len(value) for name, value in self}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"the rooms' columns differ in length: {lengths}")
        return self


class OutlineOut(BaseModel):
    """A large memory at a glance: floors, rooms with counts, and the links between rooms."""

    memory: str
    domain: str
    version: int
    now: int = Field(description="the memory's current version")
    entities: int
    facts: int
    lineage: dict[str, list[str]] = Field(description="each room type -> its chain of supertypes, itself first")
    floors: list[OutlineFloorOut]
    rooms: OutlineRoomsOut
    links: list[list[str]] = Field(description="pairs of rooms a fact joins (connected, a door...), each once")
    unplaced: int = Field(description=f"entities in no room (their room is named {UNPLACED!r} in views)")
    unknown_location: list[str]
    diff: GraphDiffOut | None = Field(default=None, description="from version to now; null when viewing now")


def outline(memory: WorldMemory, version: int | None = None) -> OutlineOut:
    """Floors and rooms with what is in them counted, and which rooms are joined."""
    now = memory.version
    index = indexed(memory, version)
    return _outline(index).model_copy(update={"now": now, "diff": _diff(memory, index.state, version)})


def _outline(index: Indexed) -> OutlineOut:
    """The outline of one indexed state, computed once per state (as of its version, no diff)."""
    cached = index.memo.get("outline")
    if isinstance(cached, OutlineOut):
        return cached
    state, domain = index.state, index.domain
    kinds = {t: _kind(domain, t) for t in {e.type for e in state.entities.values()}}
    inside = {r: Counter(kinds[state.entities[n].type] for n in index.members[r][1:]) for r in index.floor_of}
    rooms = sorted(index.floor_of, key=lambda r: (_floor_order(index.floor_of[r]), state.entities[r].label, r))
    built = OutlineOut(
        memory=index.memory,
        domain=domain.name,
        version=state.version,
        now=state.version,
        entities=len(state.entities),
        facts=len(state.facts),
        lineage={t: list(domain.lineage(t)) for t in sorted({state.entities[r].type for r in rooms})},
        floors=_floors(index, inside),
        rooms=OutlineRoomsOut(
            name=rooms,
            type=[state.entities[r].type for r in rooms],
            label=[state.entities[r].label for r in rooms],
            floor=[index.floor_of[r] for r in rooms],
            entities=[sum(inside[r].values()) for r in rooms],
            kinds=[dict(sorted(inside[r].items())) for r in rooms],
        ),
        links=_links(state.facts, index.floor_of),
        unplaced=len(index.members.get(UNPLACED, ())),
        unknown_location=sorted(index.unknown),
    )
    index.memo["outline"] = built
    return built


def _kind(domain: Domain, type_: str) -> str:
    chain = domain.lineage(type_)
    return chain[-2] if len(chain) >= 2 else chain[0]


def _floors(index: Indexed, inside: Mapping[str, Counter[str]]) -> list[OutlineFloorOut]:
    rooms = Counter(index.floor_of.values())
    things = Counter[str]()
    for room, counts in inside.items():
        things[index.floor_of[room]] += sum(counts.values()) + 1
    return [OutlineFloorOut(name=f, rooms=rooms[f], entities=things[f]) for f in sorted(rooms, key=_floor_order)]


def _links(facts: Iterable[Fact], rooms: Mapping[str, str]) -> list[list[str]]:
    pairs = {tuple(sorted(f.args)) for f in facts if len(f.args) == 2 and f.args[0] != f.args[1] and f.args[0] in rooms}
    return [list(p) for p in sorted(pairs) if p[1] in rooms]


def _diff(memory: WorldMemory, state: State, version: int | None) -> GraphDiffOut | None:
    if version is None or version == memory.version:
        return None
    current = indexed(memory).state
    return views.diff(state.entities, state.facts, current.entities, current.facts)


# -- one room or floor ----------------------------------------------------------------------------


def part(
    memory: WorldMemory, *, room: str | None = None, floor: str | None = None, version: int | None = None
) -> GraphOut:
    """The graph payload of one room (``UNPLACED``: what is in none) or one floor: its rooms, what is
    in them, and the facts among those (and the domain's constants)."""
    if (room is None) == (floor is None):
        raise InvalidValue("graph part", {"room": room, "floor": floor}, "name a room or a floor")
    index = indexed(memory, version)
    state, domain = index.state, memory.domain
    if floor is not None:
        rooms = [r for r, f in index.floor_of.items() if f == floor]
        if not rooms:
            raise InvalidValue("floor", floor, f"no room of memory {memory.name!r} is on it")
    elif room is not None and (room in index.floor_of or room == UNPLACED):
        rooms = [room]
    else:
        raise InvalidValue("room", room, f"memory {memory.name!r} has no such room")
    names = {n for r in rooms for n in index.members.get(r, ())}
    known = names | set(domain.constants)
    facts = [f for r in rooms for f in index.facts_of.get(r, ()) if all(a in known for a in f.args)]
    entities = {n: state.entities[n] for n in names}
    return GraphOut(
        memory=memory.name,
        domain=domain.name,
        version=state.version,
        now=memory.version,
        lineage={t: list(domain.lineage(t)) for t in sorted({e.type for e in entities.values()})},
        constants=sorted(domain.constants),
        entities=views.entity_columns(entities, index.parent),
        facts=views.fact_columns(facts),
        unknown_location=sorted(index.unknown & names),
        diff=_diff(memory, state, version),
    )
