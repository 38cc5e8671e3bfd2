"""Planning from memory (L3M+P Alg. 4): a request in English (or a PDDL goal) → a validated plan.

request → retrieval (R-, R+ or RS) → goal prompt with the retrieved facts → goal check against the
domain and the memory's entities → re-prompt with the issues (bounded) → problem from the retrieved
facts → classical planner → validation from the full current state, widening the context when it
fails → the plan explained in English. Everything that happened is in the :class:`PlanReport`:
tokens, timings, each tier tried with its problem text, and why earlier tiers failed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from functools import partial

from kg_memory.domain import Domain
from kg_memory.errors import InvalidValue
from kg_memory.formula import Formula
from kg_memory.memory import WorldMemory
from kg_memory.model import State
from kg_memory.unknowns import Unknown
from l3mp._json import JSONObject
from l3mp.llm.base import Deadline, DeadlinePassed, LanguageModel, PromptTooLong, Usage
from l3mp.llm.scoring import ScoringUnsupported
from l3mp.outcomes import ExplorationStep, PlanOutcome, Question
from l3mp.pipelines.context import Fallback, ModelRetrieval
from l3mp.pipelines.conversation import TASK, Exchange, Parsed, ask_parsed, unusable
from l3mp.pipelines.errors import AnswerProblem
from l3mp.pipelines.nl_choose import choose_goal
from l3mp.pipelines.nl_update import sized_retriever
from l3mp.pipelines.ranking import make_ranker
from l3mp.prompts import GoalInput, goal
from planning import DEFAULT_PLANNER, GroundAction, PlanStatus, World
from planning.deadline import EvaluationDeadlinePassed
from planning.explain import cost_sentence, explain
from planning.goal_checker import check_goal
from planning.memory_world import MemoryWorld, WorldSnapshot
from planning.problem import focused_context, goal_objects
from planning.reachability import impossible_gaps
from planning.tiers import TierAttempt, TieredPlan, TieredPlanner
from retrieval import DEFAULT_RETRIEVER, RETRIEVERS, Retriever, context_unknowns


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanConfig:
    retriever: str = DEFAULT_RETRIEVER
    retries: int = 3  # re-prompts of the goal after the first answer
    retrieval_retries: int = 2
    planner: str = DEFAULT_PLANNER
    timeout: float = 60.0  # per planner call
    # the whole request, seconds (its model stages, re-prompts included, and the planner tiers):
    # when it runs out the answer is `timeout` with what was tried
    deadline: float = 120.0
    full_state: bool = True  # whether the last tier may plan on the whole state
    max_chars: int = 2_000
    fallback: Fallback = "words"  # when RS gets no usable query graph (see l3mp.pipelines.context)
    optimal: bool = False  # the cheapest plan, proven (A* with LM-cut), within ``timeout`` per search
    reader: str = "write"  # write: the model writes the goal; choose: it ranks the domain's readings (nl_choose)
    ranker: str = "choice"  # how the choosing reader asks the model: choice, likelihood or none
    max_facts: int | None = None  # facts in a retrieved context (R+, RS); None: the retriever's own

    def __post_init__(self) -> None:
        if self.reader not in ("write", "choose"):
            raise InvalidValue("reader", self.reader, "use write or choose")
        if self.ranker not in ("choice", "likelihood", "none"):
            raise InvalidValue("ranker", self.ranker, "use choice, likelihood or none")
        if not self.deadline > 0:
            raise InvalidValue("deadline", self.deadline, "must be a positive number of seconds")
        if self.retriever not in RETRIEVERS:
            raise InvalidValue("retriever", self.retriever, f"use one of {', '.join(RETRIEVERS)}")
        # NaN slips past `timeout <= 0` (it fails every comparison), and inf is no timeout
        timeout_ok = math.isfinite(self.timeout) and self.timeout > 0
        if self.retries < 0 or self.retrieval_retries < 0 or not timeout_ok or self.max_chars < 1:
            raise InvalidValue("plan config", self, "retries must be ≥ 0, timeout finite and > 0, and max_chars ≥ 1")


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanReport:
    status: PlanOutcome
    request: str
    goal: str | None = None
    plan: tuple[GroundAction, ...] = ()
    explanation: tuple[str, ...] = ()
    tier: str | None = None
    issues: tuple[str, ...] = ()
    tiers: TieredPlan | None = None
    usage: Usage = field(default_factory=Usage)
    timings: Mapping[str, float] = field(default_factory=dict)  # seconds
    retrieval: Mapping[str, object] = field(default_factory=dict)
    version: int = 0  # the memory version the plan was validated against
    # open world: questions for the caller, unknown-location entities, exploration sub-goals tried
    questions: tuple[Question, ...] = ()
    unknowns: tuple[Unknown, ...] = ()
    exploration: tuple[ExplorationStep, ...] = ()
    cost: float | None = None  # the plan's cost in the full state (its length without action costs)
    optimal: bool = False  # proven cheapest for the whole state
    optimality: str = ""  # why an optimal plan was asked for and this one is not proven so
    cost_explanation: str = ""  # the cost in English ("The plan costs 5.25 (proven the cheapest).")

    @property
    def solved(self) -> bool:
        return self.status is PlanOutcome.SOLVED

    def to_json(self) -> JSONObject:
        attempts = self.tiers.attempts if self.tiers else ()
        return {
            "status": self.status.value,
            "request": self.request,
            "goal": self.goal,
            "plan": [str(a) for a in self.plan],
            "explanation": list(self.explanation),
            "tier": self.tier,
            "issues": list(self.issues),
            "version": self.version,
            "cost": self.cost,
            "optimal": self.optimal,
            "optimality": self.optimality,
            "cost_explanation": self.cost_explanation,
            "usage": {"prompt_tokens": self.usage.prompt_tokens, "completion_tokens": self.usage.completion_tokens},
            "timings": {k: round(v, 6) for k, v in self.timings.items()},
            "retrieval": dict(self.retrieval),
            "questions": [q.to_json() for q in self.questions],
            "unknowns": [u.to_json() for u in self.unknowns],
            "exploration": [e.to_json() for e in self.exploration],
            "stages": None,  # a plan request is never split; the runtime's task records carry stages
            "attempts": [_attempt_json(a) for a in attempts],
        }


def _attempt_json(attempt: TierAttempt) -> JSONObject:
    result = attempt.result
    return {
        "tier": attempt.tier,
        "objects": attempt.objects,
        "facts": attempt.facts,
        "status": result.status.value,
        "planner": result.planner,
        "plan": [str(s) for s in result.plan],
        "valid": attempt.valid,
        "reason": attempt.reason,
        "build_seconds": round(attempt.build_seconds, 6),
        "parse_seconds": round(result.parse_seconds, 6),
        "plan_seconds": round(result.plan_seconds, 6),
        "validate_seconds": round(attempt.validate_seconds, 6),
        "problem": attempt.problem,
    }


def _goal_text(data: object) -> str:
    text = data.get("goal") if isinstance(data, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise AnswerProblem(['answer {"goal": "<PDDL goal formula>"}'])
    return text


class TaskPlanner:
    def __init__(
        self,
        memory: WorldMemory,
        model: LanguageModel | None = None,
        config: PlanConfig | None = None,
        *,
        retriever: Retriever | None = None,
        worlds: MemoryWorld | None = None,
    ) -> None:
        """``worlds``: the memory's planning world kept between requests; pass one kept by the caller
        (one per memory) when planners are made per request, so it is not read whole each time."""
        if worlds is not None and worlds.memory is not memory:
            raise InvalidValue("worlds", worlds.memory.name, f"it keeps another memory than {memory.name!r}")
        self.memory = memory
        self.model = model
        self.config = config or PlanConfig()
        self.retriever = retriever or sized_retriever(self.config.retriever, self.config.max_facts)
        self.tiers = TieredPlanner(
            memory.domain, planner=self.config.planner, timeout=self.config.timeout, optimal=self.config.optimal
        )
        self._deadline: float | None = None  # time.monotonic() by which the current request must end
        # the memory as a planning world, synced from its history between requests (not read whole each time)
        self.worlds = worlds or MemoryWorld(memory)
        self._reading = ExitStack()  # the current request's read of ``worlds``

    def plan(self, request: str = "", *, goal: str | None = None, notes: Sequence[str] = ()) -> PlanReport:
        """Plan for ``request`` (through the model) or for ``goal`` (PDDL, no model).

        ``notes`` are what the caller settled (open world: "'the mug' means mug_2"), shown to the model.
        """
        started = time.perf_counter()
        self._deadline = time.monotonic() + self.config.deadline
        with ExitStack() as self._reading:  # the world read is kept unchanged until the request ends
            if goal is not None:
                report = self._plan_goal(request or goal, goal)
            elif (problem := unusable(request, self.config.max_chars, TASK)) is not None:
                report = PlanReport(status=PlanOutcome.INVALID_REQUEST, request=str(request), issues=(problem,))
            elif self.model is None:
                raise InvalidValue(
                    "planner model", None, "a request in English needs a language model; pass a PDDL goal"
                )
            else:
                report = self._plan_request(" ".join(request.split()), self.model, tuple(notes))
        return replace(report, timings={**report.timings, "total": time.perf_counter() - started})

    # -- the two entries ------------------------------------------------------------------------

    def _plan_goal(self, request: str, text: str) -> PlanReport:
        started = time.perf_counter()
        state = self._reading.enter_context(self.worlds.reading())
        check = check_goal(text, self.memory.domain, state.entities)
        if check.goal is None or check.issues:
            return PlanReport(status=PlanOutcome.INVALID_GOAL, request=request, goal=text, issues=check.issues)
        timings = {"retrieval": time.perf_counter() - started, "model": 0.0}
        seeds = goal_objects(check.goal)  # the goal names what it is about; no model is needed
        return self._solve(request, str(check.goal), check.goal, seeds, state, timings, Usage(), {})

    def _plan_request(self, request: str, model: LanguageModel, notes: tuple[str, ...] = ()) -> PlanReport:
        """Plan for a request in English; its model stages and its planning share one deadline
        (``PlanConfig.deadline``, started when the request came in)."""
        deadline = Deadline(self._deadline if self._deadline is not None else Deadline.after(self.config.deadline).at)
        try:
            if self.config.reader == "choose":
                return self._plan_chosen(request, model, deadline)
            return self._plan_within(request, model, deadline, notes)
        except DeadlinePassed as exc:
            return PlanReport(status=PlanOutcome.TIMEOUT, request=request, issues=(str(exc),))
        except PromptTooLong as exc:
            return PlanReport(status=PlanOutcome.INVALID_REQUEST, request=request, issues=(str(exc),))

    def _plan_within(
        self, request: str, model: LanguageModel, deadline: Deadline, notes: tuple[str, ...] = ()
    ) -> PlanReport:
        started = time.perf_counter()
        retrieval = ModelRetrieval(
            self.retriever, model, retries=self.config.retrieval_retries, fallback=self.config.fallback
        )
        budget = self.config.deadline
        retrieved = retrieval.retrieve(self.memory, request, deadline=deadline, budget=budget, what="plan request")
        usage = sum((e.usage for e in retrieved.exchanges), Usage())
        model_seconds = sum(e.seconds for e in retrieved.exchanges)
        if retrieved.context is None:
            return PlanReport(
                status=PlanOutcome.INVALID_REQUEST, request=request, issues=retrieved.problems, usage=usage
            )
        context = retrieved.context
        state = self._reading.enter_context(self.worlds.reading())
        unknowns = context_unknowns(self.memory, context)
        inputs = GoalInput(
            domain=self.memory.domain,
            task=request,
            entities=tuple(context.entities.values()),
            facts=context.facts,
            unknowns=tuple(u.describe() for u in unknowns),
            notes=notes,
        )
        exchange = Exchange(
            model=model,
            messages=goal.render(inputs),
            schema=goal.schema(inputs),
            name=goal.NAME,
            deadline=deadline,
            budget=budget,
            what="plan request",
        )
        checked = self._ask_goal(exchange, state)
        usage += exchange.usage
        timings = {"retrieval": retrieved.seconds, "model": model_seconds + exchange.seconds}
        if checked.value is None:
            return PlanReport(
                status=PlanOutcome.INVALID_GOAL,
                request=request,
                issues=checked.problems,
                usage=usage,
                timings=timings,
                retrieval=retrieved.stats(),
            )
        text, formula = checked.value
        timings["total_before_planning"] = time.perf_counter() - started
        return self._solve(request, text, formula, set(context.entities), state, timings, usage, retrieved.stats())

    def _plan_chosen(self, request: str, model: LanguageModel, deadline: Deadline) -> PlanReport:
        """The goal chosen among the readings the domain allows (no goal written by the model)."""
        started = time.perf_counter()
        ranker = make_ranker(self.config.ranker, model, self.memory.domain)
        try:
            chosen = choose_goal(self.memory, request, ranker=ranker, deadline=deadline)
        except ScoringUnsupported:  # the words and the state still read what they can
            chosen = choose_goal(self.memory, request, ranker=None, deadline=deadline)
        usage = chosen.choice.usage
        timings = {"retrieval": 0.0, "model": sum(r.seconds for r in chosen.choice.rankings)}
        if chosen.goal is None:
            issue = f"{chosen.reason}: say which, or say it another way"
            return PlanReport(
                status=PlanOutcome.INVALID_GOAL, request=request, issues=(issue,), usage=usage, timings=timings
            )
        state = self._reading.enter_context(self.worlds.reading())
        check = check_goal(chosen.goal, self.memory.domain, state.entities)
        if check.goal is None or check.issues:
            issues = check.issues or ("the chosen goal could not be read",)
            return PlanReport(status=PlanOutcome.INVALID_GOAL, request=request, goal=chosen.goal, issues=issues)
        timings["total_before_planning"] = time.perf_counter() - started
        seeds = goal_objects(check.goal)
        return self._solve(request, str(check.goal), check.goal, seeds, state, timings, usage, {"reader": "choose"})

    # -- shared steps ----------------------------------------------------------------------------

    def _ask_goal(self, exchange: Exchange, state: WorldSnapshot) -> Parsed[tuple[str, Formula]]:
        domain = self.memory.domain

        def parse(data: object) -> tuple[str, Formula]:
            check = check_goal(_goal_text(data), domain, state.entities)
            if check.goal is None or check.issues:
                raise AnswerProblem(check.issues or ("the goal could not be read",))
            return str(check.goal), check.goal

        return ask_parsed(exchange, parse, self.config.retries)

    def _solve(
        self,
        request: str,
        text: str,
        formula: Formula,
        seeds: set[str],
        state: WorldSnapshot,
        timings: dict[str, float],
        usage: Usage,
        retrieval: Mapping[str, object],
    ) -> PlanReport:
        started = time.perf_counter()
        domain = self.memory.domain
        world = state.world  # shared with later requests: the tiers validate on copies of it
        answer = partial(  # what every answer to this request says
            PlanReport,
            request=request,
            goal=text,
            usage=usage,
            timings=timings,
            retrieval=retrieval,
            version=state.version,
        )
        try:  # both steps evaluate the goal against the whole state, so both keep the request's deadline
            gaps = impossible_gaps(world, formula, deadline=self._deadline)  # what is missing, before any planner runs
            if gaps:
                timings["planning"] = time.perf_counter() - started
                return answer(status=PlanOutcome.IMPOSSIBLE, issues=gaps)
            anchors = _anchors(world)
            # the retrieved entities and the way to them
            first = focused_context(world, formula, anchors, seeds, deadline=self._deadline)
        except EvaluationDeadlinePassed:  # the same answer as when the deadline stops a planner call
            timings["planning"] = time.perf_counter() - started
            return answer(status=PlanOutcome.TIMEOUT, issues=(self._ran_out(),))
        timings["world"] = time.perf_counter() - started
        tiered = self.tiers.plan(
            world, formula, first, anchors=anchors, full_state=self.config.full_state, deadline=self._deadline
        )
        timings["planning"] = time.perf_counter() - started - timings["world"]
        issues = tuple(a.reason for a in tiered.attempts if a.reason)
        if tiered.status is PlanStatus.TIMEOUT:
            issues += (self._ran_out(),)
        named = {name for action in tiered.plan for name in action.args}
        labels = {name: e.label for name in named if (e := state.entities.get(name)) is not None and e.label}
        lines = tuple(explain(tiered.plan, domain, labels=labels)) if tiered.solved else ()
        cost, optimal = tiered.cost, tiered.optimal
        said = cost_sentence(domain, cost, optimal, self.config.optimal) if cost is not None else ""
        return answer(
            status=PlanOutcome.of(tiered.status),
            plan=tiered.plan,
            explanation=lines,
            tier=tiered.tier,
            issues=issues,
            tiers=tiered,
            cost=tiered.cost,
            optimal=tiered.optimal,
            optimality=tiered.note,
            cost_explanation=said,
        )

    def _ran_out(self) -> str:
        return f"the request's deadline of {self.config.deadline:g} s ran out while planning"


def world_of(domain: Domain, state: State) -> World:
    """The planning world of a memory's state: its entities, less the domain's constants, and its facts."""
    constants = domain.constants
    return World(domain, (e for n, e in state.entities.items() if n not in constants), state.facts)


def _anchors(world: World) -> list[str]:
    """The domain's constants, the most active first: in the household, the robot before the liquids.

    The first is where paths to the goal's objects start (see ``focused_context``).
    """
    dynamic = set(world.domain.predicates) - set(world.domain.static_predicates)

    def activity(name: str) -> int:
        return sum(1 for f in world.facts_about(name) if f.args[0] == name and f.predicate in dynamic)

    return sorted(world.domain.constants, key=lambda name: (-activity(name), name))
