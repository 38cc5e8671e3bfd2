"""Backends of :class:`kg_memory.store.GraphStore`."""

from kg_memory.stores.neo4j import Neo4jStore
from kg_memory.stores.sqlite import SQLiteStore

__all__ = ["Neo4jStore", "SQLiteStore"]
