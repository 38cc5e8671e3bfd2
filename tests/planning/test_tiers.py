"""Tiered planning: a retrieved context first, validated against the full state, widened on failure."""

from __future__ import annotations

import time

import pytest

from kg_memory import Delta, DomainRegistry, Fact
from kg_memory.formula import Atom, Formula
from planning import PlanStatus, World, parse_goal, pruned_context
from planning import tiers as tiers_module
from planning.deadline import BindingWatch, EvaluationDeadlinePassed
from planning.problem import Context, focused_context
from planning.tiers import TieredPlanner, formula_predicates
from sim import HomeSpec, generate_home

ROBOT = "robot_1"


@pytest.fixture(scope="module")
def base() -> World:
    home = generate_home(HomeSpec(seed=4, rooms=6, items=24, people=3))
    return World(DomainRegistry().get("household"), home.entities, home.facts)


def _cup(world: World) -> str:
    sinks = {f.args[1] for f in world.facts_of("faucet_at")}
    assert sinks, "the home needs a sink with a faucet"
    cups = [c for c in world.objects_of("cup") if not any(f.predicate == "filled" for f in world.facts_about(c))]
    assert cups
    return cups[0]


def _without(context: Context, *facts: Fact) -> Context:
    return Context(context.entities, context.facts - set(facts), context.tier)


def test_a_good_retrieved_context_is_enough(base: World) -> None:
    world = base.copy()
    cup = _cup(world)
    goal: Formula = Atom("held", (cup, ROBOT))
    result = TieredPlanner(world.domain).plan(world, goal, pruned_context(world, goal, [ROBOT]), anchors=[ROBOT])
    assert result.status is PlanStatus.SOLVED and result.tier == "retrieved"
    assert [a.tier for a in result.attempts] == ["retrieved"] and result.attempts[0].valid
    assert result.plan[-1].name in ("pick", "take_out")


def test_an_unsolvable_retrieved_context_is_widened(base: World) -> None:
    world = base.copy()
    cup = _cup(world)
    goal = Atom("held", (cup, ROBOT))
    bare = Context(tuple(e for e in (world.entity(cup),) if e), frozenset(), "retrieved")  # no map, no robot
    result = TieredPlanner(world.domain).plan(world, goal, bare, anchors=[ROBOT])
    assert result.status is PlanStatus.SOLVED and result.tier == "widened"
    first = result.attempts[0]
    assert first.result.status is PlanStatus.UNSOLVABLE and first.valid is None and first.reason


def test_a_plan_invalid_in_the_full_state_is_fixed_by_widening(base: World) -> None:
    world = base.copy()
    cup = _cup(world)
    dirty = Fact("dirty", (cup,))
    world.apply(Delta(add={dirty}))
    goal = Atom("filled", (cup, "water"))
    first = _without(pruned_context(world, goal, [ROBOT]), dirty)  # retrieval missed that the cup is dirty
    result = TieredPlanner(world.domain).plan(world, goal, first, anchors=[ROBOT])
    retrieved, widened = result.attempts
    assert retrieved.result.solved and retrieved.valid is False
    assert "dirty" in retrieved.reason and "fill" in retrieved.reason
    assert widened.tier == "widened" and widened.valid and result.tier == "widened"
    assert "wash" in [a.name for a in result.plan]
    assert world.domain.actions["fill"] and "dirty" in formula_predicates(world.domain.actions["fill"].precondition)


def test_an_impossible_goal_is_unsolvable_at_every_tier(base: World) -> None:
    world = base.copy()
    cup = _cup(world)
    goal = Atom("filled", (cup, "milk"))  # only water comes out of a faucet
    result = TieredPlanner(world.domain).plan(world, goal, pruned_context(world, goal, [ROBOT]), anchors=[ROBOT])
    assert result.status is PlanStatus.UNSOLVABLE and result.tier is None and not result.plan
    assert [a.tier for a in result.attempts][-1] == "full"
    assert all(a.result.status is PlanStatus.UNSOLVABLE for a in result.attempts)


def test_without_the_full_state_the_last_tier_is_the_widened_one(base: World) -> None:
    world = base.copy()
    cup = _cup(world)
    goal = Atom("filled", (cup, "milk"))
    planner = TieredPlanner(world.domain)
    result = planner.plan(world, goal, pruned_context(world, goal, [ROBOT]), anchors=[ROBOT], full_state=False)
    assert result.status is PlanStatus.UNSOLVABLE and "full" not in [a.tier for a in result.attempts]


