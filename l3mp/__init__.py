"""l3mp: a lifelong world-state memory for service robots (the product: settings, wiring, language
models, pipelines, runtime, service and CLI).

Its names are loaded on first use, so ``l3mp --help`` does not pay for what a command never needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg_memory.errors import L3mpError
    from l3mp.settings import Settings
    from l3mp.wiring import open_store

__all__ = ["L3mpError", "Settings", "open_store"]
__version__ = "0.1.0"

_WHERE = {"L3mpError": "kg_memory.errors", "Settings": "l3mp.settings", "open_store": "l3mp.wiring"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'l3mp' has no attribute {name!r}")
