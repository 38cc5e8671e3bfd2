"""Streaming export and import of a memory as JSON Lines, in constant memory both ways.

The stream is one JSON object a line: a header (``{"format", "memory": {name, domain, version}}``),
then ``{"entity": ...}`` lines (the entities at that version), an optional ``{"base": ...}`` line
(the state at the compaction horizon of a compacted memory), ``{"update": ...}`` lines in order,
and an ``{"end": {"updates", "version", "facts_sha256"}}`` line that tells a whole stream from a
cut one. gzip is the caller's choice (:func:`open_lines` reads either).

An import replays the history through the verifier as strictly as live updates: sources' rights
(only perception creates entities, static facts change only by perception or a revert), the
entity list's types, versions in order, unique ids, times that never go back and are not in the
future. The first offending update is named and the whole import is undone.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

from kg_memory._collector import collection_paused
from kg_memory._replay import Replay, facts_digest
from kg_memory.errors import InvalidValue, KgMemoryError
from kg_memory.model import Fact, Memory, pddl_name, strict_json
from kg_memory.operations import EXPORT_FORMAT, memory_record, state_at
from kg_memory.store import GraphStore
from kg_memory.verifier import Verifier

LINES_FORMAT = "l3mp.memory.jsonl/1"
PAGE = 2_000  # updates read and written per store round trip
CLOCK_SKEW = timedelta(minutes=5)  # how far in the future an imported time may be


_encode = strict_json  # the form stores keep meta in, so the export may copy it
_decode = json.JSONDecoder().raw_decode
_string = json.encoder.encode_basestring_ascii  # what the encoder writes for a str
# A delta without new entities holds only fact texts, which never contain ", " or ": ": its
# stored (default-separated) text becomes the compact one by dropping the spaces after them.
_FACTS_ONLY = '"new_entities": []}'


@runtime_checkable
class StoredHistory(Protocol):
    """A store that hands back its log's rows as stored (columns: seq, id, source, input, delta,
    status, issues, version, time, meta; the three JSON columns as text), so an export re-encodes
    them instead of building an ``Update`` for each and encoding it again."""

    def history_rows(self, memory: str, since_seq: int, limit: int) -> list[tuple[Any, ...]]: ...


def _line(data: Mapping[str, Any]) -> str:
    return _encode(data) + "\n"


def export_lines(store: GraphStore, memory: str, *, created: datetime | None = None) -> Iterator[str]:
    """The memory as JSON Lines, at its version when the export began (later writes are not in it).

    ``created``: the memory meant (see ``GraphStore.commit``). Each read is then checked to be of
    it before its lines are handed on, so a stream cut by its deletion never goes on with the
    memory made under its name since: it ends with :class:`UnknownMemory`, without its end line.
    """
    record = memory_record(store, memory, created=created)

    def check() -> None:
        memory_record(store, memory, created=created)

    version = record.version
    state = state_at(store, store.domains, memory, version)
    check()
    yield _line({"format": LINES_FORMAT, "memory": {"name": record.name, "domain": record.domain, "version": version}})
    for entity in sorted(state.entities.values(), key=lambda e: e.name):
        yield _line({"entity": entity.to_json()})
    horizon = store.horizon(memory)
    if horizon is not None:
        base = state_at(store, store.domains, memory, horizon[0])
        check()
        yield _line(
            {
                "base": {
                    "version": horizon[0],
                    "time": horizon[1].isoformat(),
                    "facts": sorted(str(f) for f in base.facts),
                    "summaries": horizon[2],
                }
            }
        )
    count = 0
    lines = _stored_lines(store, memory, version, check) if isinstance(store, StoredHistory) else None
    for line in lines or _decoded_lines(store, memory, version, check):
        yield line
        count += 1
    yield _line({"end": {"updates": count, "version": version, "facts_sha256": facts_digest(state.facts)}})


def _decoded_lines(store: GraphStore, memory: str, version: int, check: Callable[[], None]) -> Iterator[str]:
    """The update lines up to ``version``, from decoded updates (any store), each page ``check``ed."""
    after = 0
    while True:
        page = store.history(memory, after, PAGE)
        check()
        for update in page:
            if update.version > version:
                return
            row = update.to_json()
            del row["memory"]
            yield _line({"update": row})
        if len(page) < PAGE:
            return
        after = page[-1].seq


def _stored_lines(store: StoredHistory, memory: str, version: int, check: Callable[[], None]) -> Iterator[str]:
    """The same lines, byte for byte, from the stored rows: a store writes its JSON columns from
    the update's own ``to_json`` parts, so they are re-encoded compactly, in ``to_json``'s order."""
    after = 0
    while True:
        page = store.history_rows(memory, after, PAGE)
        check()
        for seq, id_, source, input_, delta, status, issues, number, time, meta in page:
            if number > version:
                return
            yield "".join(
                (
                    '{"update":{"id":',
                    _string(id_),
                    ',"seq":',
                    str(seq),
                    ',"source":',
                    _string(source),
                    ',"input":',
                    _string(input_),
                    ',"delta":',
                    _compact_delta(delta),
                    ',"status":',
                    _string(status),
                    ',"issues":',
                    _compact(issues),
                    ',"version":',
                    str(number),
                    ',"time":',
                    _string(time),
                    ',"meta":',
                    _compact(meta),
                    "}}\n",
                )
            )
        if len(page) < PAGE:
            return
        after = page[-1][0]


def _compact_delta(text: str) -> str:
    if text.endswith(_FACTS_ONLY):
        return text.replace(", ", ",").replace(": ", ":")
    return _compact(text)


def _compact(text: str) -> str:
    """Stored JSON text as the export writes it. Text a store wrote in that form (meta, since
    stores write it so) is copied: compact text has no ", " or ": " outside its strings, and
    text written with those separators has one unless it is the same either way."""
    if ", " not in text and ": " not in text:
        return text
    return _encode(_decode(text)[0])


def document_lines(data: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The old one-document export (``l3mp.memory/1``) as the parsed lines of a stream."""
    if not isinstance(data, Mapping) or data.get("format") != EXPORT_FORMAT:
        found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
        raise InvalidValue("memory export", found, f"expected format {EXPORT_FORMAT!r} or {LINES_FORMAT!r}")
    try:
        record, entities, facts = data["memory"], _array(data, "entities"), _array(data, "facts")
        header = {"name": record["name"], "domain": record["domain"], "version": record.get("version")}
    except (KeyError, TypeError) as exc:
        raise InvalidValue("memory export", _brief(data), f"it is malformed ({type(exc).__name__}: {exc})") from exc
    history = _array(data, "history") if data.get("history") is not None else []
    yield {"format": LINES_FORMAT, "memory": header}
    yield from ({"entity": e} for e in entities)
    if not history:  # a state without its history: one update, verified as perception's survey
        yield {"survey": {"facts": facts}}
    yield from ({"update": u} for u in history)
    try:
        digest = facts_digest(Fact.parse(f) for f in facts)
    except (TypeError, ValueError, KgMemoryError) as exc:
        raise InvalidValue("memory export", _brief(data), f"its facts are malformed ({exc})") from exc
    yield {"end": {"updates": len(history), "version": header["version"], "facts_sha256": digest}}


