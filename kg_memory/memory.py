"""``WorldMemory``: a memory bound to its store and domain, where every write is verified
and recorded as an :class:`Update`."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from kg_memory import jsonl_stream, operations
from kg_memory._group import Proposal as Proposal  # re-exported: callers build proposals
from kg_memory._group import Propose as Propose  # re-exported: the type of a proposer
from kg_memory._group import draft
from kg_memory._group import storable as _storable
from kg_memory._group import writable_source as _source
from kg_memory._overlay import Overlay
from kg_memory._size_caps import capped
from kg_memory.domain import Domain
from kg_memory.errors import InvalidValue, NotApplicable, VersionConflict
from kg_memory.history import MAX_PAGE, NO_ENTITY, HistoryQuery, Interval, intervals
from kg_memory.model import (
    Delta,
    Entity,
    Fact,
    Issue,
    Memory,
    Neighbourhood,
    State,
    Update,
    UpdateSource,
    UpdateStatus,
    normalise_name,
)
from kg_memory.store import GraphStore, StagedCommit, StagesGroups
from kg_memory.verifier import StateView, Verifier

_T = TypeVar("_T")

# Attempts to re-verify and commit when other writers keep moving the memory on.
DEFAULT_COMMIT_ATTEMPTS = 8
# What a write group's view may carry to the next group (names and facts, see Overlay.held);
# past this, reading them again is cheaper than holding a large part of a building between groups.
_WARM_HELD = 50_000


def created_by_domain(record: Memory, domain: Domain) -> Update:
    """The memory's first update: the domain's constants (``robot_1``...), created with the memory.

    Applied at version 0 (creating a memory is not a change of its state), so that replaying the
    history from it, every update's new entities and facts in ``seq`` order, gives the whole state.
    """
    return Update(
        memory=record.name,
        source=UpdateSource.DOMAIN,
        delta=Delta(new_entities=domain.constant_entities()),
        status=UpdateStatus.APPLIED,
        input=f"create memory {record.name} (domain {domain.name})",
        version=0,
        seq=1,
        time=record.created,
        meta={"domain": domain.name},
    )


def _normalised(name: str | None) -> str | None:
    return None if name is None else normalise_name(name)


@dataclass(frozen=True, slots=True)
class Refused:
    """A delta that verification refused: its issues, found against the state at ``version``."""

    issues: tuple[Issue, ...]
    version: int


class _View:
    """The store as the verifier's read-only view of one memory."""

    def __init__(self, store: GraphStore, memory: str) -> None:
        self._store = store
        self._memory = memory

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        return self._store.entities(self._memory, names)

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        return self._store.facts_about(self._memory, names)


