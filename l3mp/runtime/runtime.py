"""The robot runtime: perceive, take reports, plan and execute tasks, monitor, replan.

Each :meth:`Runtime.step`:

1. perceives (a sensor update);
2. reads what people said (NL updates, Alg. 3);
3. takes one task and runs it through the task loop (:mod:`l3mp.runtime.task_loop`): planned from
   memory (Alg. 4), executed step by step with the memory kept current, replanned at most
   ``max_replans`` times; in the open world (``RuntimeConfig.open_world``) it may also ask back,
   explore and split into stages (:mod:`l3mp.runtime.open_world`);
4. writes a checkpoint (a no-op update whose meta carries the step index), so a new runtime over the
   same memory resumes where this one stopped.

A stop request (:meth:`Runtime.stop`, or SIGINT/SIGTERM inside :meth:`Runtime.handle_signals`) is
honoured between steps: the current step, and the task in it, is always finished.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from kg_memory.memory import WorldMemory
from kg_memory.model import Delta, Fact, UpdateSource
from l3mp._json import JSONObject
from l3mp.llm.base import LanguageModel
from l3mp.pipelines.plans import TaskPlanner
from l3mp.runtime.config import RuntimeConfig
from l3mp.runtime.environment import Environment
from l3mp.runtime.open_world import OpenWorld
from l3mp.runtime.records import RunReport, StepRecord, TaskRecord
from l3mp.runtime.senses import Senses
from l3mp.runtime.task_loop import ClosedWorld, TaskLoop, TaskPlanning

CHECKPOINT_KEY = "runtime_step"


def jaccard(a: frozenset[Fact], b: frozenset[Fact]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


class Runtime:
    def __init__(
        self,
        memory: WorldMemory,
        env: Environment,
        model: LanguageModel | None = None,
        config: RuntimeConfig | None = None,
    ) -> None:
        self.memory = memory
        self.env = env
        self.model = model
        self.config = config or RuntimeConfig()
        self.senses = Senses(memory, env, model, update=self.config.update, max_reports=self.config.max_reports)
        self.tasks = TaskLoop(memory, env, model, self.config, self.senses)
        self.closed_world = ClosedWorld(TaskPlanner(memory, model, self.config.plan))
        self._stop = threading.Event()
        self.next_step = resume_step(memory)

    # -- control -----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Ask the runtime to stop after the current step."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @contextmanager
    def handle_signals(self, signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
        """Within the block, these signals request a graceful stop (main thread only)."""

        def handler(signum: int, frame: FrameType | None) -> None:
            self.stop()

        previous = {s: signal.signal(s, handler) for s in signals}
        try:
            yield
        finally:
            for s, old in previous.items():
                signal.signal(s, old)

    def run(self, max_steps: int, *, until_idle: bool = False) -> RunReport:
        """Up to ``max_steps`` steps; earlier on a stop request, or (``until_idle``) after an idle step."""
        start = self.memory.version
        steps: list[StepRecord] = []
        while len(steps) < max_steps and not self.stopping:
            record = self.step()
            steps.append(record)
            if until_idle and record.task is None and not record.reports:
                break
        return RunReport(
            memory=self.memory.name,
            start_version=start,
            end_version=self.memory.version,
            steps=tuple(steps),
            stopped=self.stopping,
        )

    # -- one step ----------------------------------------------------------------------------------

    def step(self) -> StepRecord:
        index, before = self.next_step, self.memory.version
        updates = [self.senses.perceive()[0]]
        reports, heard = self.senses.read_reports()
        updates += heard
        request = self.env.next_task()
        task = self.tasks.run(request, self._planning()) if request is not None else None
        if task is None:
            self.env.advance()  # time passes even when the robot is idle
        truth = self.env.truth()
        accuracy = jaccard(self.memory.facts(), truth) if truth is not None else None
        self._checkpoint(index, task, accuracy)
        self.next_step = index + 1
        return StepRecord(
            index=index,
            version_before=before,
            version_after=self.memory.version,
            reports=reports,
            updates=tuple(updates),
            task=task,
            accuracy=accuracy,
        )

    def _planning(self) -> TaskPlanning:
        """The closed world's planner serves every task; the open world's keeps each task's searches."""
        return OpenWorld(self.tasks) if self.config.open_world else self.closed_world

    def _checkpoint(self, index: int, task: TaskRecord | None, accuracy: float | None) -> None:
        meta: JSONObject = {CHECKPOINT_KEY: index, "accuracy": accuracy}
        if task is not None:
            meta["task"] = _task_summary(task)
        self.memory.apply(Delta(), source=UpdateSource.API, input=f"runtime checkpoint {index}", meta=meta)


def _task_summary(task: TaskRecord) -> JSONObject:
    """What a checkpoint keeps of a task: enough for the dashboard to show it and why it replanned."""
    last = task.plans[-1] if task.plans else None
    return {
        "id": task.id,
        "status": task.status.value,
        "replans": len(task.replans),
        "request": task.request[:500],
        "goal": task.goal,
        "reason": task.reason[:500],
        "causes": [r.to_json() for r in task.replans],
        "plan": list(last.plan) if last else [],
        "tier": last.tier if last else None,
        "actions": sum(a.executed for a in task.actions),
    }


def resume_step(memory: WorldMemory) -> int:
    """The step after the last checkpoint in the memory's history (0 for a memory never run)."""
    for update in reversed(memory.history()):
        step = update.meta.get(CHECKPOINT_KEY)
        if isinstance(step, int):
            return step + 1
    return 0
