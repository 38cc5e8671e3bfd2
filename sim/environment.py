"""The text household simulator as the runtime's :class:`~l3mp.runtime.Environment`, with the
disturbances (people tidying things away) that exercise monitoring and replanning."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable

from kg_memory.model import Delta, Fact
from l3mp.outcomes import Question
from l3mp.runtime import TaskRequest
from perception.observation import Observation
from planning.evaluator import GroundAction, StepOutcome
from planning.goal_reader import parse_goal
from sim.events import Event
from sim.household import CONTAINER_TYPES
from sim.model import SimulatedModel
from sim.simulator import Simulator

# A disturbance: called after each robot action with the simulator and that action; it returns a
# human event already applied to the truth (or None), which the environment reports if it is told to.
Disturbance = Callable[[Simulator, GroundAction], Event | None]


class SimEnvironment:
    """:class:`Environment` over :class:`sim.Simulator`; deterministic for a seed.

    After each robot action, :meth:`advance` draws a random human event with probability
    ``event_rate`` and applies ``disturbance`` if given. Events are reported (queued as what people
    say) when ``report_events``; the simulated model, if given, is briefed on every report and task.
    """

    def __init__(
        self,
        sim: Simulator,
        model: SimulatedModel | None = None,
        *,
        event_rate: float = 0.0,
        disturbance: Disturbance | None = None,
        report_events: bool = True,
        seed: int = 0,
    ) -> None:
        self.sim = sim
        self.model = model
        self.event_rate = event_rate
        self.disturbance = disturbance
        self.report_events = report_events
        self.rng = random.Random(seed)
        self.events: list[Event] = []  # every human event applied to the truth, in order
        self._reports: deque[str] = deque()
        self._tasks: deque[TaskRequest] = deque()
        self._goals: dict[str, str] = {}  # task id -> its true goal, for judging
        self._last: GroundAction | None = None
        self.questions: list[tuple[TaskRequest, tuple[Question, ...]]] = []  # what the robot asked back

    # -- feeding it -------------------------------------------------------------------------------

    def human_event(self) -> Event:
        """A random human event, applied to the truth and (if ``report_events``) reported."""
        event = self.sim.next_event()
        self._happened(event)
        return event

    def say(self, text: str) -> None:
        self._reports.append(text)

    def add_task(
        self,
        text: str,
        goal: str | None = None,
        *,
        true_goal: str | None = None,
        answers: tuple[tuple[str, str], ...] = (),
    ) -> TaskRequest:
        request = TaskRequest(text, goal, answers=answers)
        self._tasks.append(request)
        if true_goal or goal:
            self._goals[request.id] = true_goal or goal or ""
        return request

    def true_goal(self, request: TaskRequest) -> str | None:
        """The PDDL goal a task was generated with (for judging, and to pick what a person disturbs)."""
        return self._goals.get(request.id)

    def new_task(self, *, with_goal: bool = False) -> TaskRequest:
        """A solvable task from the simulator; ``with_goal`` passes its PDDL goal (no model needed)."""
        task = self.sim.new_task().task
        if self.model is not None:
            self.model.brief_task(task)
        return self.add_task(task.text, task.goal_pddl if with_goal else None, true_goal=task.goal_pddl)

    # -- Environment -------------------------------------------------------------------------------

    def observe(self) -> Observation:
        return self.sim.observe()

    def execute(self, action: GroundAction) -> StepOutcome:
        self._last = action
        return self.sim.execute(action)

    def next_report(self) -> str | None:
        return self._reports.popleft() if self._reports else None

    def next_task(self) -> TaskRequest | None:
        return self._tasks.popleft() if self._tasks else None

    def advance(self) -> None:
        if self.event_rate > 0 and self.rng.random() < self.event_rate:
            self.human_event()
        if self.disturbance is not None and self._last is not None:
            event = self.disturbance(self.sim, self._last)
            if event is not None:
                self._happened(event)
        self._last = None

    def ask(self, task: TaskRequest, questions: tuple[Question, ...]) -> None:
        """The robot's questions about ``task`` (open world), kept for whoever asked."""
        self.questions.append((task, questions))

    def truth(self) -> frozenset[Fact] | None:
        return self.sim.state

    def judge(self, task: TaskRequest, goal: str | None) -> bool | None:
        text = self._goals.get(task.id) or goal
        if not text:
            return None
        return self.sim.evaluator.evaluate(parse_goal(text), self.sim.world)

    def _happened(self, event: Event) -> None:
        self.events.append(event)
        if self.report_events:
            if self.model is not None:
                self.model.brief_event(event)
            self._reports.append(event.text)


def relocate(sim: Simulator, item: str, rng: random.Random) -> Event | None:
    """Someone puts ``item`` (on or in a receptacle) onto another receptacle of its kind; applied to the truth.

    ``None`` when the item is not on or in a receptacle (held by the robot or a person) or has nowhere
    else to go. Closed containers are skipped, so the change keeps the domain's rules.
    """
    home, world = sim.home, sim.world
    where = next((f for f in world.facts_about(item) if f.predicate in ("on", "inside") and f.args[0] == item), None)
    if where is None:
        return None
    type_ = home.by_name[item].type
    targets = [r for r in home.receptacles_for.get(type_, ()) if r != where.args[1] and _open(sim, r)]
    if not targets:
        return None
    target = rng.choice(sorted(targets))
    predicate = "inside" if home.by_name[target].type in CONTAINER_TYPES else "on"
    delta = Delta(remove=frozenset({where}), add=frozenset({Fact(predicate, (item, target))}))
    world.apply(delta)
    item_label, target_label = home.by_name[item].label or item, home.by_name[target].label or target
    text = f"Someone moved the {item_label} to the {target_label}."
    return Event(
        kind="item_moved",
        category="item",
        delta=delta,
        text=text,
        vagueness="exact",
        entities=(item, where.args[1], target),
    )


def _open(sim: Simulator, receptacle: str) -> bool:
    if sim.home.by_name[receptacle].type not in CONTAINER_TYPES:
        return True
    return sim.world.holds(Fact("open", (receptacle,)))


class MoveTarget:
    """Relocates ``item`` once, right after the robot's first ``move`` action (a person tidies it away)."""

    def __init__(self, item: str | None = None, *, seed: int = 0, times: int = 1) -> None:
        self.item = item
        self.rng = random.Random(seed)
        self.times = times
        self.fired: list[Event] = []

    def __call__(self, sim: Simulator, action: GroundAction) -> Event | None:
        if self.item is None or len(self.fired) >= self.times or action.name != "move":
            return None
        event = relocate(sim, self.item, self.rng)
        if event is not None:
            self.fired.append(event)
        return event
