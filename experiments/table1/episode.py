"""One seed of the Table I experiment: one home, one script of state changes and tasks, six lanes.

The simulator draws the script once: after every state change each variant's memory is updated
through its own pipeline and judged exactly (as in ``experiments.updates``); after every
``task_every``-th change a task is proposed (with a validated reference plan) and each variant plans
it from its own memory with its own retriever through the whole Alg. 4 pipeline; the plan is judged
in the true world (:mod:`experiments.table1.judge`). Tasks do not change the world, so every lane
hears the same script. For the tasks that RSV solves, the planner is also timed on the full true
state (the paper's Fig. 3): those runs take seconds each at paper scale, so one worker thread runs
them (the planner is a subprocess) on a snapshot of the state while the episode goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from experiments.planning import full_state_problem
from experiments.table1.judge import PlanJudgement, judge_plan
from experiments.table1.models import ModelSource
from experiments.updates.episode import FactsView, Lane, Variant, make_lane, run_step
from kg_memory import GraphStore
from l3mp.gc_freeze import gc_frozen
from l3mp.pipelines.plans import PlanConfig, PlanReport, TaskPlanner
from planning import PlanResult, shared_solves, solve
from planning.shared import credited
from retrieval import Embedder
from sim import HomeSpec, Simulator, generate_home

FIG3_VARIANT = "RSV"


@dataclass(frozen=True, slots=True, kw_only=True)
class Table1Config:
    seeds: tuple[int, ...] = (0, 1, 2)
    steps: int = 100  # state changes
    task_every: int = 5  # a task after every this many state changes
    variants: tuple[Variant, ...] = ()
    spec: dict[str, int] = field(default_factory=dict)  # HomeSpec fields besides the seed; {} is paper scale
    planner: str = "fast-downward"
    timeout: float = 300.0  # seconds per planner call: generous, so that load on the machine changes no outcome

    def home_spec(self, seed: int) -> HomeSpec:
        base = HomeSpec(seed=seed)
        sized = {name: self.spec.get(name, getattr(base, name)) for name in ("rooms", "items", "people")}
        return HomeSpec(seed=seed, rooms=sized["rooms"], items=sized["items"], people=sized["people"])


@dataclass(kw_only=True)
class LaneRun:
    """One variant's lane through one seed: its updates (``lane.steps``), what it heard, its plans."""

    lane: Lane
    planner: TaskPlanner
    heard: list[str] = field(default_factory=list)  # every utterance and request, in order
    plans: list[PlanJudgement] = field(default_factory=list)
    plan_seconds: list[float] = field(default_factory=list)  # pipeline, retrieval included, model excluded

    @property
    def name(self) -> str:
        return self.lane.variant.name


@dataclass(kw_only=True)
class SeedRun:
    seed: int
    home: dict[str, int]
    events: list[str] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)  # step, text, goal, reference plan
    lanes: dict[str, LaneRun] = field(default_factory=dict)
    full_state: list[dict[str, Any]] = field(default_factory=list)  # Fig. 3 pairs (times: not replayable)
    baselines: list[tuple[int, float, Future[PlanResult]]] = field(default_factory=list)  # step, RSV's s, run
    solves: dict[str, int] = field(default_factory=dict)  # planner calls run and shared (with sharing on)


def _lane(variant: Variant, seed: int, sim: Simulator, context: _Context) -> LaneRun:
    """A variant's lane: its memory and update pipeline, and a task planner on the same memory,
    model and retriever (so RS plans with the embeddings its updates keep current)."""
    config, store, embedder, source = context
    model, oracle = source.for_lane(seed, variant.name, sim)
    lane = make_lane(
        variant, store, sim.home, sim, source.rates, seed, embedder, model=model, oracle=oracle, prefix="table1"
    )
    plan_config = PlanConfig(retriever=variant.retriever, planner=config.planner, timeout=config.timeout)
    planner = TaskPlanner(lane.memory, model, plan_config, retriever=lane.updater.retrieval.retriever)
    return LaneRun(lane=lane, planner=planner)


_Context = tuple[Table1Config, GraphStore, Embedder, ModelSource]


def run_seed(
    seed: int,
    config: Table1Config,
    store: GraphStore,
    embedder: Embedder,
    source: ModelSource,
    on_advance: Callable[[str], None] = lambda _name: None,
    *,
    share: bool = True,
) -> SeedRun:
    """Every variant through one seed's script; the memories are deleted afterwards.

    ``share``: identical planner calls (the lanes', the baseline's, the simulator's) run once and the
    lanes plan a task at once; without it every call runs and the lanes plan one after another. The
    outcomes are the same either way; the baseline's seconds are those of the call that ran.
    """
    with shared_solves() if share else nullcontext() as memo:
        run = _run_seed(seed, config, (config, store, embedder, source), on_advance, share)
    if memo is not None:
        run.solves = {"runs": memo.runs, "shared": memo.shared, "waited": memo.waits}
    return run