def test_the_full_state_is_the_last_resort(base: World, monkeypatch: pytest.MonkeyPatch) -> None:
    world = base.copy()
    cup = _cup(world)
    goal = Atom("held", (cup, ROBOT))
    bare = Context(tuple(e for e in (world.entity(cup),) if e), frozenset(), "retrieved")

    def too_narrow(world: World, context: Context, *args: object) -> Context:
        return Context(context.entities, context.facts, "widened")  # a widening that adds nothing useful

    monkeypatch.setattr("planning.tiers.widen", too_narrow)
    result = TieredPlanner(world.domain).plan(world, goal, bare, anchors=[ROBOT])
    assert result.status is PlanStatus.SOLVED and result.tier == "full"
    assert [a.tier for a in result.attempts] == ["retrieved", "full"]  # the same problem is not planned twice
    assert result.attempts[0].result.status is PlanStatus.UNSOLVABLE


@pytest.mark.parametrize("optimal", [False, True], ids=["satisficing", "optimal"])
def test_a_goal_that_already_holds_is_the_empty_plan_of_cost_zero_proven_cheapest(base: World, optimal: bool) -> None:
    world = base.copy()
    place = next(f.args[1] for f in world.facts_of("robot_at") if f.args[0] == ROBOT)
    goal = Atom("robot_at", (ROBOT, place))
    planner = TieredPlanner(world.domain, optimal=optimal)
    result = planner.plan(world, goal, pruned_context(world, goal, [ROBOT]), anchors=[ROBOT])
    assert result.status is PlanStatus.SOLVED and result.tier == "holds" and result.plan == ()
    assert result.cost == 0 and result.optimal and result.note == "" and not result.attempts


@pytest.mark.parametrize("optimal", [False, True], ids=["satisficing", "optimal"])
def test_a_deadline_that_passes_while_checking_whether_the_goal_holds_ends_in_timeout(
    base: World, optimal: bool
) -> None:
    world = base.copy()
    goal = parse_goal(f"(exists (?r - room) (robot_at {ROBOT} ?r))")  # the robot is in some room
    planner = TieredPlanner(world.domain, optimal=optimal)
    first = pruned_context(world, goal, [ROBOT])
    in_time = planner.plan(world, goal, first, anchors=[ROBOT], deadline=time.monotonic() + 3600)
    assert in_time.status is PlanStatus.SOLVED and in_time.tier == "holds"
    late = planner.plan(world, goal, first, anchors=[ROBOT], deadline=time.monotonic() - 1)
    assert late.status is PlanStatus.TIMEOUT and late.tier is None and late.plan == () and late.attempts == ()


def test_finding_what_breaks_a_forall_goal_stops_at_a_passed_deadline(base: World) -> None:
    world = base.copy()
    goal = parse_goal("(forall (?l - light) (not (switched_on ?l)))")
    on = {f.args[0] for f in world.facts_of("switched_on")} & set(world.objects_of("light"))
    in_time = focused_context(world, goal, [ROBOT], deadline=time.monotonic() + 3600)
    assert on and on <= {e.name for e in in_time.entities}  # the lights still on are in the context
    with pytest.raises(EvaluationDeadlinePassed):
        focused_context(world, goal, [ROBOT], deadline=time.monotonic() - 1)


@pytest.mark.parametrize("optimal", [False, True], ids=["satisficing", "optimal"])
def test_a_deadline_that_passes_while_a_found_plan_is_checked_ends_in_timeout(
    base: World, optimal: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The goal is tested again after the plan's last step, against the whole state: that test keeps
    the request's deadline too. Here the clock runs out as soon as a planner has answered."""
    world = base.copy()
    cup = _cup(world)
    # false before any plan, so the first check never reaches the quantifier; true after one
    goal = parse_goal(f"(and (held {cup} {ROBOT}) (exists (?r - room) (robot_at {ROBOT} ?r)))")
    first = pruned_context(world, goal, [ROBOT])
    planner = TieredPlanner(world.domain, optimal=optimal)
    assert planner.plan(world, goal, first, anchors=[ROBOT], deadline=time.monotonic() + 3600).solved
    answered = []
    real_solve, real_watch = tiers_module.solve, tiers_module.watch_until

    def solve(*args: object, **kwargs: object) -> object:
        answered.append(True)
        return real_solve(*args, **kwargs)  # type: ignore[arg-type]

    def watch_until(deadline: float | None) -> BindingWatch | None:
        if not answered or deadline is None:
            return real_watch(deadline)
        return BindingWatch(deadline, clock=lambda: deadline + 1)  # past it from now on

    monkeypatch.setattr(tiers_module, "solve", solve)
    monkeypatch.setattr(tiers_module, "watch_until", watch_until)
    late = planner.plan(world, goal, first, anchors=[ROBOT], deadline=time.monotonic() + 3600)
    assert answered and late.status is PlanStatus.TIMEOUT and late.plan == ()
    assert late.attempts and all(a.valid is None for a in late.attempts)
    assert "the deadline passed while checking the goal" in late.attempts[0].reason
    # without a deadline the same plan is checked to the end
    assert planner.plan(world, goal, first, anchors=[ROBOT]).solved
