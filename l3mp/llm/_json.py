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
    """A system-prompt paragraph asking for JSON of ``schema``'s shape (for servers without json_schema).

    It shows the schema's :func:`outline`, not the schema: a schema built per request (enums of the
    request's names) would make this paragraph, which leads the conversation, differ on every request,
    and no server could reuse the prompt's cached prefix. The prompt itself lists the names."""
    rendered = json.dumps(outline(schema), indent=2, sort_keys=True)
    return (
        f"Reply with a single JSON value named {name!r} that conforms to this JSON schema, "
        f"and nothing else (no prose, no code fences):\n{rendered}"
    )


_WORDS = ("enum", "const", "pattern", "minItems", "maxItems", "prefixItems", "$defs", "$ref", "anyOf")


def outline(schema: Any, defs: Mapping[str, Any] | None = None) -> Any:
    """``schema``'s shape without its words: ``$ref`` followed, an ``enum``/``const`` as its values' type,
    patterns and lengths dropped, ``prefixItems`` as ``items``, and the ``anyOf`` branches that are the
    same shape merged. A schema that has none of these is returned as it is."""
    if not isinstance(schema, Mapping):
        return schema
    defs = schema.get("$defs", defs) or {}
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in defs:
        return outline(defs[ref.removeprefix("#/$defs/")], defs)
    shaped = {k: v for k, v in schema.items() if k not in _WORDS}
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if values is not None and "type" not in shaped:
        shaped["type"] = _json_type(values)
    if "prefixItems" in schema and "items" not in schema:
        shaped["items"] = _merged([outline(i, defs) for i in schema["prefixItems"]])
    if "anyOf" in schema:
        shaped |= _merged([outline(b, defs) for b in schema["anyOf"]])
    for key in ("properties",):
        if isinstance(shaped.get(key), Mapping):
            shaped[key] = {k: outline(v, defs) for k, v in shaped[key].items()}
    if isinstance(shaped.get("items"), Mapping):
        shaped["items"] = outline(shaped["items"], defs)
    return shaped


def _merged(branches: list[Any]) -> dict[str, Any]:
    """One branch when all are the same shape, a list of types for bare types, else ``anyOf`` the distinct ones."""
    distinct: list[Any] = []
    for branch in branches:
        if branch not in distinct:
            distinct.append(branch)
    if len(distinct) == 1 and isinstance(distinct[0], Mapping):
        return dict(distinct[0])
    if distinct and all(isinstance(b, Mapping) and set(b) == {"type"} and isinstance(b["type"], str) for b in distinct):
        return {"type": [b["type"] for b in distinct]}  # {"type": ["string", "null"]}
    return {"anyOf": distinct} if distinct else {}


def _json_type(values: list[Any]) -> str | list[str]:
    names = {"str": "string", "bool": "boolean", "int": "integer", "float": "number", "NoneType": "null"}
    types = sorted({names.get(type(v).__name__, "object") for v in values})
    return types[0] if len(types) == 1 else types
