"""What the dashboard shows, as JSON-ready dicts built from a memory (no HTTP here, so it is testable alone).

The graph payload (:class:`~l3mp.service.schemas.GraphOut`) is deliberately compact (named columns, not
one object per entity): it is what the page loads first, and its size is measured
(``python -m experiments dashboard``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kg_memory import Domain, Entity, Fact, GraphStore, Update, UpdateStatus, WorldMemory
from kg_memory.unknowns import unplaced
from l3mp.operations.models import UpdateOut
from l3mp.service.schemas import GraphDiffOut, GraphEntitiesOut, GraphFactsOut, GraphOut

# a placement chain longer than this is a cycle in bad data, not a real home
_MAX_DEPTH = 6
_RECENT_UPDATES = 500  # how far back the runtime panel looks for task checkpoints


def placement(entities: Mapping[str, Entity], facts: Iterable[Fact], domain: Domain) -> dict[str, str]:
    """Where each entity is drawn: entity -> the entity it sits in or on (rooms are the roots).

    Generic over domains: an entity is placed by a binary fact ``(p a b)`` whose ``b`` is a room or is
    itself placed (``in_room``, ``on``, ``inside``, ``held``, ``person_in``...). Facts to unplaced things
    (a liquid a cup is filled with, another room) never place anything, so rooms stay roots.
    """
    rooms = {n for n, e in entities.items() if domain.is_subtype(e.type, "room")} if "room" in domain.types else set()
    candidates: dict[str, list[str]] = {}
    for fact in sorted(facts, key=lambda f: (f.predicate, f.args)):
        if len(fact.args) == 2 and fact.args[0] != fact.args[1] and fact.args[0] not in rooms:
            candidates.setdefault(fact.args[0], []).append(fact.args[1])
    parent: dict[str, str] = {}
    placed = set(rooms)
    for _ in range(_MAX_DEPTH):
        found = {
            child: next(b for b in targets if b in placed)
            for child, targets in candidates.items()
            if child not in placed and any(b in placed for b in targets)
        }
        if not found:
            break
        parent.update(found)
        placed.update(found)
    return parent


def graph(memory: WorldMemory, version: int | None = None) -> GraphOut:
    """The state now, or at ``version`` with its difference from now."""
    now_version = memory.version
    current = memory.state()
    state = current if version is None or version == current.version else memory.state_at(version)
    domain = memory.domain
    types = sorted({e.type for e in state.entities.values()})
    return GraphOut(
        memory=memory.name,
        domain=domain.name,
        version=state.version if version is None else version,
        now=now_version,
        lineage={t: list(domain.lineage(t)) for t in types},
        constants=sorted(domain.constants),
        entities=_entity_columns(state.entities, placement(state.entities, state.facts, domain)),
        facts=_fact_columns(state.facts),
        unknown_location=sorted(e.name for e in unplaced(domain, state.entities, state.facts)),
        diff=None if state is current else _diff(state.entities, state.facts, current.entities, current.facts),
    )


def _entity_columns(entities: Mapping[str, Entity], parents: Mapping[str, str]) -> GraphEntitiesOut:
    rows = [entities[name] for name in sorted(entities)]
    return GraphEntitiesOut(
        name=[e.name for e in rows],
        type=[e.type for e in rows],
        label=[e.label for e in rows],
        parent=[parents.get(e.name) for e in rows],
    )


def _fact_columns(facts: Iterable[Fact]) -> GraphFactsOut:
    rows = sorted(facts, key=lambda f: (f.predicate, f.args))
    return GraphFactsOut(predicate=[f.predicate for f in rows], args=[list(f.args) for f in rows])


def _diff(
    then_entities: Mapping[str, Entity],
    then_facts: frozenset[Fact],
    now_entities: Mapping[str, Entity],
    now_facts: frozenset[Fact],
) -> GraphDiffOut:
    """What changed from then to now (what a person reads under the time-travel slider)."""
    return GraphDiffOut(
        added=sorted(str(f) for f in now_facts - then_facts),
        removed=sorted(str(f) for f in then_facts - now_facts),
        new_entities=sorted(set(now_entities) - set(then_entities)),
    )


def entity(memory: WorldMemory, name: str, history_limit: int = 50) -> dict[str, Any] | None:
    """An entity's label, attributes, facts in English, and the updates that touched it (newest first)."""
    found = memory.entities([name]).get(name)
    if found is None:
        return None
    facts = sorted(memory.facts(entity=name), key=lambda f: (f.predicate, f.args))
    names = {a for f in facts for a in f.args} | {name}
    labels = {n: e.label for n, e in memory.entities(names).items()}
    language = memory.domain.language
    touched = [u for u in memory.history() if _mentions(u, name)]
    return {
        "entity": found.to_json(),
        "lineage": list(memory.domain.lineage(found.type)),
        "facts": [{"fact": str(f), "english": language.fact(f, labels)} for f in facts],
        "history": [_narrowed(u, name) for u in reversed(touched[-history_limit:])],
    }


