"""Shared by the write routes."""

from __future__ import annotations

from kg_memory import Update, UpdateStatus
from l3mp.service.errors import Rejected
from l3mp.service.schemas import UpdateOut


def recorded(update: Update) -> UpdateOut:
    """The update as a response, or :class:`Rejected` (mapped to 422) when it was rejected."""
    if update.status is UpdateStatus.REJECTED:
        raise Rejected(update)
    return UpdateOut.of(update)
