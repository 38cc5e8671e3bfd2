"""unified-planning's global environment is set for reading PDDL only inside the block, and
only one thread at a time is inside."""

from __future__ import annotations

import threading
import warnings

import pytest
from unified_planning.environment import get_environment

from kg_memory import UP_LOCK
from kg_memory.up_environment import pddl_reading_environment


def _free_in_another_thread() -> bool:
    """Whether another thread could take UP_LOCK now (without waiting for it)."""
    taken: list[bool] = []

    def attempt() -> None:
        got = UP_LOCK.acquire(blocking=False)
        if got:
            UP_LOCK.release()
        taken.append(got)

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return taken == [True]


def test_the_name_flag_is_off_inside_and_restored_after() -> None:
    environment = get_environment()
    assert environment.error_used_name
    with pddl_reading_environment() as inside:
        assert inside is environment and not environment.error_used_name
        assert not _free_in_another_thread()
    assert environment.error_used_name and _free_in_another_thread()


def test_the_flag_is_restored_when_reading_fails() -> None:
    with pytest.raises(ValueError, match="unreadable"), pddl_reading_environment():
        raise ValueError("unreadable")
    assert get_environment().error_used_name and _free_in_another_thread()


def test_a_holder_of_the_lock_may_enter_and_the_readers_warnings_are_silenced() -> None:
    with UP_LOCK, pddl_reading_environment():  # the lock is reentrant: callers that hold it may read
        warnings.warn("Name temperature already defined", UserWarning, stacklevel=1)
        warnings.warn("parseString is deprecated", DeprecationWarning, stacklevel=1)
