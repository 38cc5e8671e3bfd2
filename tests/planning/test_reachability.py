"""The relaxed reachability check behind ``impossible``: a gap only where no plan can exist.

Goals over collections (some receptacle in a room, every light off) are matched against the facts by
the types of their variables; a disjunction is blocked only when every branch is, in a goal and in an
action's precondition; a goal that holds is never impossible.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kg_memory import Domain, DomainRegistry, Entity, Fact
from kg_memory.domain import domain_from_pddl
from planning import World, parse_goal
from planning.deadline import EvaluationDeadlinePassed
from planning.reachability import analyse, goal_gaps, impossible_gaps


@pytest.fixture(scope="module")
def household() -> Domain:
    return DomainRegistry().get("household")


# a hall and a study; the atlas on the study's shelf, the robot in the hall with an empty hand
ENTITIES = (
    Entity("hall", "room"),
    Entity("study", "room"),
    Entity("shelf_1", "surface"),
    Entity("table_1", "surface"),
    Entity("atlas_1", "book"),
    Entity("light_1", "light"),
    Entity("light_2", "light"),
    Entity("rosa", "person"),
)
FACTS = tuple(
    Fact.parse(t)
    for t in (
        "(connected hall study)",
        "(connected study hall)",
        "(in_room shelf_1 study)",
        "(in_room table_1 hall)",
        "(on atlas_1 shelf_1)",
        "(appliance_in light_1 study)",
        "(appliance_in light_2 study)",
        "(switched_on light_1)",
        "(person_in rosa hall)",
        "(robot_at robot_1 hall)",
        "(hand_empty robot_1)",
    )
)


def world(domain: Domain, drop: tuple[str, ...] = (), add: tuple[str, ...] = ()) -> World:
    facts = [f for f in FACTS if str(f) not in drop] + [Fact.parse(t) for t in add]
    return World(domain, ENTITIES, facts)


def relaxed(world: World, goal: str) -> tuple[str, ...]:
    """The relaxation's own answer, without ``impossible_gaps``'s "already holds" shortcut."""
    facts = world.facts
    reach = analyse(world.domain, {n: e.type for n, e in world.entities.items()}, {f.predicate for f in facts})
    return goal_gaps(reach, parse_goal(goal), [(f.predicate, f.args) for f in facts])


SHELF_IN = "(exists (?t - receptacle) (and (in_room ?t {room}) (on atlas_1 ?t)))"


def test_an_existential_over_a_static_predicate_that_holds_has_no_gap(household: Domain) -> None:
    home = world(household)
    assert relaxed(home, SHELF_IN.format(room="study")) == ()
    assert impossible_gaps(home, parse_goal(SHELF_IN.format(room="study"))) == ()


def test_an_existential_another_room_can_satisfy_has_no_gap(household: Domain) -> None:
    goal = SHELF_IN.format(room="hall")  # pick in the study, place on the hall's table
    assert impossible_gaps(world(household), parse_goal(goal)) == ()
    assert impossible_gaps(world(household), parse_goal(f"(and {goal} (switched_on light_2))")) == ()


def test_an_existential_no_fact_and_no_action_can_satisfy_is_named(household: Domain) -> None:
    home = world(household, drop=("(in_room table_1 hall)",))  # the hall has no receptacle at all
    assert impossible_gaps(home, parse_goal(SHELF_IN.format(room="hall"))) == (
        "no action can make 'any receptacle is in hall' true",
    )
    assert impossible_gaps(home, parse_goal("(exists (?p - person) (person_in ?p study))")) == (
        "no action can make 'any person is in study' true",
    )


def test_variables_match_facts_only_through_their_types(household: Domain) -> None:
    home = world(household)
    # the study has a light in it, not a tv; and a repeated variable names one object twice
    assert impossible_gaps(home, parse_goal("(exists (?x - tv) (appliance_in ?x study))")) == ("the home has no tv",)
    assert impossible_gaps(home, parse_goal("(exists (?r - room) (connected ?r ?r))")) == (
        "no action can make 'any room connects to any room' true",
    )
    assert impossible_gaps(home, parse_goal("(exists (?r - room) (connected ?r study))")) == ()


def test_a_negated_atom_with_a_variable_needs_one_grounding_false(household: Domain) -> None:
    home = world(household)
    # not every surface is in the study, so "some surface is not in the study" holds
    assert relaxed(home, "(exists (?s - surface) (not (in_room ?s study)))") == ()
    all_there = world(household, drop=("(in_room table_1 hall)",), add=("(in_room table_1 study)",))
    assert impossible_gaps(all_there, parse_goal("(exists (?s - surface) (not (in_room ?s study)))")) == (
        "no action can make 'any surface is in study' false",
    )


def test_forall_holds_vacuously_and_asks_at_least_what_exists_does(household: Domain) -> None:
    home = world(household)
    assert relaxed(home, "(forall (?c - container) (open ?c))") == ()  # the home has no container
    every_light_off = "(forall (?l - light) (or (not (appliance_in ?l study)) (not (switched_on ?l))))"
    assert impossible_gaps(home, parse_goal(every_light_off)) == ()
    assert impossible_gaps(home, parse_goal("(forall (?p - person) (person_in ?p study))")) == (
        "no action can make 'any person is in study' true",
    )


def test_a_disjunction_is_blocked_only_when_every_branch_is(household: Domain) -> None:
    home = world(household)
    assert impossible_gaps(home, parse_goal("(or (person_in rosa study) (held atlas_1 robot_1))")) == ()
    assert impossible_gaps(home, parse_goal("(or (person_in rosa study) (in_room shelf_1 hall))")) == (
        "no action can make 'rosa is in study' true",
        "no action can make 'shelf_1 is in hall' true",
    )


def test_a_goal_that_holds_is_never_impossible(household: Domain) -> None:
    home = world(household)
    holds = "(and (person_in rosa hall) (not (forall (?l - light) (switched_on ?l))) (= rosa rosa))"
    assert impossible_gaps(home, parse_goal(holds)) == ()


def test_checking_whether_a_goal_holds_stops_at_a_passed_deadline(household: Domain) -> None:
    home = world(household)
    holds = parse_goal("(exists (?l - light) (switched_on ?l))")
    assert impossible_gaps(home, holds, deadline=time.monotonic() + 3600) == ()
    with pytest.raises(EvaluationDeadlinePassed) as raised:
        impossible_gaps(home, holds, deadline=time.monotonic() - 1)
    assert raised.value.tried == 0  # the clock is read before the first binding is tried


def test_moving_a_person_stays_impossible_with_its_reason(household: Domain) -> None:
    assert impossible_gaps(world(household), parse_goal("(and (person_in rosa study) (held atlas_1 robot_1))")) == (
        "no action can make 'rosa is in study' true",
    )


def test_blocked_actions_are_named_with_what_they_need(household: Domain) -> None:
    # neither holding nor free: nothing to pick with (and no container to take out of)
    stuck = world(household, drop=("(hand_empty robot_1)",))
    assert impossible_gaps(stuck, parse_goal("(exists (?b - book) (held ?b robot_1))")) == (
        "no action the robot can take makes 'any book is held by robot_1' true: "
        "pick or take_out needs hand_empty, inside, open, which nothing can make true",
    )


# A precondition's disjunction: `ring` needs (or (charged ?p) (and (plugged ?p) (powered ?p))). The
# short branch cannot be met; the long one holds, so `ring` can fire.
DISJUNCTIVE = """(define (domain disjunctive)
  (:requirements :strips :typing :disjunctive-preconditions)
  (:types phone)
  (:predicates (charged ?p - phone) (plugged ?p - phone) (powered ?p - phone) (ringing ?p - phone))
  (:action ring
    :parameters (?p - phone)
    :precondition (or (charged ?p) (and (plugged ?p) (powered ?p)))
    :effect (ringing ?p)))
"""


def test_an_action_is_enabled_by_any_branch_of_its_disjunctive_precondition(tmp_path: Path) -> None:
    domain = domain_from_pddl(tmp_path / "domain.pddl", DISJUNCTIVE)
    phone = [Entity("phone_1", "phone")]
    plugged = World(domain, phone, [Fact("plugged", ("phone_1",)), Fact("powered", ("phone_1",))])
    assert impossible_gaps(plugged, parse_goal("(ringing phone_1)")) == ()
    unplugged = World(domain, phone, [Fact("plugged", ("phone_1",))])
    (gap,) = impossible_gaps(unplugged, parse_goal("(ringing phone_1)"))
    assert gap.endswith("ring needs charged, powered, which nothing can make true")
