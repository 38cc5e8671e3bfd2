"""Perception's first look at a large place, as several verified updates (pages of whole rooms).

One update of a whole building would be one huge request body and one long verification holding the
memory's writer all along; pages keep each update small. An update must place every entity it
creates, so a page holds whole rooms: the rooms themselves first, then rooms with everything in them;
each fact goes in the first page that knows all its arguments.

The streamed door reads JSON Lines: ``{"entity": {"name", "type", "label", "attrs"}}`` or
``{"fact": "(on mug_1 table_1)"}``, one a line, in any order.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from kg_memory import Entity, Fact, InvalidValue, KgMemoryError
from l3mp.operations.models import EntitiesIn, EntityBody, UpdateOut
from l3mp.operations.ops import Operations

PAGE_ENTITIES = 2_000  # a page as a JSON body stays well under the service's 1 MB default limit
MAX_PAGE_ENTITIES = 10_000  # what one perception update may create (EntitiesIn)
MAX_PAGE_FACTS = 10_000  # and the facts it may carry


@dataclass(frozen=True, kw_only=True, slots=True)
class Page:
    """Entities of whole rooms and the facts first knowable with them: one sensor update."""

    entities: tuple[Entity, ...]
    facts: tuple[Fact, ...]

    def to_json(self) -> dict[str, Any]:
        """The page as the body of ``POST /v1/memories/{memory}/entities``."""
        return {"entities": [e.to_json() for e in self.entities], "facts": [str(f) for f in self.facts]}


def entity_pages(
    entities: Sequence[Entity],
    facts: Iterable[Fact],
    *,
    size: int = PAGE_ENTITIES,
    rooms: Collection[str] | None = None,
    max_facts: int = MAX_PAGE_FACTS,
) -> list[Page]:
    """``entities`` and ``facts`` in pages of about ``size`` entities (a room bigger than that is one
    page of its own). ``rooms`` names the roots (default: entities of type ``room``). A page over
    ``max_facts`` facts passes those it need not carry on to the next (a building's rooms come with
    more links between them than one update may hold)."""
    if size < 1:
        raise InvalidValue("page size", size, "a page holds at least one entity")
    facts = sorted(facts, key=str)
    room_names = set(rooms) if rooms is not None else {e.name for e in entities if e.type == "room"}
    located = room_of(room_names, facts)
    by_room: dict[str, list[Entity]] = {}
    for entity in entities:
        by_room.setdefault(located.get(entity.name, ""), []).append(entity)
    groups: list[list[Entity]] = []
    for room in ["", *sorted(r for r in by_room if r)]:  # "": rooms and what is in none, first
        if not groups or (groups[-1] and len(groups[-1]) + len(by_room.get(room, [])) > size):
            groups.append([])
        groups[-1].extend(by_room.get(room, []))
    if not groups[-1]:
        return []  # no entities: nothing to page
    page_of = {e.name: index for index, group in enumerate(groups) for e in group}
    placed: list[list[Fact]] = [[] for _ in groups]
    for fact in facts:  # arguments no page creates (constants, entities already known) ask for no page
        placed[max((page_of.get(a, 0) for a in fact.args), default=0)].append(fact)
    for index in range(len(groups) - 1):
        placed[index], spilled = _spill(placed[index], groups[index], room_names, max_facts)
        placed[index + 1][:0] = spilled
    return [Page(entities=tuple(g), facts=tuple(f)) for g, f in zip(groups, placed, strict=True)]


def _spill(facts: list[Fact], created: list[Entity], rooms: set[str], cap: int) -> tuple[list[Fact], list[Fact]]:
    """The facts a page keeps and those it passes on: only facts about rooms (which need no placing)
    or about nothing it creates may wait for a later page."""
    if len(facts) <= cap:
        return facts, []
    new = {e.name for e in created}
    keep = [f for f in facts if f.args and f.args[0] not in rooms and new.intersection(f.args)]
    movable = [f for f in facts if not (f.args and f.args[0] not in rooms and new.intersection(f.args))]
    room = max(0, cap - len(keep))
    return keep + movable[:room], movable[room:]


def room_of(rooms: Collection[str], facts: Iterable[Fact]) -> dict[str, str]:
    """Each entity's room, through what it is in or on (rooms, and what is in none, have none)."""
    pairs = [f.args for f in facts if len(f.args) == 2 and f.args[0] not in rooms]
    found: dict[str, str] = {}
    changed = True
    while changed:  # one pass per level of nesting (item in drawer in cabinet in room)
        changed = False
        for thing, place in pairs:
            where = place if place in rooms else found.get(place)
            if where is not None and thing not in found:
                found[thing] = where
                changed = True
    return found


