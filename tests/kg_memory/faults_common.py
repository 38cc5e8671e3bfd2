"""Helpers shared by the fault-injection tests."""

from __future__ import annotations

import socket
from pathlib import Path

from conftest import SURVEY_ENTITIES, SURVEY_FACTS, unique_name

from kg_memory import (
    Fact,
    GraphStore,
    Update,
    UpdateSource,
    UpdateStatus,
    WorldMemory,
)

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def survey(store: GraphStore, name: str | None = None) -> WorldMemory:
    memory = WorldMemory.create(store, name or unique_name("home"), "example_home")
    update = memory.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    assert update.status is UpdateStatus.APPLIED, update.issues
    return memory


def replay(facts: frozenset[Fact], updates: list[Update]) -> frozenset[Fact]:
    """Apply applied updates in order, checking each one applied exactly to its predecessor."""
    state = set(facts)
    for update in updates:
        assert update.status is UpdateStatus.APPLIED
        assert update.delta.remove <= state, f"update v{update.version} removes facts that did not hold"
        assert not update.delta.add & state, f"update v{update.version} adds facts that already held"
        state.difference_update(update.delta.remove)
        state.update(update.delta.add)
    return frozenset(state)


def assert_history_consistent(memory: WorldMemory) -> list[Update]:
    """History seqs are 1..n, applied versions are 0 (the domain's constants) then 1..version, and
    replay gives the state."""
    history = memory.history()
    version = memory.version
    assert [u.seq for u in history] == list(range(1, len(history) + 1))
    assert history[0].source is UpdateSource.DOMAIN and history[0].version == 0
    applied = [u for u in history[1:] if u.status is UpdateStatus.APPLIED]
    assert [u.version for u in applied] == list(range(1, version + 1))
    assert memory.state_at(version).facts == memory.facts()
    assert set(memory.state_at(version).entities) == set(memory.entities())
    return applied
