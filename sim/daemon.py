"""``l3mp daemon``: the robot runtime on a simulated home, with a live summary and a report file.

A fresh home from the text simulator (or the memory left by an earlier run: the runtime resumes
from the store), people acting and reporting in English, tasks every few steps, and one person who
tidies away the item the robot is about to fetch, so monitoring and replanning are exercised. The
language model is the configured one, or the simulated model (answers from the simulator's truth
with injected errors), which the summary and the report name as simulated.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from kg_memory import GraphStore, WorldMemory
from l3mp.llm import LanguageModel
from l3mp.pipelines import NLUpdateConfig
from l3mp.pipelines.plans import PlanConfig
from l3mp.runtime import InboxError, RunReport, Runtime, RuntimeConfig, StepRecord
from planning import goal_objects, parse_goal
from retrieval import DEFAULT_RETRIEVER
from sim import HomeSpec, Simulator, generate_home
from sim.building import simulator_for
from sim.environment import MoveTarget, SimEnvironment
from sim.model import ErrorRates, SimulatedModel


@dataclass(frozen=True, slots=True, kw_only=True)
class DaemonConfig:
    memory: str = "home"
    steps: int = 40
    seed: int = 0
    task_every: int = 5  # a task is asked for every n-th step
    event_rate: float = 0.3  # chance per step (and per robot action) that someone changes something
    error_rate: float = 0.2  # the simulated model's injected errors
    retriever: str = DEFAULT_RETRIEVER
    optimal: bool = False  # plans proven cheapest (the plan_optimal setting)
    home: HomeSpec | None = None  # default: the paper's scale
    inbox: tuple[dict[str, str], ...] = ()  # queued at the start: {"task": ..., "goal"?: ...} or {"report": ...}
    reader: str = "write"  # how a real model reads reports and requests: write or choose (the nl_reader setting)
    ranker: str = "choice"  # how the choosing reader asks the model (the nl_ranker setting)


def _queue(env: SimEnvironment, inbox: tuple[dict[str, str], ...], simulated: bool) -> None:
    for entry in inbox:
        if "report" in entry:
            if simulated:  # the simulated model only knows what the simulator did
                raise InboxError(0, entry, "reports in English need a real model (--real-model)")
            env.say(entry["report"])
        else:
            env.add_task(entry["task"], entry.get("goal"))


def model_label(model: LanguageModel | None, simulated: SimulatedModel | None) -> str:
    return simulated.label if simulated is not None else str(getattr(model, "model", "configured model"))


def _home_and_memory(store: GraphStore, config: DaemonConfig) -> tuple[Simulator, WorldMemory]:
    home = generate_home(config.home or HomeSpec(seed=config.seed))
    sim = simulator_for(home, seed=config.seed)
    if config.memory in {m.name for m in store.list_memories()}:
        store.delete_memory(config.memory)  # the simulator starts afresh, so must the memory
    memory = WorldMemory.create(store, config.memory, "household")
    memory.add_entities(home.entities, facts=home.facts, input="survey")
    return sim, memory


def _first_item(goal: str, sim: Simulator) -> str | None:
    items = sorted(n for n in goal_objects(parse_goal(goal)) if sim.world.is_a(n, "item"))
    return items[0] if items else None


@dataclass(frozen=True, slots=True)
class DaemonRun:
    report: RunReport
    model: str  # the model's label: "simulated (...)" when no model was configured
    seconds: float


def run_daemon(
    store: GraphStore, config: DaemonConfig, console: Console, model: LanguageModel | None = None
) -> DaemonRun:
    sim, memory = _home_and_memory(store, config)
    simulated = (
        SimulatedModel(sim.world, ErrorRates(rate=config.error_rate), seed=config.seed) if model is None else None
    )
    env = SimEnvironment(sim, simulated, event_rate=config.event_rate, seed=config.seed)
    runtime = Runtime(
        memory,
        env,
        model or simulated,
        RuntimeConfig(
            update=NLUpdateConfig(retriever=config.retriever, reader=config.reader, ranker=config.ranker),
            plan=PlanConfig(
                retriever=config.retriever, optimal=config.optimal, reader=config.reader, ranker=config.ranker
            ),
        ),
    )
    label = model_label(model, simulated)
    _queue(env, config.inbox, simulated is not None)
    console.print(f"[bold]l3mp daemon[/]: {len(sim.home.entities)} entities, model: [yellow]{label}[/]")
    steps: list[StepRecord] = []
    started = time.perf_counter()
    with Live(_summary(steps, label), console=console, refresh_per_second=4) as live, runtime.handle_signals():
        for index in range(config.steps):
            if runtime.stopping:
                break
            if config.task_every and index % config.task_every == 0:
                request = env.new_task()
                goal = env.true_goal(request)
                item = _first_item(goal, sim) if goal and env.disturbance is None else None
                if item is not None:  # someone will tidy this item away while the robot goes for it
                    env.disturbance = MoveTarget(item, seed=config.seed)
            elif env.rng.random() < config.event_rate:
                env.human_event()
            steps.append(runtime.step())
            live.update(_summary(steps, label))
    first = steps[0].version_before if steps else memory.version
    report = RunReport(
        memory=memory.name,
        start_version=first,
        end_version=memory.version,
        steps=tuple(steps),
        stopped=runtime.stopping,
    )
    return DaemonRun(report, label, time.perf_counter() - started)


ENDS = ("succeeded", "failed", "abandoned")


def _summary(steps: list[StepRecord], label: str) -> Table:
    tasks = [s.task for s in steps if s.task is not None]
    table = Table(title=f"robot runtime (model: {label})", show_header=False)
    accuracy = steps[-1].accuracy if steps and steps[-1].accuracy is not None else None
    rows = (
        ("steps", str(len(steps))),
        ("reports heard", str(sum(len(s.reports) for s in steps))),
        ("tasks: succeeded / failed / abandoned", "/".join(str(sum(t.status.value == k for t in tasks)) for k in ENDS)),
        ("actions executed", str(sum(sum(a.executed for a in t.actions) for t in tasks))),
        ("replans", str(sum(len(t.replans) for t in tasks))),
        ("memory accuracy now", "-" if accuracy is None else f"{accuracy:.4f}"),
    )
    for name, value in rows:
        table.add_row(name, value)
    return table


def write_report(path: Path, run: DaemonRun) -> dict[str, Any]:
    """The run as JSON, with a summary first: accuracy per step, tasks, replans and their causes."""
    report = run.report
    tasks = [s.task for s in report.steps if s.task is not None]
    record = {
        "model": run.model,
        "seconds": round(run.seconds, 1),
        "summary": report.summary(),
        "accuracy_per_step": [s.accuracy for s in report.steps],
        "tasks": [
            {
                "request": t.request,
                "status": t.status.value,
                "reason": t.reason,
                "replans": [r.to_json() for r in t.replans],
                "actions": sum(a.executed for a in t.actions),
            }
            for t in tasks
        ],
        "run": report.to_json(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record
