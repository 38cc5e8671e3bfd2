"""Operations every store gets from the protocol's primitives: k-hop neighbourhoods,
replay to a past version and the one-document JSON export (streaming export and import are
in :mod:`kg_memory.jsonl_stream`)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from kg_memory.domain import DomainRegistry
from kg_memory.errors import InvalidValue, KgMemoryError, UnknownMemory
from kg_memory.history import Checkpoint, HistoryCompacted, touched
from kg_memory.model import (
    Delta,
    Fact,
    Memory,
    Neighbourhood,
    State,
    Update,
    UpdateSource,
    UpdateStatus,
    pddl_name,
)
from kg_memory.store import GraphStore, fact_order

EXPORT_FORMAT = "l3mp.memory/1"


def memory_record(store: GraphStore, memory: str, *, created: datetime | None = None) -> Memory:
    """The memory's record. ``created``: the memory meant (see ``GraphStore.commit``); when another
    holds the name now, that one was deleted, and :class:`UnknownMemory` is raised."""
    record = store.get_memory(memory)
    if created is not None and record.created != created:
        raise UnknownMemory(memory)
    return record


def neighbourhood(
    store: GraphStore, memory: str, seeds: Iterable[str], hops: int = 2, max_facts: int = 200
) -> Neighbourhood:
    """Facts within ``hops`` of the seeds, breadth first, so nearer facts win the cap.

    A fact is at hop ``d`` if it mentions an entity at distance ``d - 1``; its other
    arguments are then at distance ``d``. Within a hop, the cap keeps facts in
    :func:`fact_order`, and the store is asked for no more than the cap needs.
    """
    if hops < 0 or max_facts < 0:
        raise InvalidValue("neighbourhood limits", (hops, max_facts), "must not be negative")
    if isinstance(seeds, str):
        raise InvalidValue("neighbourhood seeds", seeds, "pass a collection of entity names, not one string")
    seed_names = tuple(dict.fromkeys(pddl_name(s) for s in seeds))
    distance = {name: 0 for name in store.entities(memory, seed_names)}
    frontier = sorted(distance)
    facts: dict[Fact, None] = {}
    truncated = False
    for hop in range(1, hops + 1):
        if not frontier:
            break
        remaining = max_facts - len(facts)
        # facts already taken may come back; one more than needed tells whether we cut
        found = store.facts_about(memory, frontier, limit=remaining + len(facts) + 1)
        new = sorted(found - facts.keys(), key=fact_order)
        if len(new) > remaining:
            new, truncated = new[:remaining], True
        facts.update(dict.fromkeys(new))
        frontier = sorted({a for f in new for a in f.args if a not in distance})
        distance.update({name: hop for name in frontier})
        if truncated:
            break
    entities = store.entities(memory, distance)
    return Neighbourhood(
        seeds=seed_names, entities=entities, facts=tuple(facts), distance=distance, truncated=truncated
    )


def current_state(store: GraphStore, memory: str) -> State:
    version = store.get_memory(memory).version
    return State(store.entities(memory), store.facts(memory), version)


def state_at(store: GraphStore, domains: DomainRegistry, memory: str, version: int) -> State:
    """Rebuild the state after ``version``: the nearest checkpoint at or before it, plus the
    applied updates since (at most ``store.checkpoint_every`` of them)."""
    record = store.get_memory(memory)
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= record.version:
        raise InvalidValue("version", version, f"memory {memory!r} has versions 0..{record.version}")
    horizon = store.horizon(memory)
    if horizon is not None and version < horizon[0]:
        raise HistoryCompacted(memory, version, horizon[0], horizon[1])
    checkpoint, deltas = store.replay_from(memory, version)
    if checkpoint is None:
        entities = {e.name: e for e in domains.get(record.domain).constant_entities()}
        facts: set[Fact] = set()
        base = 0
    else:
        entities = {e.name: e for e in checkpoint.entities}
        facts = set(checkpoint.facts)
        base = checkpoint.version
    del base  # the deltas start after the checkpoint's version
    for delta in deltas:
        entities.update({e.name: e for e in delta.new_entities})
        facts.difference_update(delta.remove)
        facts.update(delta.add)
    return State(entities, frozenset(facts), version)


def full_replay(store: GraphStore, domains: DomainRegistry, memory: str, version: int) -> State:
    """``state_at`` the slow way, from version 0 through the whole log (for tests and audits)."""
    entities = {e.name: e for e in domains.get(store.get_memory(memory).domain).constant_entities()}
    facts: set[Fact] = set()
    for update in store.history(memory):
        if update.status is not UpdateStatus.APPLIED or update.version > version:
            continue
        entities.update({e.name: e for e in update.delta.new_entities})
        facts.difference_update(update.delta.remove)
        facts.update(update.delta.add)
    return State(entities, frozenset(facts), version)


def export_memory(store: GraphStore, memory: str) -> dict[str, Any]:
    """The memory, its current state and its full history as JSON-ready data."""
    record = store.get_memory(memory)
    state = current_state(store, memory)
    return {
        "format": EXPORT_FORMAT,
        "memory": {"name": record.name, "domain": record.domain, "version": state.version},
        "entities": [e.to_json() for e in sorted(state.entities.values(), key=lambda e: e.name)],
        "facts": sorted(str(f) for f in state.facts),
        "history": [u.to_json() for u in store.history(memory)],
    }


class ImportMismatch(KgMemoryError):
    def __init__(self, memory: str, problem: str) -> None:
        self.memory = memory
        super().__init__(f"import of {memory!r} failed: {problem}; nothing was imported")


def compact(
    store: GraphStore, memory: str, before_version: int, *, input: str = "", created: datetime | None = None
) -> Update:
    """Drop the history up to ``before_version`` into a checkpoint and per-entity summaries
    (first and last time an update touched it, number of updates), recorded as a noop update
    whose meta says what was compacted. ``created``: the memory meant (see ``GraphStore.commit``);
    without it, the memory holding the name as compaction starts, which is the one it writes to."""
    record = memory_record(store, memory, created=created)
    created = record.created
    if not isinstance(before_version, int) or not 0 < before_version <= record.version:
        raise InvalidValue("compaction horizon", before_version, f"memory {memory!r} has versions 1..{record.version}")
    previous = store.horizon(memory)
    if previous is not None and before_version <= previous[0]:
        raise InvalidValue(
            "compaction horizon", before_version, f"the history before {previous[0]} is compacted already"
        )
    state = state_at(store, store.domains, memory, before_version)
    summaries = dict(previous[2]) if previous is not None else {}
    after, dropped = 0, 0
    while True:
        page = store.history(memory, after, 5_000)
        for update in page:
            if update.version > before_version:
                page = []
                break
            dropped += 1
            for name in touched(update):
                first, _, changes = summaries.get(name, (update.time.isoformat(), "", 0))
                summaries[name] = (first, update.time.isoformat(), changes + 1)
        if len(page) < 5_000:
            break
        after = page[-1].seq
    when = datetime.now(UTC)
    checkpoint = Checkpoint(before_version, tuple(sorted(state.entities.values(), key=lambda e: e.name)), state.facts)
    removed = store.compact(memory, checkpoint, when, {n: list(v) for n, v in summaries.items()}, created=created)
    meta = {
        "compaction": {"horizon": before_version, "updates_removed": removed, "entities_summarized": len(summaries)}
    }
    note = Update(
        memory=memory,
        source=UpdateSource.API,
        delta=Delta(),
        status=UpdateStatus.NOOP,
        input=input or f"compact history before version {before_version}",
        version=store.get_memory(memory).version,
        meta=meta,
    )
    return store.record(note, created=created)