def read_lines(lines: Iterable[str]) -> tuple[list[Entity], list[Fact]]:
    """The entities and facts of a JSON Lines body; a bad line is refused with its number."""
    entities: list[Entity] = []
    facts: list[Fact] = []
    reading, text = 1, ""
    try:
        for number, line in enumerate(lines, start=1):
            reading, text = number, line
            if line.strip():
                _read_line(json.loads(line), entities, facts)
            reading, text = number + 1, ""
    except (UnicodeDecodeError, OSError, EOFError, zlib.error) as exc:  # decoded in blocks, so no line number
        raise InvalidValue(
            "entities stream", f"near line {reading}", f"it is not UTF-8 JSON Lines, plain or gzipped ({exc})"
        ) from exc
    except (KgMemoryError, ValueError, TypeError) as exc:  # facts, json, pydantic
        raise InvalidValue(f"entities line {reading}", text[:200], _first(exc)) from exc
    except RecursionError:
        raise InvalidValue(f"entities line {reading}", text[:200], "its JSON is nested too deeply to read") from None
    return entities, facts


def _read_line(item: Any, entities: list[Entity], facts: list[Fact]) -> None:
    if not isinstance(item, dict) or len(item) != 1 or not {"entity", "fact"} & item.keys():
        raise ValueError('a line is {"entity": {...}} or {"fact": "(...)"}')
    if "entity" in item:
        entities.append(EntityBody.model_validate(item["entity"]).to_entity())
    else:
        facts.append(Fact.parse(item["fact"]))


def _first(error: BaseException) -> str:
    if isinstance(error, ValidationError) and error.errors():  # its first line names only the model
        first = error.errors()[0]
        return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
    lines = str(error).splitlines()
    return lines[0] if lines else type(error).__name__


class PageOut(BaseModel):
    """One page's verdict: its size, its first and last entity, and the update it was written as."""

    entities: int
    facts: int
    first: str = Field(description="its first entity")
    last: str = Field(description="its last entity")
    update: UpdateOut


class PagesOut(BaseModel):
    """Every page's verdict, in order; a rejected page's ``update`` carries its issues."""

    memory: str
    version: int = Field(description="the memory's version after the last page")
    applied: int
    rejected: int
    pages: list[PageOut]


def add_in_pages(ops: Operations, memory: str, pages: Sequence[Page], *, input: str = "") -> PagesOut:
    """Each page as its own verified sensor update, in order; a rejected page does not stop the rest
    (pages of other rooms do not depend on it), and its verdict says why."""
    out = []
    for index, page in enumerate(pages, start=1):
        if len(page.entities) > MAX_PAGE_ENTITIES or len(page.facts) > MAX_PAGE_FACTS:
            counts = f"{len(page.entities)} entities and {len(page.facts)} facts"
            raise InvalidValue("page", index, f"it has {counts}, over {MAX_PAGE_ENTITIES} or {MAX_PAGE_FACTS}")
        body = EntitiesIn(
            entities=[EntityBody.of(e) for e in page.entities],
            facts=[str(f) for f in page.facts],
            input=f"{input} (page {index} of {len(pages)})" if input else f"page {index} of {len(pages)}",
        )
        update = ops.add_entities(memory, body)
        first, last = page.entities[0].name, page.entities[-1].name
        out.append(PageOut(entities=len(page.entities), facts=len(page.facts), first=first, last=last, update=update))
    applied = sum(p.update.status == "applied" for p in out)
    rejected = sum(p.update.status == "rejected" for p in out)
    version = ops.get_memory(memory).version
    return PagesOut(memory=memory, version=version, applied=applied, rejected=rejected, pages=out)


def to_lines(entities: Iterable[Entity], facts: Iterable[Fact]) -> Iterator[str]:
    """The JSON Lines body :func:`read_lines` reads: entities, then facts, one a line."""
    for entity in entities:
        yield json.dumps({"entity": entity.to_json()}, separators=(",", ":")) + "\n"
    for fact in facts:
        yield json.dumps({"fact": str(fact)}) + "\n"
