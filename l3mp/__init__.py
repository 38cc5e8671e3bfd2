"""l3mp: a lifelong world-state memory for service robots (composition root)."""

from kg_memory.errors import L3mpError
from l3mp.settings import Settings
from l3mp.stores import open_store

__all__ = ["L3mpError", "Settings", "open_store"]
__version__ = "0.1.0"
