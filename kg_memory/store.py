"""The one protocol every world-state backend implements.

Backends store and fetch; they do not verify. ``WorldMemory`` verifies a delta and then
commits it, and the backends only guarantee that a commit is atomic, version-checked and
applicable (a fact to remove is present, one to add is absent, its entities exist).
Generic operations built on these primitives (k-hop neighbourhood, replay to a past
version, export/import) live in :mod:`kg_memory.operations`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from kg_memory.domain import DomainRegistry
from kg_memory.model import Entity, Fact, Memory, Update


def fact_order(fact: Fact) -> tuple[str, tuple[str, ...]]:
    """The order stores cut a limited read in: by predicate, then by arguments.

    Names are [a-z0-9_-], all above the space, so this equals both SQLite's order of
    space-joined argument text and Cypher's element-wise order of argument lists.
    """
    return (fact.predicate, fact.args)


@runtime_checkable
class GraphStore(Protocol):
    backend: str
    domains: DomainRegistry  # resolves each memory's domain by name

    def create_memory(self, name: str, domain: str) -> Memory:
        """Create an empty memory (holding the domain's constants) at version 0."""
        ...

    def get_memory(self, name: str) -> Memory:
        """The memory's record; :class:`UnknownMemory` if there is none."""
        ...

    def list_memories(self) -> list[Memory]: ...

    def delete_memory(self, name: str) -> None:
        """Delete the memory, its state and its history."""
        ...

    def entities(self, memory: str, names: Iterable[str] | None = None) -> dict[str, Entity]:
        """All entities, or those among ``names`` that exist."""
        ...

    def facts(self, memory: str, predicate: str | None = None, entity: str | None = None) -> frozenset[Fact]:
        """Facts, optionally only of one predicate and/or mentioning one entity."""
        ...

    def facts_about(self, memory: str, names: Iterable[str], limit: int | None = None) -> frozenset[Fact]:
        """Facts with any of ``names`` as an argument, plus every nullary fact.

        With ``limit``, only the first ``limit`` of them in :func:`fact_order`.
        """
        ...

    def commit(self, update: Update, expected_version: int) -> Update:
        """Apply an update's delta and log it in one transaction.

        Raises :class:`VersionConflict` if the memory is not at ``expected_version`` and
        :class:`NotApplicable` if the delta does not apply; in both cases nothing is written.
        Returns the update with its ``seq`` and new ``version``.
        """
        ...

    def record(self, update: Update) -> Update:
        """Log a rejected or no-op update without changing the state."""
        ...

    def history(self, memory: str, since_seq: int = 0, limit: int | None = None) -> list[Update]:
        """Updates with ``seq > since_seq`` in order."""
        ...

    def get_update(self, memory: str, update_id: str) -> Update: ...

    def close(self) -> None: ...
