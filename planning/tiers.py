"""Planning from a retrieved context, made safe by validation against the full state.

A pruned problem plans in a fraction of a second where the full state takes minutes (or runs
out of memory), but it is a guess: a fact it leaves out can make the planner believe an action
applies, or that none does. So every plan is run by our evaluator from the full current state.
When the pruned problem is unsolvable or its plan fails there, the context is widened and the
planner tried again; the full state is the last resort. The result says which tier succeeded and
why the earlier ones failed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from kg_memory import Domain, Entity, Fact
from kg_memory.formula import And, Atom, Formula, Not, Or, Quantified
from planning.deadline import EvaluationDeadlinePassed, watch_until
from planning.evaluator import ActionEvaluator, GroundAction
from planning.planner import ANYTIME_PLANNER, DEFAULT_PLANNER, OPTIMAL_PLANNER, PlanResult, PlanStatus, solve
from planning.problem import Context, full_context, goal_objects, neighbours, problem_pddl
from planning.world import World

TIERS = ("retrieved", "widened", "full")
HOLDS = "holds"  # the tier of the empty plan, when the goal already holds in the full state
# Asked for an optimal plan, the satisficing planner first finds one on the first context (about a
# second), so that an optimal search the deadline stops before its first plan still leaves a plan;
# LAMA's anytime search then improves on it in what time is left, up to this long.
INCUMBENT_SECONDS = 10.0


def _seconds_left(deadline: float | None) -> float:
    return float("inf") if deadline is None else deadline - time.monotonic()


@dataclass(frozen=True, slots=True, kw_only=True)
class TierAttempt:
    """One planner call: on what context, with what outcome, and why it was not good enough."""

    tier: str
    objects: int
    facts: int
    result: PlanResult
    valid: bool | None  # the plan run from the full state: None when there was no plan
    reason: str  # why this tier did not give the answer ("" for the one that did)
    problem: str  # the PDDL text the planner got
    build_seconds: float
    validate_seconds: float

    @property
    def accepted(self) -> bool:
        return self.valid is True


@dataclass(frozen=True, slots=True, kw_only=True)
class TieredPlan:
    """The outcome: a plan valid in the full state (from ``tier``), or the last tier's status."""

    status: PlanStatus
    plan: tuple[GroundAction, ...] = ()
    tier: str | None = None
    attempts: tuple[TierAttempt, ...] = ()
    cost: float | None = None  # the plan's cost in the full state (its length without action costs)
    optimal: bool = False  # proven cheapest for the whole state, not just for a pruned context
    note: str = ""  # why a plan asked to be optimal is not proven so (the deadline, a pruned context)

    @property
    def solved(self) -> bool:
        return self.status is PlanStatus.SOLVED

    @property
    def planner_seconds(self) -> float:
        return sum(a.result.plan_seconds + a.result.parse_seconds for a in self.attempts)


def formula_predicates(formula: Formula) -> set[str]:
    match formula:
        case Atom(predicate=predicate):
            return {predicate}
        case Not(arg=arg) | Quantified(body=arg):
            return formula_predicates(arg)
        case And(args=args) | Or(args=args):
            return set().union(*(formula_predicates(a) for a in args)) if args else set()
    return set()


def _facts_among(world: World, names: set[str]) -> frozenset[Fact]:
    known = names | set(world.domain.constants)
    return frozenset(f for f in world.facts if all(a in known for a in f.args))


def _entities(world: World, names: Iterable[str]) -> tuple[Entity, ...]:
    constants = world.domain.constants
    return tuple(e for n in sorted(set(names)) if n not in constants and (e := world.entity(n)) is not None)


def _needed_types(domain: Domain, predicates: set[str]) -> set[str]:
    """The parameter types of the actions that can change ``predicates`` (what achieving them takes)."""
    return {p.type for a in domain.actions.values() if a.changes & predicates for p in a.parameters}


def widen(
    world: World,
    context: Context,
    goal: Formula,
    predicates: set[str],
    anchors: Sequence[str],
    per_type: int = 2,
    reverse_cap: int = 32,
) -> Context:
    """More of the state, still far from all of it, in time near-linear in the state's size.

    Two hops around the goal's objects (each hop taking at most ``reverse_cap`` of the things an
    object holds); for every type that the actions changing ``predicates`` (those the goal and a
    failing action mention) take as a parameter, the ``per_type`` objects of that type nearest the
    first anchor, with the way to them; then each kept object's own static facts (a table's room,
    a faucet's sink, a room's doors). Taking all facts of those predicates instead would, at 10,000
    entities, rebuild most of the full problem.
    """
    import networkx as nx

    names = {e.name for e in context.entities} | goal_objects(goal)
    hop = {n for o in goal_objects(goal) for n in neighbours(world, o, reverse_cap)}
    names |= hop | {n for o in hop for n in neighbours(world, o, reverse_cap)}
    graph: nx.Graph[str] = nx.Graph()  # costs (numeric facts) are not ways from one object to another
    graph.add_edges_from(f.args for f in world.facts if len(f.args) == 2 and f.value is None)
    start = next((a for a in anchors if a in graph), None)
    paths = nx.single_source_shortest_path(graph, start) if start is not None else {}
    for type_ in sorted(_needed_types(world.domain, predicates)):
        reachable = sorted((len(paths[o]), o) for o in world.objects_of(type_) if o in paths)
        for _, name in reachable[:per_type]:
            names |= set(paths[name])
    static = world.domain.static_predicates
    names |= {
        a
        for n in list(names)
        for f in world.facts_about(n)
        if f.predicate in static and f.value is None and f.args[0] == n
        for a in f.args
    }
    entities = _entities(world, names)
    return Context(entities, _facts_among(world, {e.name for e in entities}), "widened")


