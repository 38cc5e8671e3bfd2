"""The sensor update pipeline: an observation → a delta against the memory → verified and applied.

Deterministic (no language model). The delta is computed against a snapshot of the memory and
committed only if the memory is still at that version; when another writer got there first, the
delta is recomputed against the new state, since a delta is only right for the state it was read from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kg_memory import Delta, InvalidValue, Update, UpdateSource, VersionConflict, WorldMemory
from perception import Observation, observation_delta, observation_issues, unseen_entities


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

    def apply(self, observation: Observation) -> SensorResult:
        """Apply ``observation``; a rejected update is recorded and returned, the state untouched.

        An observation from an unknown room, by something that is not a robot, or seeing a static
        thing where the memory says it is not, is rejected before verification (``perception.checks``).

        Raises :class:`VersionConflict` when other writers moved the memory on ``attempts`` times.
        """
        for attempt in range(1, self.attempts + 1):
            try:
                update, delta = self._attempt(observation)
            except VersionConflict:
                if attempt == self.attempts:
                    raise
                continue
            return SensorResult(update, delta, attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _attempt(self, observation: Observation) -> tuple[Update, Delta]:
        version = self.memory.version  # read before the state, so a write in between is a conflict
        view, domain = self.memory.view(), self.memory.domain
        delta = observation_delta(observation, view, domain)
        issues = observation_issues(observation, view, domain)
        if issues:  # an observation that cannot be true here: refused whole, the state untouched
            rejected = self.memory.reject(
                source=UpdateSource.SENSOR,
                input=observation.to_json(),
                issues=issues,
                delta=delta,
                meta=_meta(observation, delta),
            )
            return rejected, delta
        update = self.memory.apply(
            delta,
            source=UpdateSource.SENSOR,
            input=observation.to_json(),
            expected_version=version,
            meta=_meta(observation, delta),
        )
        return update, delta


def _meta(observation: Observation, delta: Delta) -> dict[str, Any]:
    """Provenance: where and when the robot looked, and what the observation changed."""
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
    }