class WorldMemory:
    def __init__(self, store: GraphStore, name: str, domain: Domain, *, created: datetime | None = None) -> None:
        self.store = store
        self.name = name
        self.domain = domain
        # which memory of the name this is: every write checks it in its transaction, so a handle held
        # while its memory was deleted, and another made under its name, never writes to that one
        self.created = created
        self.verifier = Verifier(domain)
        # the view the last write group left: (memory created, version, view); see apply_group
        self._warm: tuple[datetime, int, Overlay] | None = None
        self._warm_lock = threading.Lock()

    @classmethod
    def create(cls, store: GraphStore, name: str, domain: str) -> WorldMemory:
        """A new, empty memory bound to the named domain (see ``store.domains``), its history
        starting with the domain's update that creates the constants (:func:`created_by_domain`)."""
        record = store.create_memory(name, domain)
        bound = store.domains.get(domain)
        try:  # the store holds the constants already: the update is logged, not applied again
            store.load_history(record.name, [created_by_domain(record, bound)])
        except BaseException:
            store.delete_memory(record.name)
            raise
        return cls(store, record.name, bound, created=record.created)

    @classmethod
    def open(cls, store: GraphStore, name: str) -> WorldMemory:
        """The memory named ``name`` in any spelling that normalises to it (``" HOME "`` is ``home``)."""
        record = store.get_memory(name)
        return cls(store, record.name, store.domains.get(record.domain), created=record.created)

    # -- reads ------------------------------------------------------------------------------

    @property
    def record(self) -> Memory:
        """The memory's record; :class:`UnknownMemory` once the memory this handle was made for was
        deleted, also when another holds its name now."""
        return operations.memory_record(self.store, self.name, created=self.created)

    def _read(self, value: _T) -> _T:
        """``value``, read from the store, once the memory this handle was made for is seen to be
        there still: a memory deleted never comes back, so a check after the read proves the read
        was of it and not of another made under its name since."""
        if self.created is not None:
            self.record  # noqa: B018 - raises UnknownMemory for another memory of the name
        return value

    @property
    def version(self) -> int:
        return self.record.version

    def entities(self, names: Iterable[str] | None = None) -> dict[str, Entity]:
        wanted = None if names is None else [normalise_name(n) for n in names]
        return self._read(self.store.entities(self.name, wanted))

    def facts(self, predicate: str | None = None, entity: str | None = None) -> frozenset[Fact]:
        """Every fact, or those of ``predicate`` and/or mentioning ``entity`` (names in any spelling)."""
        return self._read(self.store.facts(self.name, _normalised(predicate), _normalised(entity)))

    def state(self) -> State:
        return self._read(operations.current_state(self.store, self.name))

    def view(self) -> StateView:
        """A read view of the current state, for code that computes deltas (as the verifier does);
        what is read through it is not checked to be of this handle's memory (writes are)."""
        return _View(self.store, self.name)

    def neighbourhood(self, seeds: Iterable[str], hops: int = 2, max_facts: int = 200) -> Neighbourhood:
        return self._read(operations.neighbourhood(self.store, self.name, seeds, hops, max_facts))

    def history(self, since_seq: int = 0, limit: int | None = None) -> list[Update]:
        return self._read(self.store.history(self.name, since_seq, limit))

    def state_at(self, version: int) -> State:
        return self._read(operations.state_at(self.store, self.store.domains, self.name, version))

    def export(self) -> dict[str, Any]:
        """The one-document export (small memories; see :meth:`export_lines` for any size)."""
        return self._read(operations.export_memory(self.store, self.name))

    def export_lines(self) -> Iterator[str]:
        """The memory as JSON Lines, streamed page by page (:mod:`kg_memory.jsonl_stream`), each
        page checked to be of this handle's memory before it is handed on."""
        return jsonl_stream.export_lines(self.store, self.name, created=self.created)

    # -- history queries (through the stores' indexes) ---------------------------------------

    def query_history(self, query: HistoryQuery | None = None, **filters: Any) -> list[Update]:
        """One page of updates: ``query`` or its fields as keywords (entity, since, until, source,
        status, after, before, limit, newest_first, seen_only). The next page: ``after`` = the
        last update's ``seq`` (``before`` when newest first)."""
        return self._read(self.store.query_history(self.name, query or HistoryQuery(**filters)))

    def last_seen(self, entity: str) -> Update | None:
        """The last perception update in which ``entity`` was seen (or changed), if any."""
        found = self.query_history(HistoryQuery(entity=entity, seen_only=True, newest_first=True, limit=1))
        return found[0] if found else None

    def fact_intervals(self, fact: Fact) -> list[Interval]:
        """When ``fact`` held: derived from the log (the updates that touched its first argument)."""
        key = fact.args[0] if fact.args else NO_ENTITY
        horizon = self.store.horizon(self.name)
        held = horizon is not None and fact in self.state_at(horizon[0]).facts
        updates: list[Update] = []
        after = 0
        while True:
            page = self.store.query_history(self.name, HistoryQuery(entity=key, after=after, limit=MAX_PAGE))
            updates += [u for u in page if fact in u.delta.add or fact in u.delta.remove]
            if len(page) < MAX_PAGE:
                break
            after = page[-1].seq
        return self._read(intervals(fact, updates, held_before=held))

    def compact(self, before_version: int, *, input: str = "") -> Update:
        """Opt-in retention: drop the history up to ``before_version`` (kept as a checkpoint and
        per-entity summaries), recorded as a compaction update. ``state_at`` an earlier version
        then raises :class:`HistoryCompacted`."""
        return operations.compact(self.store, self.name, before_version, input=input, created=self.created)

    # -- writes -----------------------------------------------------------------------------

    def verify(self, delta: Delta, source: UpdateSource) -> tuple[Issue, ...]:
        """Issues the delta would have against the current state (nothing is written)."""
        return self._read(self.verifier.verify(delta, self.view(), _source(source)))

    def apply(
        self,
        delta: Delta,
        *,
        source: UpdateSource,
        input: str = "",
        expected_version: int | None = None,
        meta: Mapping[str, Any] | None = None,
        attempts: int = DEFAULT_COMMIT_ATTEMPTS,
        verify: bool = True,
    ) -> Update:
        """Verify ``delta`` and apply it atomically, or record it as rejected with its issues.

        With ``expected_version`` the caller's view must still be current, or
        :class:`VersionConflict` is raised. Without it, a conflict with a concurrent writer
        re-verifies the delta against the new state and tries again, up to ``attempts`` times.

        ``verify=False`` is for the paper's unverified variants (experiments): nothing is
        rejected; the part of the delta a graph can hold (known predicates and entities, removals
        of facts that hold, additions of facts that do not) is committed, rule violations
        included, and the issues found and the facts dropped are kept in the update's meta.
        """
        outcome = self.try_apply(
            delta,
            source=source,
            input=input,
            expected_version=expected_version,
            meta=meta,
            attempts=attempts,
            verify=verify,
        )
        if isinstance(outcome, Update):
            return outcome
        rejected = Update(
            memory=self.name,
            source=_source(source),
            delta=delta,
            status=UpdateStatus.REJECTED,
            input=input,
            issues=outcome.issues,
            version=outcome.version,
            meta=meta or {},
        )
        return self.store.record(capped(rejected), created=self.created)

    def try_apply(
        self,
        delta: Delta,
        *,
        source: UpdateSource,
        input: str = "",
        expected_version: int | None = None,
        meta: Mapping[str, Any] | None = None,
        attempts: int = DEFAULT_COMMIT_ATTEMPTS,
        verify: bool = True,
    ) -> Update | Refused:
        """As :meth:`apply`, but a delta that fails verification is returned as :class:`Refused`
        (its issues, and the version they hold at) and nothing is recorded: for callers that
        may still fix the delta, such as a pipeline that re-prompts a model with the issues.
        Each attempt verifies once."""
        source = _source(source)
        if not verify and delta.new_entities:
            raise InvalidValue("unverified delta", delta.to_json(), "only verified updates may create entities")
        for attempt in range(max(1, attempts)):
            version = self.version
            if expected_version is not None and version != expected_version:
                raise VersionConflict(self.name, expected_version, version)
            issues = self.verify(delta, source)
            if issues and self.version != version:
                continue  # verified against a state that moved on meanwhile: the issues may not hold
            if issues and verify:
                return Refused(issues, version)
            written, recorded = (delta, dict(meta or {})) if verify else _storable(delta, issues, meta)
            status = UpdateStatus.NOOP if written.is_empty else UpdateStatus.APPLIED
            update = Update(
                memory=self.name,
                source=source,
                delta=written,
                status=status,
                input=input,
                issues=(),
                version=version,
                meta=recorded,
            )
            if status is UpdateStatus.NOOP:
                return self.store.record(update, created=self.created)
            try:
                return self.store.commit(update, expected_version=version, created=self.created)
            except VersionConflict:
                if expected_version is not None:
                    raise
                # jittered backoff, so writers that keep colliding stop doing so in lockstep
                time.sleep(random.uniform(0, min(0.05, 0.002 * 2**attempt)))
        raise VersionConflict(self.name, version, self.version)

    def apply_group(
        self,
        proposals: Sequence[Propose],
        *,
        attempts: int = DEFAULT_COMMIT_ATTEMPTS,
        prefetch: Iterable[str] = (),
    ) -> list[Update | BaseException]:
        """Several writes in one store transaction; one outcome per proposer, in order: its
        :class:`Update` (applied, no-op or rejected, as :meth:`apply` makes them) or the
        exception its item met (raised by the proposer, or :class:`VersionConflict` for a stale
        ``expected_version``). One item's failure is never another's.

        Each proposer sees the state the group's earlier items leave. When another writer
        moves the memory on first, every proposer is called again on the new state, up to
        ``attempts`` times; then each item still pending gets :class:`VersionConflict`.
        ``prefetch`` names entities the proposers will read: read in one go, not one by one.
        A store failure (:class:`StoreUnavailable`) is raised, as it is every item's.
        """
        if not proposals:
            return []
        prefetch = frozenset(prefetch)
        for attempt in range(max(1, attempts)):
            record = self.record
            version = record.version
            view, drafts = self._drafted(record, proposals, prefetch)
            updates = [d for d in drafts if isinstance(d, Update)]
            try:
                stored = self.store.commit_group(self.name, updates, expected_version=version, created=self.created)
            except VersionConflict:
                time.sleep(random.uniform(0, min(0.05, 0.002 * 2**attempt)))  # see try_apply
                continue
            except NotApplicable:
                # an item the verifier passed that the store refuses: each alone, so it fails alone
                return self._apply_each(proposals, attempts)
            self._keep_warm(record, view, stored[-1].version if stored else version)
            written = iter(stored)
            return [next(written) if isinstance(d, Update) else d for d in drafts]
        conflict = VersionConflict(self.name, version, self.version)
        return [conflict if isinstance(d, Update) else d for d in drafts]

    def stage_group(self, proposals: Sequence[Propose], *, prefetch: Iterable[str] = ()) -> StagedGroup | None:
        """:meth:`apply_group` in two steps, where the store can (:class:`StagesGroups`): the group
        is proposed, verified and written here, on the caller's thread, up to its COMMIT, which
        :meth:`StagedGroup.commit` runs (from any thread: it may wait on the disk). None, with
        nothing written, where it cannot be staged without waiting or would fail in the store (the
        write lock is another's, another writer moved the memory on, an item the store refuses):
        :meth:`apply_group` then writes the group, and decides it. A proposer that raises is that
        item's outcome, as in :meth:`apply_group`."""
        if not proposals or not isinstance(self.store, StagesGroups):
            return None
        record = self.record
        view, drafts = self._drafted(record, proposals, frozenset(prefetch))
        updates = [d for d in drafts if isinstance(d, Update)]
        staged = self.store.stage_group(self.name, updates, record.version, created=self.created)
        if staged is None:  # the view took in the drafts: it is not kept
            return None
        return StagedGroup(memory=self, record=record, view=view, drafts=tuple(drafts), staged=staged)

    def _drafted(
        self, record: Memory, proposals: Sequence[Propose], prefetch: frozenset[str]
    ) -> tuple[Overlay, list[Update | Exception]]:
        """The group's drafts on the view it starts from (at ``record``'s version), and that view."""
        view = self._warm_view(record)
        drafts = draft(
            proposals, memory=self.name, verifier=self.verifier, view=view, version=record.version, prefetch=prefetch
        )
        return view, drafts

    def _warm_view(self, record: Memory) -> Overlay:
        """The view the last group left, when the memory is still at its version; else a fresh one.

        The group's commit checks the version it started from, so a view taken at that version
        and read from while the store stayed there is the state the group writes on; a memory
        deleted and made again is told apart by its creation time.
        """
        with self._warm_lock:
            warm, self._warm = self._warm, None
        if warm is not None and warm[:2] == (record.created, record.version):
            return warm[2]
        return Overlay(self.view())

    def _keep_warm(self, record: Memory, view: Overlay, version: int) -> None:
        """Keep ``view``, committed up to ``version``, for the next group (unless it grew too large)."""
        if view.held > _WARM_HELD:
            return
        view.settle()
        with self._warm_lock:
            self._warm = (record.created, version, view)

    def _apply_each(self, proposals: Sequence[Propose], attempts: int) -> list[Update | BaseException]:
        outcomes: list[Update | BaseException] = []
        for propose in proposals:
            try:
                outcomes.append(self._apply_alone(propose, attempts))
            except Exception as exc:  # the item's own outcome
                outcomes.append(exc)
        return outcomes

    def _apply_alone(self, propose: Propose, attempts: int) -> Update:
        for _ in range(max(1, attempts)):
            version = self.version
            view = Overlay(self.view())
            (outcome,) = draft([propose], memory=self.name, verifier=self.verifier, view=view, version=version)
            if isinstance(outcome, Exception):
                raise outcome
            try:
                return self.store.commit_group(self.name, [outcome], expected_version=version, created=self.created)[0]
            except VersionConflict:
                continue
        raise VersionConflict(self.name, version, self.version)

    def reject(
        self,
        *,
        source: UpdateSource,
        input: str,
        issues: Iterable[Issue],
        delta: Delta | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Update:
        """Record an update that failed before it had a valid delta (e.g. unusable model output)."""
        update = Update(
            memory=self.name,
            source=_source(source),
            delta=delta or Delta(),
            status=UpdateStatus.REJECTED,
            input=input,
            issues=tuple(issues),
            version=self.version,
            meta=meta or {},
        )
        return self.store.record(capped(update), created=self.created)

    def add_entities(self, entities: Iterable[Entity], *, input: str = "", facts: Iterable[Fact] = ()) -> Update:
        """Perception's write: new entities, with the facts that place them."""
        return self.apply(
            Delta(add=frozenset(facts), new_entities=tuple(entities)), source=UpdateSource.SENSOR, input=input
        )

    def revert(self, update_id: str, *, input: str = "", expected_version: int | None = None) -> Update:
        """Undo an applied update with a new compensating update (verified like any other)."""
        original = self.store.get_update(self.name, update_id)
        if original.status is not UpdateStatus.APPLIED:
            raise InvalidValue("update to revert", update_id, f"it was {original.status}, so there is nothing to undo")
        if original.delta.new_entities:
            created = ", ".join(sorted(e.name for e in original.delta.new_entities))
            raise InvalidValue(
                "update to revert",
                update_id,
                f"it created entities ({created}), which a revert cannot remove; have perception correct their facts",
            )
        self._check_not_reverted(original)
        return self.apply(
            original.delta.inverse(),
            source=UpdateSource.REVERT,
            input=input or f"revert {update_id}",
            expected_version=expected_version,
            meta={"reverts": update_id},
        )

    def _check_not_reverted(self, original: Update) -> None:
        """A second revert would undo whatever restored the update's effects since."""
        after = original.seq
        while True:
            page = self.store.query_history(
                self.name, HistoryQuery(source=UpdateSource.REVERT, status=UpdateStatus.APPLIED, after=after, limit=500)
            )
            for update in page:
                if update.meta.get("reverts") == original.id:
                    raise InvalidValue(
                        "update to revert",
                        original.id,
                        f"it was already reverted by update {update.id} (version {update.version})",
                    )
            if len(page) < 500:
                return
            after = page[-1].seq

    @classmethod
    def import_(cls, store: GraphStore, data: Mapping[str, Any], name: str | None = None) -> WorldMemory:
        """Recreate a memory from the one-document export, verified like a stream."""
        record = jsonl_stream.import_stream(store, jsonl_stream.document_lines(data), name)
        return cls.open(store, record.name)

    @classmethod
    def import_lines(cls, store: GraphStore, lines: Iterable[str | bytes], name: str | None = None) -> WorldMemory:
        """Recreate a memory from a JSON Lines export (any size, in constant memory)."""
        record = jsonl_stream.import_stream(store, jsonl_stream.parse_lines(lines), name)
        return cls.open(store, record.name)


@dataclass(frozen=True, kw_only=True, eq=False)
class StagedGroup:
    """A group proposed, verified and written up to its COMMIT (:meth:`WorldMemory.stage_group`):
    :meth:`commit` it from any thread, then take its :meth:`outcomes` on the thread that staged it;
    or :meth:`abandon` it."""

    memory: WorldMemory
    record: Memory
    view: Overlay
    drafts: tuple[Update | Exception, ...]
    staged: StagedCommit

    def commit(self) -> list[Update]:
        """The store's COMMIT, which may wait for the disk: the group's updates as stored. A failed
        commit raises, and nothing of the group is written."""
        return self.staged.finish()

    def outcomes(self, stored: Sequence[Update]) -> list[Update | BaseException]:
        """One outcome per proposer, in order, as :meth:`WorldMemory.apply_group` gives them, from
        what :meth:`commit` returned; the view is kept for the memory's next group."""
        self.memory._keep_warm(self.record, self.view, stored[-1].version)
        written = iter(stored)
        return [next(written) if isinstance(d, Update) else d for d in self.drafts]

    def abandon(self) -> None:
        """Write nothing of the group."""
        self.staged.abandon()
