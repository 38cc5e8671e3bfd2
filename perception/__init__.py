"""Observations to deltas against the current state. Built in the updates issue."""

__all__: list[str] = []
