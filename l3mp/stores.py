"""Opening the configured store: the one place that maps a backend name to a class."""

from __future__ import annotations

from collections.abc import Callable

from kg_memory import DomainRegistry, GraphStore
from kg_memory.stores import Neo4jStore, SQLiteStore
from l3mp.settings import Settings


def _sqlite(settings: Settings, domains: DomainRegistry) -> GraphStore:
    return SQLiteStore(settings.sqlite_path, domains)


def _neo4j(settings: Settings, domains: DomainRegistry) -> GraphStore:
    store = Neo4jStore(settings.neo4j_uri, settings.neo4j_auth, domains, database=settings.neo4j_database)
    store.init_schema()
    return store


BACKENDS: dict[str, Callable[[Settings, DomainRegistry], GraphStore]] = {"sqlite": _sqlite, "neo4j": _neo4j}


def domain_registry(settings: Settings) -> DomainRegistry:
    """The shipped domains and those imported into ``settings.domains_path``.

    A memory records only its domain's name, so whoever opens it later must find the domain
    by that name: each imported domain has a folder named as the domain. A shipped domain
    keeps its name: a user folder named like one is not registered.
    """
    registry = DomainRegistry()
    root = settings.domains_path
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        if (folder / "domain.pddl").is_file() and folder.name not in registry:
            registry.register(folder.name, folder)
    return registry


def open_store(settings: Settings, domains: DomainRegistry | None = None) -> GraphStore:
    return BACKENDS[settings.store](settings, domains or domain_registry(settings))