def _failing_action_predicates(domain: Domain, plan: Sequence[GroundAction], failed_at: int | None) -> set[str]:
    if failed_at is None:
        return set()
    schema = domain.actions.get(plan[failed_at].name)
    if schema is None:
        return set()
    return formula_predicates(schema.precondition) | set(schema.changes)


class TieredPlanner:
    """Plans ``goal`` from a first context, validating against ``world`` (the full current state)."""

    def __init__(
        self, domain: Domain, *, planner: str = DEFAULT_PLANNER, timeout: float = 60.0, optimal: bool = False
    ) -> None:
        self.domain = domain
        self.planner = OPTIMAL_PLANNER if optimal else planner
        self.timeout = timeout
        self.optimal = optimal
        self.evaluator = ActionEvaluator(domain)

    def plan(
        self,
        world: World,
        goal: Formula,
        first: Context,
        *,
        anchors: Sequence[str] = (),
        full_state: bool = True,
        deadline: float | None = None,
    ) -> TieredPlan:
        """Try ``first``, then a widened context, then (if ``full_state``) the whole state.

        A goal that already holds is solved at once by the empty plan, of cost 0 and optimal. ``deadline`` (a
        ``time.monotonic()`` instant) bounds the whole call: checking whether the goal holds stops
        at it, each planner call gets what is left (at most ``timeout``), and when nothing is left
        the result is ``timeout`` with the attempts made so far. Asked for an optimal plan, the
        satisficing planner's plan on ``first`` comes first: when the deadline stops every optimal
        search before its first plan, that plan (or a cheaper one LAMA's anytime search finds in what
        time is left) is the answer, with ``optimal`` false and why.
        """
        try:
            if self.evaluator.evaluate(goal, world, watch=watch_until(deadline)):
                # no plan is cheaper than the empty one: proven optimal
                return TieredPlan(status=PlanStatus.SOLVED, tier=HOLDS, cost=0.0, optimal=True)
        except EvaluationDeadlinePassed:
            return TieredPlan(status=PlanStatus.TIMEOUT)  # as when the deadline comes before any planner call
        incumbent = self._satisficing(world, goal, first, deadline, DEFAULT_PLANNER) if self.optimal else None
        result = self._tiers(world, goal, first, anchors, full_state, deadline)
        if incumbent is None:
            return result
        attempts = (incumbent, *result.attempts)
        if result.solved or not incumbent.accepted:
            return replace(result, attempts=attempts)
        why = result.attempts[-1].reason if result.attempts else "no time was left for it"
        improved = self._satisficing(world, goal, first, deadline, ANYTIME_PLANNER)  # in what time is left
        if improved is not None:
            attempts = (*attempts, improved)
            if improved.accepted and self._cost(world, improved) < self._cost(world, incumbent):
                incumbent = improved
        note = (
            f"the optimal search found no plan before the deadline ({why}); this is the best plan the satisficing "
            "searches found, not proven cheapest"
        )
        return TieredPlan(
            status=PlanStatus.SOLVED,
            plan=incumbent.result.plan,
            tier=incumbent.tier,
            attempts=attempts,
            cost=self._cost(world, incumbent),
            optimal=False,
            note=note,
        )

    def _tiers(
        self,
        world: World,
        goal: Formula,
        first: Context,
        anchors: Sequence[str],
        full_state: bool,
        deadline: float | None,
    ) -> TieredPlan:
        attempts: list[TierAttempt] = []
        context: Context | None = first
        predicates = formula_predicates(goal)
        for tier in TIERS:
            if _seconds_left(deadline) <= 0:
                return TieredPlan(status=PlanStatus.TIMEOUT, attempts=tuple(attempts))
            if tier == "widened":
                context = widen(world, first, goal, predicates, anchors)
            elif tier == "full":
                context = full_context(world) if full_state else None
            if context is None:
                break
            started = time.perf_counter()
            entities, text = self._problem(world, goal, context)
            if attempts and text == attempts[-1].problem:
                continue  # widening added nothing: the same problem would fail the same way
            built = time.perf_counter() - started
            timeout = min(self.timeout, _seconds_left(deadline))
            if timeout <= 0:
                return TieredPlan(status=PlanStatus.TIMEOUT, attempts=tuple(attempts))
            sizes = (len(entities), len(context.facts))
            attempt, failing = self._attempt(tier, world, goal, sizes, text, built, timeout, deadline=deadline)
            attempts.append(attempt)
            if attempt.accepted:
                return self._solved(world, goal, tier, attempts, full_state, deadline)
            if attempt.result.status is PlanStatus.TIMEOUT and _seconds_left(deadline) <= 0:
                break  # the request's time is up: a wider problem would only take longer
            predicates |= failing
        if not attempts:
            return TieredPlan(status=PlanStatus.UNSOLVABLE)
        last = attempts[-1]
        if last.result.solved and last.valid is None:  # the deadline passed while its plan was checked
            return TieredPlan(status=PlanStatus.TIMEOUT, attempts=tuple(attempts))
        # a plan that even the last tier could not make valid is an error, not proof of unsolvability
        status = PlanStatus.ERROR if last.result.solved else last.result.status
        return TieredPlan(status=status, attempts=tuple(attempts))

    def _solved(
        self,
        world: World,
        goal: Formula,
        tier: str,
        attempts: list[TierAttempt],
        full_state: bool,
        deadline: float | None,
    ) -> TieredPlan:
        """The accepted plan with its cost; asked for an optimal plan, one proven optimal only for a
        pruned context is checked against the whole state (a cheaper plan may use what pruning left
        out), and the cheaper of the two is kept."""
        best = attempts[-1]
        left = min(self.timeout, _seconds_left(deadline))
        if self.optimal and tier != "full" and full_state and best.result.optimal and left > 0:
            started = time.perf_counter()
            entities, text = self._problem(world, goal, full_context(world))
            built = time.perf_counter() - started
            sizes = (len(entities), len(world.facts))
            whole, _ = self._attempt("full", world, goal, sizes, text, built, left - built, deadline=deadline)
            attempts.append(whole)
            if whole.accepted and self._cost(world, whole) <= self._cost(world, best):
                best, tier = whole, "full"
        result = best.result
        proven = self.optimal and result.optimal and tier == "full"
        note = ""
        if self.optimal and not proven:
            last = attempts[-1].result
            note = result.message or (
                f"proven cheapest only for the {tier} context; the whole state was not searched to the end"
                + (f" ({last.message})" if last.message and last is not result else "")
            )
        return TieredPlan(
            status=PlanStatus.SOLVED,
            plan=result.plan,
            tier=tier,
            attempts=tuple(attempts),
            cost=self._cost(world, best),
            optimal=proven,
            note=note,
        )

    def _cost(self, world: World, attempt: TierAttempt) -> float:
        return self.evaluator.plan_cost(attempt.result.plan, world)

    def _satisficing(
        self, world: World, goal: Formula, first: Context, deadline: float | None, planner: str
    ) -> TierAttempt | None:
        """A satisficing ``planner``'s plan on the first context, kept in case no optimal one comes."""
        timeout = min(INCUMBENT_SECONDS, self.timeout, _seconds_left(deadline))
        if timeout <= 0:
            return None
        started = time.perf_counter()
        entities, text = self._problem(world, goal, first)
        built = time.perf_counter() - started
        sizes = (len(entities), len(first.facts))
        attempt, _ = self._attempt(
            TIERS[0], world, goal, sizes, text, built, timeout, planner=planner, deadline=deadline
        )
        return attempt

    def _problem(self, world: World, goal: Formula, context: Context) -> tuple[tuple[Entity, ...], str]:
        named = goal_objects(goal) | {a for f in context.facts for a in f.args}
        missing = named - {e.name for e in context.entities} - set(self.domain.constants)
        entities = context.entities + _entities(world, missing)  # every object the problem names is declared
        return entities, problem_pddl(self.domain, entities, context.facts, goal)

    def _attempt(
        self,
        tier: str,
        world: World,
        goal: Formula,
        sizes: tuple[int, int],
        text: str,
        built: float,
        timeout: float,
        *,
        planner: str | None = None,
        deadline: float | None = None,
    ) -> tuple[TierAttempt, set[str]]:
        objects, facts = sizes
        result = solve(self.domain, text, planner or self.planner, timeout)
        made = partial(
            TierAttempt, tier=tier, objects=objects, facts=facts, result=result, problem=text, build_seconds=built
        )
        if not result.solved:
            reason = result.message or f"the planner returned {result.status.value}"
            return made(valid=None, reason=reason, validate_seconds=0.0), set()
        checked = time.perf_counter()
        try:
            outcome = self.evaluator.validate(result.plan, world, goal, watch=watch_until(deadline))
        except EvaluationDeadlinePassed as exc:  # a plan not known to reach the goal: none, as a timeout
            reason = f"{exc}, after the plan's last step; the plan was not used"
            return made(valid=None, reason=reason, validate_seconds=time.perf_counter() - checked), set()
        validated = time.perf_counter() - checked
        valid = outcome.executable and bool(outcome.goal_reached)
        reason = "" if valid else "the plan fails in the full state: " + "; ".join(outcome.reasons)
        failing = _failing_action_predicates(self.domain, result.plan, outcome.failed_at)
        return made(valid=valid, reason=reason, validate_seconds=validated), failing
