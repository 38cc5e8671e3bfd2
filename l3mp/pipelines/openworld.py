"""Open-world planning: questions instead of guesses, exploration for what the memory does not know.

:class:`OpenWorldPlanner` wraps :class:`TaskPlanner` (Alg. 4):

1. **Mentions** (a request in English): the model lists the phrases the request uses for things;
   each is resolved against the memory (:mod:`l3mp.pipelines.mentions`). One that matches several
   entities almost equally well, or none, returns ``needs_information`` with machine-readable
   questions (``{"about": "the mug", "candidates": [...]}``, ``{"unknown": ..., "closest": [...]}``);
   the caller asks again with ``answers`` (mention -> entity name), which the goal prompt is told.
2. **Plan** as usual; a goal no action can reach is ``impossible`` (see ``planning.reachability``).
3. **Explore** (PDDLEGO): when the goal is not solved and names an item whose location is unknown,
   the result is ``needs_exploration`` with the plan of an information-gathering sub-goal (go to a
   room, open a container: ``planning.explore``); the runtime executes it, perceives and asks again.
   With nowhere left to look, it is ``needs_information`` (``{"where": item, "searched": [...]}``).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace

from kg_memory.errors import InvalidValue
from kg_memory.memory import WorldMemory
from kg_memory.model import UpdateStatus
from kg_memory.unknowns import Unknown, unknown_locations
from l3mp.llm.base import LanguageModel, Usage
from l3mp.outcomes import ExplorationStep, NotFound, PlanOutcome, Question
from l3mp.pipelines.conversation import Exchange, ask_parsed
from l3mp.pipelines.errors import AnswerProblem
from l3mp.pipelines.mentions import resolve
from l3mp.pipelines.plans import PlanConfig, PlanReport, TaskPlanner, world_of
from l3mp.prompts import MentionsInput, mentions
from planning.explore import search_places, usual_places
from planning.goal_reader import parse_goal
from planning.problem import goal_objects
from retrieval import Retriever

ROBOT = "robot_1"


@dataclass(frozen=True, slots=True)
class OpenWorldConfig:
    threshold: float = 0.75  # a mention's best match below this is unknown
    margin: float = 0.1  # matches this close to the best are ambiguous
    closest: int = 3
    robot: str = ROBOT

    def __post_init__(self) -> None:
        if not (0 < self.threshold <= 1 and 0 <= self.margin < 1 and self.closest >= 1):
            raise InvalidValue("open-world config", self, "threshold in (0, 1], margin in [0, 1), closest ≥ 1")


def _mention_list(data: object) -> list[str]:
    found = data.get("mentions") if isinstance(data, dict) else None
    if not isinstance(found, list) or not all(isinstance(m, str) for m in found):
        raise AnswerProblem(['answer {"mentions": [...]} with the phrases the request uses'])
    return [m for m in found if m.strip()]


class OpenWorldPlanner:
    def __init__(
        self,
        memory: WorldMemory,
        model: LanguageModel | None = None,
        config: PlanConfig | None = None,
        *,
        retriever: Retriever | None = None,
        open_world: OpenWorldConfig | None = None,
    ) -> None:
        self.memory = memory
        self.model = model
        self.tasks = TaskPlanner(memory, model, config, retriever=retriever)
        self.config = open_world or OpenWorldConfig()

    def plan(
        self,
        request: str = "",
        *,
        goal: str | None = None,
        answers: Mapping[str, str] | None = None,
        explored: Collection[str] = (),
    ) -> PlanReport:
        """Plan, ask, or explore (see the module); ``explored``: rooms and containers already searched."""
        started = time.perf_counter()
        notes: tuple[str, ...] = ()
        usage = Usage()
        if goal is None and self.model is not None and request.strip():
            questions, notes, usage = self._resolve(request, self.model, dict(answers or {}))
            if questions:
                return PlanReport(
                    status=PlanOutcome.NEEDS_INFORMATION,
                    request=request,
                    questions=questions,
                    issues=tuple(q.sentence() for q in questions),
                    usage=usage,
                    timings={"total": time.perf_counter() - started},
                )
        report = self.tasks.plan(request, goal=goal, notes=notes)
        report = replace(report, usage=report.usage + usage)
        unknowns = self._unknowns()
        report = replace(report, unknowns=unknowns)
        if report.goal is None or report.status not in (PlanOutcome.UNSOLVABLE, PlanOutcome.TIMEOUT):
            return report
        wanted = goal_objects(parse_goal(report.goal))
        missing = [u for u in unknowns if u.entity.name in wanted]
        if not missing:
            return report
        return self._explore(report, missing[0], explored, started)

    # -- questions -------------------------------------------------------------------------------

    def _resolve(
        self, request: str, model: LanguageModel, answers: dict[str, str]
    ) -> tuple[tuple[Question, ...], tuple[str, ...], Usage]:
        entities = {n: e for n, e in self.memory.entities().items() if n not in self.memory.domain.constants}
        for mention, name in answers.items():
            if name not in entities:
                raise InvalidValue("answer", name, f"'{mention}' was answered with a name the memory does not hold")
        exchange = Exchange(
            model=model,
            messages=mentions.render(MentionsInput(self.memory.domain, request)),
            schema=mentions.SCHEMA,
            name=mentions.NAME,
        )
        asked = ask_parsed(exchange, _mention_list, 1)
        said = {m.strip().lower(): n for m, n in answers.items()}
        questions: list[Question] = []
        notes = [f"'{m}' means {n} ({entities[n].label or n})" for m, n in answers.items()]
        for mention in asked.value or ():
            if mention.strip().lower() in said:
                continue
            found = resolve(
                mention,
                entities,
                self.memory.domain,
                threshold=self.config.threshold,
                margin=self.config.margin,
                closest=self.config.closest,
            )
            if found.question is not None:
                questions.append(found.question)
        return tuple(questions), tuple(notes), exchange.usage

    # -- exploration -----------------------------------------------------------------------------

    def _unknowns(self) -> tuple[Unknown, ...]:
        state = self.memory.state()
        return unknown_locations(self.memory, self.memory.domain, state.entities, state.facts)

    def _explore(self, report: PlanReport, item: Unknown, explored: Collection[str], started: float) -> PlanReport:
        state = self.memory.state()
        world = world_of(self.memory.domain, state)
        placed = [f for u in self.memory.history() if u.status is UpdateStatus.APPLIED for f in u.delta.add]
        usual = usual_places(world, item.entity.type, [*placed, *state.facts])
        last = item.last_seen.place if item.last_seen else None
        places = search_places(world, robot=self.config.robot, last_seen=last, usual=usual, explored=explored)
        tried: list[ExplorationStep] = []
        planning = 0.0  # the sub-goals' planner time, reported apart from the end goal's
        for place in places:
            sub = self.tasks.plan(f"look for {item.entity.name} at {place.name}", goal=place.subgoal(self.config.robot))
            planning += sub.timings.get("world", 0.0) + sub.timings.get("planning", 0.0)
            plan = tuple(str(a) for a in sub.plan)
            tried.append(ExplorationStep.of(item.entity.name, place, subgoal=sub.goal, status=sub.status, plan=plan))
            if sub.solved and sub.plan:
                return replace(
                    report,
                    status=PlanOutcome.NEEDS_EXPLORATION,
                    plan=sub.plan,
                    explanation=sub.explanation,
                    tier=sub.tier,
                    exploration=tuple(tried),
                    timings={
                        **report.timings,
                        "exploration_planning": planning,
                        "total": time.perf_counter() - started,
                    },
                )
        question = NotFound(where=item.entity.name, searched=tuple(sorted(set(explored))))
        return replace(
            report,
            status=PlanOutcome.NEEDS_INFORMATION,
            questions=(question,),
            issues=(*report.issues, question.sentence()),
            exploration=tuple(tried),
            timings={**report.timings, "exploration_planning": planning},
        )


__all__ = ["OpenWorldConfig", "OpenWorldPlanner"]
