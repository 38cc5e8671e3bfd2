"""Environments: the text household simulator and the AI2-THOR adapter. Built in the
simulator issue."""

__all__: list[str] = []
