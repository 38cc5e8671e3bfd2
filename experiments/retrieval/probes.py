"""Ground truth per step: what a retriever must return, and the request it gets."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Literal

from kg_memory import Delta, Fact
from kg_memory.formula import Formula
from planning.problem import goal_objects
from planning.world import World
from retrieval import QueryGraph
from sim import Event, Simulator, Task
from sim.errors import SimulationError
from sim.model.queries import Noise, event_query, task_names, task_query

PLACES = ("on", "inside", "in_hand", "held")  # where an item is
HOLDER_PLACES = ("in_room", "person_in")  # where what holds it is
StepKind = Literal["event", "task"]

# -- ground truth and requests ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """One step's request: what the context must hold, and the request as each retriever gets it."""

    step: int
    kind: StepKind
    name: str  # the event's or task's kind
    text: str
    needed: frozenset[Fact]
    names: tuple[str, ...]  # the entities involved: the selection R+ gets
    query: QueryGraph  # what RS gets
    delta: Delta | None = None  # an event's true change, applied after retrieval


def event_needed(event: Event) -> frozenset[Fact]:
    """What a state change needs in its context: the facts the true delta removes."""
    return frozenset(event.delta.remove)


def task_needed(goal: Formula, world: World) -> frozenset[Fact]:
    """The facts about the goal's constants and, for items, where they and their holders are."""
    objects = sorted(goal_objects(goal))
    about = {f for o in objects for f in world.facts_about(o) if f.args[0] == o}
    holders = sorted({f.args[1] for f in about if f.predicate in PLACES})
    where = {f for h in holders for f in world.facts_about(h) if f.args[0] == h and f.predicate in HOLDER_PLACES}
    return frozenset(about | where)


def event_probe(step: int, event: Event, world: World, rng: random.Random, noise: Noise) -> Probe:
    query = event_query(event, world, rng, noise)
    if query is None:
        raise SimulationError(f"event {event.kind} names no known entity")
    return Probe(
        step=step,
        kind="event",
        name=event.kind,
        text=event.text,
        needed=event_needed(event),
        names=event.entities,
        query=replace(query, text=event.text),
        delta=event.delta,
    )


def task_probe(step: int, task: Task, world: World, rng: random.Random, noise: Noise) -> Probe:
    query = task_query(task, world, rng, noise)
    return Probe(
        step=step,
        kind="task",
        name=task.kind,
        text=task.text,
        needed=task_needed(task.goal, world),
        names=task_names(task),
        query=replace(query, text=task.text),
    )


def propose_task(sim: Simulator, attempts: int = 10) -> Task:
    """A task whose goal does not hold yet (no reference plan: retrieval does not need one)."""
    for _ in range(attempts):
        task = sim.tasks.propose(sim.world)
        if not sim.evaluator.evaluate(task.goal, sim.world):
            return task
    raise SimulationError(f"no task with an unmet goal in {attempts} attempts")


def next_probe(sim: Simulator, step: int, task_every: int, rng: random.Random, noise: Noise) -> Probe:
    """The step's request; an event is drawn (and applied to the truth), a task only proposed."""
    if task_every and step % task_every == 0:
        return task_probe(step, propose_task(sim), sim.world, rng, noise)
    event = sim.next_event()  # entities never change, so the world after the event knows them all
    return event_probe(step, event, sim.world, rng, noise)
