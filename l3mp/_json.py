"""One way to write the product's frozen records as JSON-ready values, instead of a ``to_json`` by hand
for each: fields in declaration order, tuples as lists, enums as their values, and a nested record
through its own ``to_json`` when it has one (its rounding or renamed keys stay its own)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import fields, is_dataclass

JSONObject = dict[str, object]  # what ``json.dumps`` takes: str, numbers, bools, None, lists and such dicts


def json_of(record: object) -> JSONObject:
    """``record`` (a dataclass instance) as a dict of JSON-ready values; a private field (``_hash``)
    is the record's own business, not part of its value."""
    if not is_dataclass(record) or isinstance(record, type):
        raise TypeError(f"json_of takes a dataclass instance, not {record!r}")
    return {f.name: plain(getattr(record, f.name)) for f in fields(record) if not f.name.startswith("_")}


def plain(value: object) -> object:
    """``value`` as JSON-ready data (see the module)."""
    if isinstance(value, enum.Enum):
        return value.value
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    if is_dataclass(value) and not isinstance(value, type):
        return json_of(value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    return value
