"""Domains in spellings Fast Downward's parser refuses still plan, and its failures come back in
its own words."""

from __future__ import annotations

from pathlib import Path

from kg_memory import Fact
from kg_memory.domain import domain_from_pddl
from planning import ActionEvaluator, World, problem_pddl, solve
from planning.goal_reader import parse_goal
from planning.pddl_io import read_problem

# "?c -compressor": unified-planning reads it; Fast Downward's parser wants "- compressor"
DASHED = """(define (domain plant) (:requirements :typing :action-costs)
  (:types compressor room)
  (:predicates (on ?c -compressor) (in ?c -compressor ?r -room) (door ?a ?b -room) (at ?r -room))
  (:functions (distance ?a ?b -room) - number (total-cost) - number)
  (:action walk :parameters (?a ?b -room)
    :precondition (and (at ?a) (door ?a ?b))
    :effect (and (not (at ?a)) (at ?b) (increase (total-cost) (distance ?a ?b))))
  (:action start :parameters (?c -compressor ?r -room)
    :precondition (and (at ?r) (in ?c ?r) (not (on ?c)))
    :effect (and (on ?c) (increase (total-cost) 1))))
"""
PROBLEM = """(define (problem p1) (:domain plant)
  (:objects c1 - compressor hall shop yard - room)
  (:init (at hall) (in c1 shop) (door hall shop) (door hall yard) (door yard shop)
         (= (distance hall shop) 9.5) (= (distance hall yard) 2) (= (distance yard shop) 2.25)
         (= (total-cost) 0))
  (:goal (on c1)) (:metric minimize (total-cost)))
"""


def test_a_dash_typed_domain_imports_and_plans_the_cheapest_way(tmp_path: Path) -> None:
    domain = domain_from_pddl(tmp_path / "domain.pddl", DASHED)
    assert "-compressor" in domain.pddl and "- compressor" in domain.planner_pddl
    problem = read_problem(domain, PROBLEM)
    assert Fact("distance", ("hall", "shop"), 9.5) in problem.facts
    text = problem_pddl(domain, problem.entities, problem.facts, problem.goal)
    result = solve(domain, text, "fast-downward-opt", timeout=60)
    assert result.solved and result.optimal, result.message
    # the cheapest plan has more steps than the shortest: through the yard (2 + 2.25) not 9.5
    assert [str(a) for a in result.plan] == ["(walk hall yard)", "(walk yard shop)", "(start c1 shop)"]
    world = World(domain, problem.entities, problem.facts)
    outcome = ActionEvaluator(domain).validate(result.plan, world, problem.goal)
    assert outcome.goal_reached and outcome.cost == 5.25


def test_a_planner_failure_shows_the_translators_own_message(tmp_path: Path) -> None:
    domain = domain_from_pddl(tmp_path / "domain.pddl", DASHED)
    # a problem naming an object it never declares: Fast Downward's translator refuses it
    text = PROBLEM.replace("(in c1 shop)", "(in c9 shop)")
    result = solve(domain, text, "fast-downward", timeout=60)
    assert not result.solved
    assert "c9" in result.message and "INFO" not in result.message, result.message


def test_planners_without_costs_say_so(tmp_path: Path) -> None:
    import pytest

    from planning.planner import PlanningError

    domain = domain_from_pddl(tmp_path / "domain.pddl", DASHED)
    goal = parse_goal("(on c1)")
    text = problem_pddl(domain, (), (), goal)
    with pytest.raises(PlanningError, match="cannot plan with action costs"):
        solve(domain, text, "lapkt")
