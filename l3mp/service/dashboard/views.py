"""What the dashboard shows, as JSON-ready dicts built from a memory (no HTTP here, so it is testable alone).

The graph payload (:class:`~l3mp.service.schemas.GraphOut`) is deliberately compact (named columns, not
one object per entity): it is what the page loads first, and its size is measured
(``python -m experiments dashboard``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kg_memory import Entity, Fact, GraphStore, HistoryQuery, Update, UpdateStatus, WorldMemory
from kg_memory.unknowns import unplaced
from l3mp.operations.models import UpdateOut
from l3mp.service.dashboard.index import cached_counts, indexed, placement
from l3mp.service.schemas import GraphDiffOut, GraphEntitiesOut, GraphFactsOut, GraphOut

__all__ = ["FULL_GRAPH_LIMIT", "entity", "graph", "last_seq", "memories", "placement", "runtime_tasks"]

FULL_GRAPH_LIMIT = 3_000  # up to this many entities the page draws the whole graph; above, an outline
_RECENT_UPDATES = 500  # how far back the runtime panel looks for task checkpoints


def graph(memory: WorldMemory, version: int | None = None) -> GraphOut:
    """The state now, or at ``version`` with its difference from now."""
    now = indexed(memory)
    then = now if version is None or version == now.state.version else indexed(memory, version)
    state, current, domain = then.state, now.state, memory.domain
    types = sorted({e.type for e in state.entities.values()})
    return GraphOut(
        memory=memory.name,
        domain=domain.name,
        version=state.version if version is None else version,
        now=current.version,
        lineage={t: list(domain.lineage(t)) for t in types},
        constants=sorted(domain.constants),
        entities=entity_columns(state.entities, then.parent),
        facts=fact_columns(state.facts),
        unknown_location=sorted(e.name for e in unplaced(domain, state.entities, state.facts)),
        diff=None if then is now else diff(state.entities, state.facts, current.entities, current.facts),
    )


def entity_columns(entities: Mapping[str, Entity], parents: Mapping[str, str]) -> GraphEntitiesOut:
    rows = [entities[name] for name in sorted(entities)]
    return GraphEntitiesOut(
        name=[e.name for e in rows],
        type=[e.type for e in rows],
        label=[e.label for e in rows],
        parent=[parents.get(e.name) for e in rows],
    )


def fact_columns(facts: Iterable[Fact]) -> GraphFactsOut:
    rows = sorted(facts, key=lambda f: (f.predicate, f.args))
    return GraphFactsOut(predicate=[f.predicate for f in rows], args=[list(f.args) for f in rows])


def diff(
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
    """The sequence number of the memory's newest update (0 before any), through the history's index."""
    newest = newest_update(store, memory)
    return newest.seq if newest is not None else 0


def newest_update(store: GraphStore, memory: str) -> Update | None:
    found = store.query_history(memory, HistoryQuery(newest_first=True, limit=1))
    return found[0] if found else None


def memories(store: GraphStore) -> list[dict[str, Any]]:
    """Every memory with its domain, counts, version and last update (what the first panel lists),
    and whether the page draws it whole (``detail: full``) or as an outline first."""
    rows = []
    for record in store.list_memories():
        last = newest_update(store, record.name)
        entities, facts = cached_counts(store, record) or _counts(store, record.name)
        rows.append(
            {
                "name": record.name,
                "domain": record.domain,
                "version": record.version,
                "entities": entities,
                "facts": facts,
                "detail": "full" if entities <= FULL_GRAPH_LIMIT else "outline",
                "updates": last.seq if last else 0,
                "last_update": last.time.isoformat() if last else None,
                "created": record.created.isoformat(),
            }
        )
    return sorted(rows, key=lambda r: r["name"])


def _counts(store: GraphStore, memory: str) -> tuple[int, int]:
    return len(store.entities(memory)), len(store.facts(memory))


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
