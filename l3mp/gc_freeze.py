"""Freezing the objects alive after start-up out of the garbage collector's reach (long-running jobs, benchmarks)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_frozen(enabled: bool = True) -> Iterator[None]:
    """Collect, then move every object alive now out of the collector's reach until the block ends.

    Loading a domain imports unified-planning and its dependencies: ~85k long-lived objects that
    Python's full collections would otherwise walk again and again (hundreds of milliseconds in a
    run of updates). A service freezes them once after start-up; benchmarks do the same so their
    passes measure what the timed code allocates.
    """
    if enabled:
        gc.collect()
        gc.freeze()
    try:
        yield
    finally:
        if enabled:
            gc.unfreeze()
