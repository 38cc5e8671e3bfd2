"""unified-planning's global environment: the lock every use of it holds, and its settings for
reading PDDL (domains here, problems in :mod:`planning.pddl_io`)."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# unified-planning keeps global, unsynchronized state (its environment's type and
# expression managers): every use of it in this process holds this lock.
UP_LOCK = threading.RLock()


@contextmanager
def pddl_reading_environment() -> Iterator[Any]:
    """The global environment, holding :data:`UP_LOCK`, set to read PDDL as PDDL means it.

    PDDL lets a type and a predicate share a name (IPC's schedule domain does), which
    unified-planning rejects unless error_used_name is off. A private Environment would be
    cleaner, but its reader builds forall variables in the global one, so the flag is switched
    on the global environment for the block and restored after it. The reader's warnings about
    those shared names and pyparsing's deprecations are silenced for the block.
    """
    # Heavy import, kept off module import.
    from unified_planning.environment import get_environment

    with UP_LOCK:  # get_environment() itself races: two threads can each create "the" global one
        environment = get_environment()
        previous = environment.error_used_name
        environment.error_used_name = False
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=r"Name .* already defined", category=UserWarning)
                # unified-planning 1.3 still calls pyparsing's camelCase API, deprecated in 3.3
                warnings.filterwarnings("ignore", category=DeprecationWarning)
                yield environment
        finally:
            environment.error_used_name = previous
