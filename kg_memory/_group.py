"""A write group's proposals, and drafting them: each proposal computed and verified against
the state the group's earlier items leave, and turned into the update to store (not yet given
its ``seq``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kg_memory._overlay import Overlay
from kg_memory._size_caps import capped
from kg_memory.errors import InvalidValue, VersionConflict
from kg_memory.model import Delta, Issue, IssueCode, Update, UpdateSource, UpdateStatus
from kg_memory.verifier import StateView, Verifier


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """One write of a group (``WorldMemory.apply_group``), computed against the group's view.

    ``issues`` refuses it up front (a check the proposer made, such as perception's); otherwise
    the delta is verified as ``WorldMemory.apply`` would. ``expected_version`` pins the version
    the proposer's caller read: a group at another version answers it with
    :class:`VersionConflict` and writes nothing for it.
    """

    delta: Delta
    source: UpdateSource
    input: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    expected_version: int | None = None
    verify: bool = True
    issues: tuple[Issue, ...] = ()


# A proposer computes its write from the state it is shown: the current state plus the group's
# earlier writes. A group that loses a race to another writer calls every proposer again.
Propose = Callable[[StateView], Proposal]


def writable_source(value: UpdateSource | str) -> UpdateSource:
    """A source a write may name: any but the domain's, whose one update is the memory's creation."""
    if isinstance(value, UpdateSource) and value is not UpdateSource.DOMAIN:
        return value
    writable = ", ".join(s.value for s in UpdateSource if s is not UpdateSource.DOMAIN)
    try:
        source = UpdateSource(value)
    except ValueError as exc:
        raise InvalidValue("update source", value, f"use one of {writable}") from exc
    if source is UpdateSource.DOMAIN:
        raise InvalidValue("update source", value, f"only a memory's creation records the domain's; use {writable}")
    return source


# Issues that mean a fact cannot be stored at all, even by an unverified update.
_UNSTORABLE = frozenset(
    {
        IssueCode.UNKNOWN_PREDICATE,
        IssueCode.WRONG_ARITY,
        IssueCode.UNKNOWN_ENTITY,
        IssueCode.REMOVE_ABSENT,
        IssueCode.ADD_PRESENT,
        IssueCode.REMOVE_AND_ADD,
    }
)


def storable(delta: Delta, issues: tuple[Issue, ...], meta: Mapping[str, Any] | None) -> tuple[Delta, dict[str, Any]]:
    """What an unverified update writes, and the meta that says what was found and dropped."""
    bad = {issue.fact for issue in issues if issue.code in _UNSTORABLE and issue.fact is not None}
    kept = Delta(remove=delta.remove - bad, add=delta.add - bad)
    dropped = sorted(str(f) for f in (delta.remove | delta.add) & bad)
    recorded = {**(meta or {}), "verified": False, "issues": [i.to_json() for i in issues], "dropped": dropped}
    return kept, recorded


def draft(
    proposals: Sequence[Propose],
    *,
    memory: str,
    verifier: Verifier,
    view: Overlay,
    version: int,
    prefetch: Iterable[str] = (),
) -> list[Update | Exception]:
    """One draft per proposer, in order: an update at the version its place in the group
    leaves, or the exception its item met. The state is ``view`` at ``version``, which takes in
    each accepted draft; what it holds of the names in ``prefetch`` is read at once, before the
    first proposer asks."""
    view.prefetch(prefetch)
    drafts: list[Update | Exception] = []
    for propose in proposals:
        try:
            update = _draft_one(propose(view), view, memory=memory, verifier=verifier, version=version)
        except Exception as exc:  # this item's outcome; the group goes on
            drafts.append(exc)
            continue
        if update.status is UpdateStatus.APPLIED:
            view.apply(update.delta)
            version += 1
        drafts.append(update)
    return drafts


def _draft_one(proposal: Proposal, view: StateView, *, memory: str, verifier: Verifier, version: int) -> Update:
    """The update ``proposal`` makes at ``version``, as ``WorldMemory.apply`` would make it."""
    if proposal.expected_version is not None and proposal.expected_version != version:
        raise VersionConflict(memory, proposal.expected_version, version)
    source = writable_source(proposal.source)
    delta = proposal.delta
    if not proposal.verify and delta.new_entities:
        raise InvalidValue("unverified delta", delta.to_json(), "only verified updates may create entities")
    issues = proposal.issues or verifier.verify(delta, view, source)
    if proposal.issues or (issues and proposal.verify):
        rejected = Update(
            memory=memory,
            source=source,
            delta=delta,
            status=UpdateStatus.REJECTED,
            input=proposal.input,
            issues=issues,
            version=version,
            meta=proposal.meta or {},
        )
        return capped(rejected)
    written, recorded = (delta, dict(proposal.meta)) if proposal.verify else storable(delta, issues, proposal.meta)
    return Update(
        memory=memory,
        source=source,
        delta=written,
        status=UpdateStatus.NOOP if written.is_empty else UpdateStatus.APPLIED,
        input=proposal.input,
        issues=(),
        version=version,
        meta=recorded,
    )
