"""``l3mp daemon --env thor``: the robot runtime on a real AI2-THOR build (ai2thor's Controller).

The memory is the scene as THOR reports it at the start (a sensor update of every object), then, after
each step sent, everything THOR's answer reports, and between steps what the robot sees (the visible
view); tasks and reports come from ``--inbox``. English needs a configured model; a task with a PDDL
goal needs none.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.console import Console

from kg_memory import GraphStore, WorldMemory
from l3mp.llm import LanguageModel
from l3mp.pipelines import NLUpdateConfig, SensorUpdater
from l3mp.pipelines.plans import PlanConfig
from l3mp.runtime import InboxError, RunReport, Runtime, RuntimeConfig
from perception import thor_observation
from retrieval import DEFAULT_RETRIEVER
from sim.thor.environment import ThorConfig, ThorEnvironment


@dataclass(frozen=True, slots=True, kw_only=True)
class ThorDaemonConfig:
    thor: ThorConfig
    memory: str = "thor"
    steps: int = 10
    retriever: str = DEFAULT_RETRIEVER
    inbox: tuple[dict[str, str], ...] = field(default_factory=tuple)
    domain: str = "thor"  # or thor-travel: going to an object costs the distance walked
    optimal: bool = False  # plans proven cheapest (the plan_optimal setting)


@dataclass(frozen=True, slots=True)
class ThorRun:
    report: RunReport
    model: str
    seconds: float
    forced: int  # steps sent with forceAction


def run_thor_daemon(
    store: GraphStore, config: ThorDaemonConfig, console: Console, model: LanguageModel | None = None
) -> ThorRun:
    if model is None and any("report" in entry for entry in config.inbox):
        raise InboxError(0, next(e for e in config.inbox if "report" in e), "reports in English need --real-model")
    if config.memory in {m.name for m in store.list_memories()}:
        store.delete_memory(config.memory)  # THOR starts from a reset scene, so must the memory
    memory = WorldMemory.create(store, config.memory, config.domain)
    env = ThorEnvironment.start(config.thor, memory.domain)
    try:
        SensorUpdater(memory).apply(thor_observation(env.metadata, env.names, memory.domain))
        for entry in config.inbox:
            if "report" in entry:
                env.say(entry["report"])
            else:
                env.add_task(entry["task"], entry.get("goal"))
        runtime_config = RuntimeConfig(
            update=NLUpdateConfig(retriever=config.retriever),
            plan=PlanConfig(retriever=config.retriever, optimal=config.optimal),
        )
        runtime = Runtime(memory, env, model, runtime_config)
        label = str(getattr(model, "model", "no model: PDDL goals only"))
        console.print(f"[bold]l3mp daemon[/] on AI2-THOR {config.thor.scene}: model {label}")
        if config.thor.force_action:
            console.print("[yellow]forceAction is on: THOR skips its reachability checks[/]")
        started = time.perf_counter()
        with runtime.handle_signals():
            report = runtime.run(config.steps, until_idle=True)
        forced = sum(entry["forced"] for entry in env.log)
        return ThorRun(report, label, time.perf_counter() - started, forced)
    finally:
        env.close()
