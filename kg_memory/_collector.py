"""Pausing Python's cyclic garbage collector while an allocation-heavy job runs."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_paused = 0  # blocks inside collection_paused, in every thread
_resume = False  # whether the outermost block found automatic collection on


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Automatic collection off until the outermost such block (of any thread) ends, then on
    again if it was on.

    A verified import keeps a batch of tens of thousands of young containers alive (updates,
    their deltas, facts and mappings), so the collector's generations fill again and again and
    each full collection walks every object of the process: the caller's too, however large.
    Reference counting still frees everything that is not a cycle; cycles wait for the first
    collection after the block.
    """
    global _paused, _resume
    with _lock:
        if _paused == 0:
            _resume = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _resume:
                gc.enable()