def _mentions(update: Update, name: str) -> bool:
    delta = update.delta
    if any(e.name == name for e in delta.new_entities):
        return True
    return any(name in f.args for f in (*delta.add, *delta.remove, *(i.fact for i in update.issues if i.fact)))


def _narrowed(update: Update, name: str) -> dict[str, Any]:
    """The update with only the part of its delta about ``name`` (a survey adds hundreds of facts)."""
    data = UpdateOut.of(update).model_dump(mode="json")
    delta = data["delta"]
    for side in ("add", "remove"):
        delta[side] = [f for f in delta[side] if name in Fact.parse(f).args]
    delta["new_entities"] = [e for e in delta["new_entities"] if e["name"] == name]
    return data


def last_seq(store: GraphStore, memory: str) -> int:
    """The sequence number of the memory's newest update, in O(log n) small reads.

    Every applied update bumps the version, so the last one has ``seq >= version``; rejected and no-op
    updates come on top, so probe upwards by doubling, then bisect (never reading the whole history).
    """
    low = max(0, store.get_memory(memory).version - 1)  # history(low) holds the last applied update
    if not store.history(memory, low, 1):
        return low
    step = 1
    while store.history(memory, low + step, 1):
        low, step = low + step, step * 2
    high = low + step  # history(low) is non-empty, history(high) empty: the last seq is in (low, high]
    while high - low > 1:
        middle = (low + high) // 2
        if store.history(memory, middle, 1):
            low = middle
        else:
            high = middle
    return high


def memories(store: GraphStore) -> list[dict[str, Any]]:
    """Every memory with its domain, counts, version and last update (what the first panel lists)."""
    rows = []
    for record in store.list_memories():
        seq = last_seq(store, record.name)
        last = store.history(record.name, seq - 1, 1) if seq else []
        rows.append(
            {
                "name": record.name,
                "domain": record.domain,
                "version": record.version,
                "entities": len(store.entities(record.name)),
                "facts": len(store.facts(record.name)),
                "updates": seq,
                "last_update": last[0].time.isoformat() if last else None,
                "created": record.created.isoformat(),
            }
        )
    return sorted(rows, key=lambda r: r["name"])


def runtime_tasks(memory: WorldMemory, limit: int = 20) -> list[dict[str, Any]]:
    """The robot runtime's recent tasks, from the checkpoints it writes into the memory (newest first)."""
    seq = last_seq(memory.store, memory.name)
    recent = memory.history(max(0, seq - _RECENT_UPDATES))
    tasks = []
    for update in reversed(recent):
        task = update.meta.get("task")
        if isinstance(task, dict) and update.status is not UpdateStatus.REJECTED:
            tasks.append({**task, "step": update.meta.get("runtime_step"), "time": update.time.isoformat()})
        if len(tasks) >= limit:
            break
    return tasks
