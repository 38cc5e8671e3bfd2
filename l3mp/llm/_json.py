"""Pulling JSON out of model replies, shared by every backend."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from l3mp.llm.base import MalformedOutput

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
_SHAPES: dict[str, type | tuple[type, ...]] = {"object": dict, "array": list}
# Replies longer than this are not parsed: no prompt here asks for more than a few hundred tokens.
MAX_REPLY_CHARS = 100_000
# Nesting deeper than this is refused before parsing; the answers asked for nest 4 levels at most.
MAX_DEPTH = 64


def parse_json(text: str, schema: Mapping[str, Any] | None = None, *, max_chars: int = MAX_REPLY_CHARS) -> Any:
    """The JSON value in ``text`` (bare, fenced in ```json, or the outermost {...} / [...] span).

    Checks only the top-level type against ``schema``; deeper validation is the caller's job.
    Raises MalformedOutput carrying the raw text (cut to ``max_chars``) for an empty, oversized,
    over-deep or unreadable reply.
    """
    if len(text) > max_chars:
        raise MalformedOutput(text[:max_chars], f"the reply is {len(text):,} characters, over the {max_chars:,} limit")
    if _depth(text) > MAX_DEPTH:
        raise MalformedOutput(text[:2_000], f"the JSON nests deeper than {MAX_DEPTH} levels")
    value = _first_json(text)
    expected = schema.get("type") if schema else None
    if isinstance(expected, str) and expected in _SHAPES and not isinstance(value, _SHAPES[expected]):
        raise MalformedOutput(text, f"expected a JSON {expected}, got {type(value).__name__}")
    return value


def _first_json(text: str) -> Any:
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for opening, closing in ("{}", "[]"):
        start, end = text.find(opening), text.rfind(closing)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):
            continue
    raise MalformedOutput(text, "no JSON found" if text.strip() else "empty reply")


def _depth(text: str) -> int:
    """The deepest bracket nesting in ``text`` (strings included: an over-estimate is harmless)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


def schema_instruction(schema: Mapping[str, Any], name: str) -> str:
    """A system-prompt paragraph asking for JSON that follows ``schema`` (for servers without json_schema)."""
    rendered = json.dumps(schema, indent=2, sort_keys=True)
    return (
        f"Reply with a single JSON value named {name!r} that conforms to this JSON schema, "
        f"and nothing else (no prose, no code fences):\n{rendered}"
    )
