"""Operations every store gets from the protocol's primitives: k-hop neighbourhoods,
replay to a past version, and export/import of a memory as JSON."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kg_memory.domain import Domain, DomainRegistry
from kg_memory.errors import InvalidValue, KgMemoryError
from kg_memory.model import (
    Delta,
    Entity,
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
from kg_memory.verifier import Verifier

EXPORT_FORMAT = "l3mp.memory/1"


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
    return Neighbourhood(seed_names, entities, tuple(facts), distance, truncated)


def current_state(store: GraphStore, memory: str) -> State:
    version = store.get_memory(memory).version
    return State(store.entities(memory), store.facts(memory), version)


def state_at(store: GraphStore, domains: DomainRegistry, memory: str, version: int) -> State:
    """Rebuild the state after ``version`` by replaying the applied updates."""
    record = store.get_memory(memory)
    if not isinstance(version, int) or isinstance(version, bool) or not 0 <= version <= record.version:
        raise InvalidValue("version", version, f"memory {memory!r} has versions 0..{record.version}")
    entities = {e.name: e for e in domains.get(record.domain).constant_entities()}
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


def import_memory(store: GraphStore, data: Mapping[str, Any], name: str | None = None) -> Memory:
    """Recreate an exported memory under ``name`` (default: its own), history included.

    The exported state is verified as a whole against its domain before anything is written,
    so an import cannot bring in facts no update could have made. The history is replayed,
    so past versions stay inspectable; an export without history becomes one ``api`` update.
    The result is checked against the exported state.
    """
    if not isinstance(data, Mapping) or data.get("format") != EXPORT_FORMAT:
        found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
        raise InvalidValue("memory export", found, f"expected format {EXPORT_FORMAT!r}")
    try:
        record = data["memory"]
        target = pddl_name(name or record["name"], "memory")
        entities = tuple(Entity.from_json(e) for e in data["entities"])
        facts = frozenset(Fact.parse(f) for f in data["facts"])
        history = [Update.from_json({**u, "memory": target}) for u in data.get("history", ())]
    except (KeyError, TypeError, ValueError) as exc:  # missing keys, wrong shapes, unknown enum values
        raise InvalidValue("memory export", _brief(data), f"it is malformed ({type(exc).__name__}: {exc})") from exc
    _verify_export(store.domains.get(record["domain"]), target, entities, facts)
    store.create_memory(target, record["domain"])
    try:
        _replay_into(store, target, entities, facts, history)
        _check_import(store, target, data)
    except BaseException:
        store.delete_memory(target)
        raise
    return store.get_memory(target)


def _brief(data: Mapping[str, Any]) -> str:
    return f"{{{', '.join(sorted(map(str, data)))}}}"


class _Empty:
    """An empty state: the exported state is verified as if perception surveyed it afresh."""

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        return {}

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        return frozenset()


def _verify_export(domain: Domain, target: str, entities: tuple[Entity, ...], facts: frozenset[Fact]) -> None:
    created = tuple(e for e in entities if e.name not in domain.constants)
    issues = Verifier(domain).verify(Delta(add=facts, new_entities=created), _Empty(), UpdateSource.SENSOR)
    if issues:
        shown = "; ".join(i.message for i in issues[:5])
        more = f" (and {len(issues) - 5} more)" if len(issues) > 5 else ""
        raise ImportMismatch(target, f"the exported state breaks its domain: {shown}{more}")


def _replay_into(
    store: GraphStore, target: str, entities: tuple[Entity, ...], facts: frozenset[Fact], history: list[Update]
) -> None:
    if not history:
        constants = set(store.entities(target))
        delta = Delta(add=facts, new_entities=tuple(e for e in entities if e.name not in constants))
        history = [Update(target, UpdateSource.API, delta, UpdateStatus.APPLIED, input="import", version=1)]
    for update in history:
        if update.status is UpdateStatus.APPLIED:
            store.commit(update, expected_version=update.version - 1)
        else:
            store.record(update)


def _check_import(store: GraphStore, target: str, data: Mapping[str, Any]) -> None:
    facts = {str(f) for f in store.facts(target)}
    if facts != set(data["facts"]):
        raise ImportMismatch(target, "replaying the history does not give the exported facts")
    if set(store.entities(target)) != {e["name"] for e in data["entities"]}:
        raise ImportMismatch(target, "replaying the history does not give the exported entities")