def _run_seed(
    seed: int, config: Table1Config, context: _Context, on_advance: Callable[[str], None], share: bool
) -> SeedRun:
    store = context[1]
    home = generate_home(config.home_spec(seed))
    sim = Simulator(home, seed=seed, planner=config.planner)
    run = SeedRun(seed=seed, home={"entities": len(home.entities), "facts": len(home.facts)})
    baseline = ThreadPoolExecutor(max_workers=1, thread_name_prefix="full-state")
    lanes = ThreadPoolExecutor(max_workers=max(1, len(config.variants)) if share else 1, thread_name_prefix="lane")
    try:
        for variant in config.variants:
            run.lanes[variant.name] = _lane(variant, seed, sim, context)
        entities = {e.name: e for e in home.entities}
        with gc_frozen(True):
            for step in range(1, config.steps + 1):
                _state_change(run, sim, step, FactsView(entities, sim.state), on_advance)
                if config.task_every and step % config.task_every == 0:
                    _task(run, sim, step, config, on_advance, baseline, lanes)
        run.full_state = [_pair(step, seconds, future.result()) for step, seconds, future in run.baselines]
        return run
    finally:
        lanes.shutdown(cancel_futures=True)
        baseline.shutdown(cancel_futures=True)
        for lane in run.lanes.values():
            store.delete_memory(lane.lane.memory.name)


def _state_change(
    run: SeedRun, sim: Simulator, step: int, before: FactsView, on_advance: Callable[[str], None]
) -> None:
    event = sim.next_event()
    run.events.append(event.text)
    for lane in run.lanes.values():
        lane.heard.append(event.text)
        lane.lane.steps.append(run_step(lane.lane, step, event, before, sim.state, audit=False))
        on_advance(lane.name)


def _pair(step: int, pipeline_s: float, result: PlanResult) -> dict[str, Any]:
    full_s = result.parse_seconds + result.plan_seconds
    return {"step": step, "pipeline_s": pipeline_s, "full_state_s": full_s, "full_status": result.status.value}


def _task(
    run: SeedRun,
    sim: Simulator,
    step: int,
    config: Table1Config,
    on_advance: Callable[[str], None],
    baseline: ThreadPoolExecutor,
    pool: ThreadPoolExecutor,
) -> None:
    planned = sim.new_task(timeout=config.timeout)
    task = planned.task
    reference = tuple(str(a) for a in planned.reference.plan)
    run.tasks.append({"step": step, "text": task.text, "goal": task.goal_pddl, "reference_plan": list(reference)})
    for lane in run.lanes.values():
        if lane.lane.oracle is not None:
            lane.lane.oracle.brief_task(task)
        lane.heard.append(task.text)
    reports = plan_lanes(list(run.lanes.values()), task.text, pool)
    for lane, report in zip(run.lanes.values(), reports, strict=True):
        judged = judge_plan(sim, task, reference, report, step)
        lane.plans.append(judged)
        lane.plan_seconds.append(report.timings["total"] - report.timings.get("model", 0.0))
        if lane.name == FIG3_VARIANT and judged.outcome == "success":
            problem = full_state_problem(sim, task)  # the state now: the episode moves on meanwhile
            future = baseline.submit(solve, sim.domain, problem, config.planner, config.timeout)
            run.baselines.append((step, lane.plan_seconds[-1], future))
        on_advance(lane.name)


def plan_lanes(lanes: Sequence[LaneRun], request: str, pool: ThreadPoolExecutor) -> list[PlanReport]:
    """Every lane's plan for ``request``, in the lanes' order, planned at once on ``pool``.

    A lane's planner waits mostly on its planner subprocess, so lanes overlap on the cores. The lanes
    that search run one after another on one thread: they share the process's cache of embedded
    query texts, and which lane embedded a text first must not depend on thread timing.
    """
    groups: list[list[LaneRun]] = []
    searching: list[LaneRun] = []
    for lane in lanes:
        if lane.lane.variant.retriever != "search":
            groups.append([lane])
            continue
        if not searching:
            groups.append(searching)  # in the first searching lane's place: one worker keeps the lanes' order
        searching.append(lane)
    futures = [pool.submit(_plan_in_turn, group, request) for group in groups]
    reports = {name: report for future in futures for name, report in future.result()}
    return [reports[lane.name] for lane in lanes]


def _plan_in_turn(lanes: Sequence[LaneRun], request: str) -> list[tuple[str, PlanReport]]:
    return [(lane.name, _plan_alone(lane, request)) for lane in lanes]


def _plan_alone(lane: LaneRun, request: str) -> PlanReport:
    """The lane's report, its total time as if no planner call had been shared with another lane."""
    with credited() as credit:
        report = lane.planner.plan(request)
    if not credit.seconds:
        return report
    return replace(report, timings={**report.timings, "total": report.timings["total"] + credit.seconds})


def lanes_heard_the_same(runs: Sequence[SeedRun]) -> bool:
    """Whether, in every seed, every lane heard exactly the seed's script."""
    return all(lane.heard == _script(run) for run in runs for lane in run.lanes.values())


def _script(run: SeedRun) -> list[str]:
    tasks = {t["step"]: t["text"] for t in run.tasks}
    heard = []
    for step, text in enumerate(run.events, start=1):
        heard.append(text)
        if step in tasks:
            heard.append(tasks[step])
    return heard
