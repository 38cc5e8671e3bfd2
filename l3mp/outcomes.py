"""What a plan request can come to, as values: the :class:`PlanOutcome` of every plan report, and the
small records the open world adds to one (questions for the caller, exploration sub-goals tried).

The outcomes are strings as well as enum members, so they compare equal to the names written in JSON
(``PlanOutcome.SOLVED == "solved"``); the pipelines, REST, the CLI's exit codes and the runtime read
them from here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from l3mp._json import JSONObject, json_of

if TYPE_CHECKING:  # kept light: the CLI reads the outcomes for its help without loading the planners
    from planning import PlanStatus
    from planning.explore import Place


class PlanOutcome(enum.StrEnum):
    # the planner's own (planning.PlanStatus)
    SOLVED = "solved"
    UNSOLVABLE = "unsolvable"
    TIMEOUT = "timeout"  # a planner call's or the request's deadline passed (its model stages or its planning)
    ERROR = "error"  # no tier's plan held in the full state
    # before any planner runs
    INVALID_REQUEST = "invalid_request"  # empty or noise, or the model never pointed at a context
    INVALID_GOAL = "invalid_goal"  # the goal never passed the check
    # open world (see l3mp.pipelines.openworld)
    NEEDS_INFORMATION = "needs_information"  # ``questions`` say what to settle; ask again with the answers
    IMPOSSIBLE = "impossible"  # no action can reach the goal; ``issues`` name each gap, one sentence each
    NEEDS_EXPLORATION = "needs_exploration"  # ``plan`` is an information-gathering sub-goal's (``exploration``)

    @classmethod
    def of(cls, status: PlanStatus) -> PlanOutcome:
        """The outcome a planner's status comes to."""
        return cls(status.value)


# -- questions (needs_information) ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Ambiguous:
    """A mention several entities match almost equally well: which one is meant?"""

    about: str
    candidates: tuple[str, ...]

    def sentence(self) -> str:
        return f"'{self.about}' could mean {', '.join(self.candidates)}: which one?"

    def to_json(self) -> JSONObject:
        return json_of(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Unrecognised:
    """A mention nothing in the memory matches well enough, with the closest names."""

    unknown: str
    closest: tuple[str, ...]

    def sentence(self) -> str:
        return f"nothing in the home matches '{self.unknown}'; the closest are {', '.join(self.closest)}"

    def to_json(self) -> JSONObject:
        return json_of(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class NotFound:
    """An item of unknown location that was not found in any place left to search: where is it?"""

    where: str
    searched: tuple[str, ...]

    def sentence(self) -> str:
        return f"{self.where} was not found in the {len(self.searched)} place(s) searched; where is it?"

    def to_json(self) -> JSONObject:
        return json_of(self)


Question = Ambiguous | Unrecognised | NotFound


# -- exploration (needs_exploration) ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ExplorationStep:
    """An information-gathering sub-goal tried for an item of unknown location, with its plan's outcome."""

    item: str
    place: str  # a room to go to, or a closed container to open
    room: str
    container: bool
    reason: str  # why look there ("last seen there", ...)
    subgoal: str | None
    status: PlanOutcome
    plan: tuple[str, ...]

    @classmethod
    def of(
        cls, item: str, place: Place, *, subgoal: str | None, status: PlanOutcome, plan: tuple[str, ...]
    ) -> ExplorationStep:
        return cls(
            item=item,
            place=place.name,
            room=place.room,
            container=place.container,
            reason=place.reason,
            subgoal=subgoal,
            status=status,
            plan=plan,
        )

    def to_json(self) -> JSONObject:
        return json_of(self)


__all__ = ["Ambiguous", "ExplorationStep", "NotFound", "PlanOutcome", "Question", "Unrecognised"]
