"""Shared by the routes."""

from __future__ import annotations

from l3mp.operations.errors import Rejected
from l3mp.operations.models import UpdateOut

TIME = "ISO 8601 with a timezone, e.g. 2025-05-01T08:00:00+00:00"


def recorded(update: UpdateOut) -> UpdateOut:
    """The update as a response, or :class:`Rejected` (mapped to 422) when it was rejected."""
    if update.status == "rejected":
        raise Rejected(update)
    return update
