"""Unknowns in a retrieved context: the context's entities whose location the memory has lost.

A context is a closed world slice: an item with no location fact in it would read as "nowhere". These
are listed beside it, each with where it was last seen, so prompts show them as unknown, not absent.
"""

from __future__ import annotations

from kg_memory.memory import WorldMemory
from kg_memory.unknowns import Unknown, unknown_locations
from retrieval.context import Context


def context_unknowns(memory: WorldMemory, context: Context) -> tuple[Unknown, ...]:
    """The unknown-location entities among ``context``'s, judged on the memory's full state."""
    if not context.entities:
        return ()
    facts = memory.store.facts_about(memory.name, context.entities)
    return unknown_locations(memory, memory.domain, context.entities, facts)