def _array(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data[key]
    if not isinstance(value, list | tuple):
        raise InvalidValue("memory export", f"its {key}", f"it must be an array, not a {type(value).__name__}")
    return list(value)


def _brief(data: Mapping[str, Any]) -> str:
    return f"{{{', '.join(sorted(map(str, data)))}}}"


def parse_lines(lines: Iterable[str | bytes]) -> Iterator[dict[str, Any]]:
    for number, line in _numbered(lines):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InvalidValue("memory export", f"line {number}", f"it is not JSON ({exc})") from exc
        except RecursionError:
            raise InvalidValue("memory export", f"line {number}", "its JSON is nested too deeply to read") from None
        if not isinstance(item, dict):
            raise InvalidValue("memory export", f"line {number}", "each line must be a JSON object")
        yield item


# What reading a body that is not UTF-8, or not whole gzip, raises (zlib: a corrupted stream).
_UNREADABLE = (UnicodeDecodeError, EOFError, zlib.error, gzip.BadGzipFile)


def _numbered(lines: Iterable[str | bytes]) -> Iterator[tuple[int, str | bytes]]:
    """The lines and their numbers; a stream that cannot be read as text is an
    :class:`InvalidValue`. Text is decoded (and un-gzipped) in blocks, so the line is only near."""
    reading = iter(lines)
    number = 1
    while True:
        try:
            line = next(reading)
        except StopIteration:
            return
        except _UNREADABLE as exc:
            problem = f"it is not UTF-8 JSON Lines, plain or gzipped ({type(exc).__name__}: {exc})"
            raise InvalidValue("memory export", f"the stream near line {number}", problem) from exc
        yield number, line
        number += 1


def open_lines(path: Path) -> IO[str]:
    """A JSON Lines export file, gzipped (by its magic number) or not."""
    with path.open("rb") as raw:
        gzipped = raw.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gzipped else path.open(encoding="utf-8")


def text_lines(raw: IO[bytes]) -> IO[str]:
    """A binary stream of JSON Lines as text, un-gzipped if it starts with gzip's magic number
    (closing the result leaves ``raw`` open: its owner closes it)."""
    start = raw.read(2)
    raw.seek(0)
    if start == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw), encoding="utf-8")
    return io.TextIOWrapper(raw, encoding="utf-8")


def import_stream(store: GraphStore, items: Iterable[Mapping[str, Any]], name: str | None = None) -> Memory:
    """Recreate a memory from parsed stream lines (see :func:`parse_lines`, :func:`document_lines`)."""
    stream = iter(items)
    header = next(stream, None)
    if not isinstance(header, Mapping) or header.get("format") != LINES_FORMAT:
        raise InvalidValue("memory export", "header", f"the first line must have format {LINES_FORMAT!r}")
    try:
        record = header["memory"]
        target = pddl_name(record["name"] if name is None else name, "memory")  # "" is a bad name, not none
        domain = store.domains.get(record["domain"])
    except (KeyError, TypeError) as exc:
        raise InvalidValue("memory export", "header", f"it is malformed ({type(exc).__name__}: {exc})") from exc
    store.create_memory(target, domain.name, importing=True)  # hidden until its state is loaded
    try:
        with collection_paused():
            Replay(store, target, Verifier(domain), datetime.now(UTC) + CLOCK_SKEW).run(stream)
    except BaseException:
        store.delete_memory(target)
        raise
    return store.get_memory(target)
