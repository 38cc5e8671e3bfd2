"""The seeds of a Table I run, one after another or in worker processes (``--jobs``).

Seeds are independent (each its own home, episode, store and models), and a seed's loop is one
Python thread waiting on planner subprocesses in turn, so two seeds at once keep both cores of a
small machine busy. Workers are spawned (not forked: the parent runs progress threads), each builds
its own store, embedder and models from plain parameters, and hands back plain figures; their
progress comes back through a queue to the parent's bars.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.harness import open_store
from experiments.table1.episode import Table1Config, run_seed
from experiments.table1.models import ModelSource, configured_source
from experiments.table1.report import seed_figures
from experiments.updates import VARIANTS
from retrieval import Embedder
from sim.model import ErrorRates


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedJob:
    """What a worker needs to run one seed: plain values only (it crosses a process boundary)."""

    seed: int
    values: dict[str, Any]  # the run's parameters
    kind: str  # "simulated", "configured" or "replay"
    name: str  # the model's name
    record: Path | None = None
    replay: Path | None = None
    share: bool = True  # identical planner calls once, lanes at once (how it runs, not what it reports)


def rates_of(values: dict[str, Any]) -> ErrorRates:
    return ErrorRates(rate=values.get("error_rate", 0.0), correct_on_reprompt=values.get("correct_on_reprompt", 1.0))


def config_of(values: dict[str, Any]) -> Table1Config:
    home = values["home"] if isinstance(values["home"], dict) else {}
    return Table1Config(
        seeds=tuple(values["seeds"]),
        steps=values["steps"],
        task_every=values["task_every"],
        variants=tuple(v for v in VARIANTS if v.name in values["variants"]),
        spec=home,
        planner=values["planner"],
        timeout=values["timeout"],
    )


def source_of(job: SeedJob) -> ModelSource:
    rates = rates_of(job.values)
    if job.kind == "replay":
        return ModelSource(kind="replay", name=job.name, rates=rates, replay=job.replay)
    if job.kind == "configured":
        return configured_source(rates, job.record)
    return ModelSource(kind="simulated", name=job.name, rates=rates, record=job.record)


class _NoEmbedder:
    """Stands in where no variant searches: R- and R+ never embed, so a call is a bug."""

    dimension = 1

    def embed(self, texts: Any) -> Any:
        raise AssertionError("no variant of this run searches, so nothing should embed")


def _embedder(config: Table1Config) -> Embedder:
    if not any(v.retriever == "search" for v in config.variants):
        return _NoEmbedder()
    from retrieval import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


def run_job(job: SeedJob, progress: Any, embedder: Embedder | None = None) -> dict[str, Any]:
    """One seed, start to end; ``progress.put((seed, variant))`` after each variant's step or task."""
    config = config_of(job.values)
    with open_store("sqlite") as store:
        run = run_seed(
            job.seed,
            config,
            store,
            embedder or _embedder(config),
            source_of(job),
            lambda name: progress.put((job.seed, name)),
            share=job.share,
        )
        return seed_figures(run)


def _one_thread() -> None:
    """One math thread per worker (set before torch loads): the workers already fill the cores, and
    several processes' OpenMP thread pools would only compete for them."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")


class _Direct:
    """The queue's ``put`` for a run in this process: advance the bar at once."""

    def __init__(self, advance: Callable[[tuple[int, str]], None]) -> None:
        self.put = advance


def run_jobs(jobs: Sequence[SeedJob], workers: int, advance: Callable[[tuple[int, str]], None]) -> list[dict[str, Any]]:
    """Every job's figures, in the jobs' order."""
    if workers <= 1 or len(jobs) <= 1:
        embedder = _embedder(config_of(jobs[0].values)) if jobs else None  # loaded once for all seeds
        return [run_job(job, _Direct(advance), embedder) for job in jobs]
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        updates = manager.Queue()
        with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_one_thread) as pool:
            futures = [pool.submit(run_job, job, updates) for job in jobs]
            _follow(futures, updates, advance)
            return [future.result() for future in futures]


def _follow(futures: Sequence[Future[Any]], updates: Any, advance: Callable[[tuple[int, str]], None]) -> None:
    """Advance the bars from the workers' reports until every worker is done (or one failed)."""
    while True:
        try:
            advance(updates.get(timeout=0.2))
            continue
        except queue.Empty:
            pass
        if all(f.done() for f in futures):
            break
        if any(f.done() and f.exception() is not None for f in futures):
            break  # its result() raises it to the caller
    while True:
        try:
            advance(updates.get_nowait())
        except queue.Empty:
            return
