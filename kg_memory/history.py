"""The history's derived structures, shared by both stores: checkpoints (snapshots of the state
every K versions), the index of which updates touched which entity ("touches"), and the queries
built on them (one entity's history, a time range, by source and status, the validity intervals
of a fact, when an entity was last seen by perception)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from kg_memory.errors import InvalidValue, KgMemoryError
from kg_memory.model import Entity, Fact, Update, UpdateSource, UpdateStatus, normalise_name

# A snapshot every this many versions: state_at replays at most this many updates.
DEFAULT_CHECKPOINT_EVERY = 250
# The pseudo-entity nullary facts are indexed under (they name no entity).
NO_ENTITY = ""
# Page size of history queries when the caller gives none, and the most one page may hold.
DEFAULT_PAGE = 100
MAX_PAGE = 10_000


class HistoryCompacted(KgMemoryError):
    """The history before ``horizon`` was compacted away, so that past cannot be rebuilt."""

    def __init__(self, memory: str, version: int, horizon: int, when: datetime | None) -> None:
        self.memory, self.version, self.horizon, self.when = memory, version, horizon, when
        at = f" on {when.isoformat(timespec='seconds')}" if when else ""
        super().__init__(
            f"memory {memory!r}: version {version} is before version {horizon}, where its history was "
            f"compacted{at}; only versions {horizon} and later can be rebuilt"
        )


def timestamp_us(when: datetime) -> int:
    """Microseconds since the epoch: the sortable time both stores index."""
    return int(when.timestamp() * 1_000_000)


def from_timestamp_us(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1_000_000, UTC)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The state after ``version``: every entity and fact."""

    version: int
    entities: tuple[Entity, ...]
    facts: frozenset[Fact]

    def encode(self) -> bytes:
        """Compact JSON, gzipped: a 400-entity home is about 10 kB. Facts are kept in their text
        form, which :meth:`Fact.from_stored` reads back without re-validating (replay is hot)."""
        data = {
            "format": 2,
            "version": self.version,
            "entities": [[e.name, e.type, e.label, dict(e.attrs)] for e in self.entities],
            "facts": sorted(str(f) for f in self.facts),
        }
        return gzip.compress(json.dumps(data, separators=(",", ":")).encode(), compresslevel=1)

    @classmethod
    def decode(cls, blob: bytes) -> Checkpoint:
        data = json.loads(gzip.decompress(blob))
        entities = tuple(Entity.unchecked(n, t, label, a) for n, t, label, a in data["entities"])
        if data.get("format") == 2:
            facts = frozenset(map(Fact.from_stored, data["facts"]))
        else:  # the first format: [predicate, [args], value]
            facts = frozenset(Fact.unchecked(p, tuple(args), value) for p, args, value in data["facts"])
        return cls(int(data["version"]), entities, facts)


def touched(update: Update) -> dict[str, bool]:
    """The entities an update is indexed under, each with whether perception saw it then.

    That is every entity its delta mentions (nullary facts under :data:`NO_ENTITY`), plus, for a
    perception update that was not rejected, every entity the observation named (``meta["seen"]``).
    """
    delta = update.delta
    names: dict[str, bool] = dict.fromkeys(delta.mentioned(), False)
    if any(not f.args for facts in (delta.remove, delta.add) for f in facts):
        names[NO_ENTITY] = False
    if update.source is UpdateSource.SENSOR and update.status is not UpdateStatus.REJECTED:
        seen = update.meta.get("seen")
        mentioned = seen if isinstance(seen, list) else list(delta.mentioned())
        names.update({str(n): True for n in mentioned if isinstance(n, str)})
    return names


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryQuery:
    """Which updates to list: all filters are optional and combine with AND.

    ``after`` is the cursor: the ``seq`` of the last update of the previous page (``before`` when
    paging newest first). ``since``/``until`` bound the update's time (``since`` inclusive).
    """

    entity: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    source: UpdateSource | None = None
    status: UpdateStatus | None = None
    after: int = 0
    before: int | None = None
    limit: int = DEFAULT_PAGE
    newest_first: bool = False
    seen_only: bool = False  # with ``entity``: only updates in which perception saw it

    def __post_init__(self) -> None:
        if self.entity is not None:  # looked up as it was created
            object.__setattr__(self, "entity", normalise_name(self.entity))
        if self.source is not None:
            object.__setattr__(self, "source", UpdateSource(self.source))
        if self.status is not None:
            object.__setattr__(self, "status", UpdateStatus(self.status))
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or not 1 <= self.limit <= MAX_PAGE:
            raise InvalidValue("history page size", self.limit, f"need an int in 1..{MAX_PAGE}")
        if not isinstance(self.after, int) or self.after < 0:
            raise InvalidValue("history cursor", self.after, "need a sequence number >= 0")
        for name in ("since", "until"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, datetime) or value.tzinfo is None):
                raise InvalidValue(f"history {name}", value, "need a timezone-aware datetime")
        if self.seen_only and self.entity is None:
            raise InvalidValue("history query", "seen_only", "needs an entity")

    @property
    def since_us(self) -> int | None:
        return None if self.since is None else timestamp_us(self.since)

    @property
    def until_us(self) -> int | None:
        return None if self.until is None else timestamp_us(self.until)


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """A stretch of versions in which a fact held: from the update that added it to the one that
    removed it (``None``: it still holds)."""

    fact: Fact
    start_version: int
    start_time: datetime
    start_update: str
    end_version: int | None = None
    end_time: datetime | None = None
    end_update: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "fact": str(self.fact),
            "start": {"version": self.start_version, "time": self.start_time.isoformat(), "update": self.start_update},
            "end": None
            if self.end_version is None
            else {
                "version": self.end_version,
                "time": self.end_time.isoformat() if self.end_time else None,
                "update": self.end_update,
            },
        }


def intervals(fact: Fact, updates: Iterable[Update], held_before: bool = False) -> list[Interval]:
    """The validity intervals of ``fact`` from the applied updates that mention it, in order.

    ``held_before``: it held at the start (at a compaction horizon, say), from no known update.
    """
    found: list[Interval] = []
    open_: Interval | None = None
    if held_before:
        open_ = Interval(fact=fact, start_version=0, start_time=datetime.fromtimestamp(0, UTC), start_update="")
    for update in updates:
        if update.status is not UpdateStatus.APPLIED:
            continue
        if fact in update.delta.add and open_ is None:
            open_ = Interval(fact=fact, start_version=update.version, start_time=update.time, start_update=update.id)
        elif fact in update.delta.remove and open_ is not None:
            found.append(
                Interval(
                    fact=fact,
                    start_version=open_.start_version,
                    start_time=open_.start_time,
                    start_update=open_.start_update,
                    end_version=update.version,
                    end_time=update.time,
                    end_update=update.id,
                )
            )
            open_ = None
    if open_ is not None:
        found.append(open_)
    return found


def summary_json(summaries: Mapping[str, tuple[int, int, int]]) -> dict[str, dict[str, object]]:
    """Per-entity summaries of compacted history: first and last seen (µs), number of changes."""
    return {
        name: {"first": from_timestamp_us(a).isoformat(), "last": from_timestamp_us(b).isoformat(), "changes": n}
        for name, (a, b, n) in summaries.items()
    }
