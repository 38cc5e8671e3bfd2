"""The sensor update pipeline: an observation → a delta against the memory → verified and applied.

Deterministic (no language model). The delta is computed against a snapshot of the memory and
committed only if the memory is still at that version; when another writer got there first, the
delta is recomputed against the new state, since a delta is only right for the state it was read from.
A caller that read the memory itself (``expected_version``) gets the conflict instead, with nothing written.

The recorded update names what a reader could otherwise miss (its meta): ``unknown_location``, the
entities whose last location the observation removed (perception may lose track of a thing, no other
source may), and ``warnings`` in words, those and the entities observed as a related type, which keep
the memory's type.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kg_memory import Delta, InvalidValue, Issue, Update, UpdateSource, VersionConflict, WorldMemory
from kg_memory.memory import Proposal, Refused
from kg_memory.unknowns import LostTrack, lost_track
from kg_memory.verifier import StateView
from perception import Observation, observation_delta, unseen_entities
from perception.checks import check_observation

# Warnings kept in an update's meta; a survey that loses track of a whole room says how many more.
MAX_WARNINGS = 20


@dataclass(frozen=True, slots=True)
class SensorResult:
    """The recorded update (applied, noop or rejected), the delta it carried and the attempts it took."""

    update: Update
    delta: Delta
    attempts: int


class SensorUpdater:
    def __init__(self, memory: WorldMemory, *, attempts: int = 5) -> None:
        if attempts < 1:
            raise InvalidValue("sensor update attempts", attempts, "must be at least 1")
        self.memory = memory
        self.attempts = attempts

    def apply(self, observation: Observation, *, expected_version: int | None = None) -> SensorResult:
        """Apply ``observation``; a rejected update is recorded and returned, the state untouched.

        An observation from an unknown room, by something that is not a robot, seeing a static thing
        where the memory says it is not, or naming a known entity as an unrelated type, is rejected
        before verification (``perception.checks``).

        With ``expected_version``, the observation is applied only to the memory at that version:
        otherwise :class:`VersionConflict` is raised at once, with no retry and nothing written.
        Without it, raises :class:`VersionConflict` when other writers moved the memory on
        ``attempts`` times.
        """
        if expected_version is not None:
            update, delta = self._attempt(observation, expected_version)
            return SensorResult(update, delta, 1)
        for attempt in range(1, self.attempts + 1):
            try:
                update, delta = self._attempt(observation, None)
            except VersionConflict:
                if attempt == self.attempts:
                    raise
                continue
            return SensorResult(update, delta, attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def propose(self, observation: Observation, view: StateView, *, expected_version: int | None = None) -> Proposal:
        """The write ``observation`` makes against ``view``, for a group (:meth:`WorldMemory.apply_group`):
        the same update :meth:`apply` records, whether applied, a no-op or rejected."""
        domain = self.memory.domain
        delta = observation_delta(observation, view, domain)
        check = check_observation(observation, view, domain)
        issues = check.issues
        lost: tuple[LostTrack, ...] = () if issues else lost_track(domain, delta, view)
        if lost:  # a refused update loses no location, and its meta must not say it did
            issues = self.memory.verifier.verify(delta, view, UpdateSource.SENSOR)
            lost = () if issues else lost
        return Proposal(
            delta=delta,
            source=UpdateSource.SENSOR,
            input=observation.to_json(),
            meta=_meta(observation, delta, lost, check.warnings),
            expected_version=expected_version,
            issues=tuple(issues),
        )

    def _attempt(self, observation: Observation, expected_version: int | None) -> tuple[Update, Delta]:
        version = self.memory.version  # read before the state, so a write in between is a conflict
        if expected_version is not None and version != expected_version:
            raise VersionConflict(self.memory.name, expected_version, version)
        view, domain = self.memory.view(), self.memory.domain
        delta = observation_delta(observation, view, domain)
        check = check_observation(observation, view, domain)
        if check.issues:  # an observation that cannot be true here: refused whole, the state untouched
            return self._reject(observation, delta, check.issues, check.warnings), delta
        lost = lost_track(domain, delta, view)
        outcome = self.memory.try_apply(
            delta,
            source=UpdateSource.SENSOR,
            input=observation.to_json(),
            expected_version=version,
            meta=_meta(observation, delta, lost, check.warnings),
        )
        if isinstance(outcome, Refused):  # nothing changed, so no location was lost either
            return self._reject(observation, delta, outcome.issues, check.warnings), delta
        return outcome, delta

    def _reject(
        self, observation: Observation, delta: Delta, issues: Iterable[Issue], warnings: Sequence[str]
    ) -> Update:
        return self.memory.reject(
            source=UpdateSource.SENSOR,
            input=observation.to_json(),
            issues=issues,
            delta=delta,
            meta=_meta(observation, delta, (), warnings),
        )


def _meta(observation: Observation, delta: Delta, lost: Sequence[LostTrack], kept: Sequence[str]) -> dict[str, Any]:
    """Provenance: where and when the robot looked, what the observation changed, and what to know about it."""
    warnings = [*(t.warning() for t in lost), *kept]
    if len(warnings) > MAX_WARNINGS:
        more = len(warnings) - MAX_WARNINGS + 1
        warnings = [*warnings[: MAX_WARNINGS - 1], f"(and {more} more)"]
    return {
        "room": observation.room,
        "robot": observation.robot,
        "time_step": observation.time_step,
        "observed": len(observation.entities),
        "seen": sorted(observation.names()),  # indexed: when each entity was last seen
        "created": [e.name for e in delta.new_entities],
        "unseen": list(unseen_entities(observation, delta)),
        "removed": len(delta.remove),
        "added": len(delta.add),
        "unknown_location": [t.entity for t in lost],
        "warnings": warnings,
    }
