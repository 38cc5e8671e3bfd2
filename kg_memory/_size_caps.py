"""Size caps on what a rejected or failed update records: a refused 1 MB delta must not become a
2 MB history row that no export can carry. What is cut is named with its size and hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

from kg_memory.model import Delta, Update

MAX_DELTA_BYTES = 64_000  # a delta's JSON, beyond which a rejected update keeps a prefix
MAX_INPUT_CHARS = 64_000
MAX_ISSUES = 100


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _prefix(delta: Delta, budget: int) -> Delta:
    """As many removals, additions and entities (in order) as fit in ``budget`` bytes of JSON."""
    used = 0

    def fits(text: str) -> bool:
        nonlocal used
        used += len(text) + 4
        return used <= budget

    remove = [f for f in sorted(delta.remove, key=str) if fits(str(f))]
    add = [f for f in sorted(delta.add, key=str) if fits(str(f))]
    entities = tuple(e for e in delta.new_entities if fits(json.dumps(e.to_json())))
    return Delta(remove=frozenset(remove), add=frozenset(add), new_entities=entities)


def capped(update: Update) -> Update:
    """``update`` (rejected or no-op) within the caps; ``meta["truncated"]`` says what was cut."""
    cut: dict[str, Any] = {}
    delta, text, issues = update.delta, update.input, update.issues
    delta_json = json.dumps(delta.to_json())
    if len(delta_json) > MAX_DELTA_BYTES:
        delta = _prefix(delta, MAX_DELTA_BYTES // 4)
        cut["delta"] = {
            "bytes": len(delta_json),
            "sha256": _digest(delta_json),
            "changes": update.delta.size,
            "kept": delta.size,
        }
    if len(text) > MAX_INPUT_CHARS:
        cut["input"] = {"chars": len(text), "sha256": _digest(text)}
        text = text[:MAX_INPUT_CHARS]
    if len(issues) > MAX_ISSUES:
        cut["issues"] = {"count": len(issues)}
        issues = issues[:MAX_ISSUES]
    if not cut:
        return update
    return replace(update, delta=delta, input=text, issues=issues, meta={**update.meta, "truncated": cut})
