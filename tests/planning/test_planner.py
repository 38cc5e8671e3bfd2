"""Planners by name: each outcome (solved, unsolvable, timeout, error) as a value with its
timings and cost, plans our evaluator accepts, LAPKT's SIW+BFS(f) next to Fast Downward, and
misuse (an unknown planner, one missing here, a problem that does not parse) as PlanningError."""

from __future__ import annotations

import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

import planning._lapkt
from kg_memory import Domain, DomainRegistry, Entity, Fact, load_domain
from kg_memory.formula import And, Atom, Formula, Not, Parameter, Quantified
from planning import (
    DEFAULT_PLANNER,
    ActionEvaluator,
    PlanningError,
    PlanResult,
    PlanStatus,
    World,
    available_planners,
    problem_pddl,
    solve,
)

SATISFICING = ("fast-downward", "fast-downward@up", "lapkt")  # @up: through unified-planning's parser


def run(domain: Domain, text: str, planner: str, timeout: float = 60.0) -> PlanResult:
    """``solve`` with ``name@route``: Fast Downward is tested on both routes."""
    name, _, via = planner.partition("@")
    return solve(domain, text, name, timeout, via=via or "text")


@pytest.fixture(scope="module")
def household() -> Domain:
    return DomainRegistry().get("household")


def facts(*texts: str) -> set[Fact]:
    return {Fact.parse(t) for t in texts}


# a hall and a kitchen with a sink and its faucet; an attic no door leads to
HOME = (
    *(Entity(n, "room") for n in ("hall", "kitchen", "attic")),
    Entity("table_1", "surface"),
    Entity("shelf_1", "surface"),
    Entity("sink_1", "sink"),
    Entity("faucet_1", "faucet"),
    Entity("cup_1", "cup"),
    Entity("cup_2", "cup"),
    Entity("book_1", "book"),
)
HOME_FACTS = facts(
    "(connected hall kitchen)",
    "(connected kitchen hall)",
    "(in_room table_1 hall)",
    "(in_room shelf_1 attic)",
    "(in_room sink_1 kitchen)",
    "(faucet_at faucet_1 sink_1)",
    "(appliance_in faucet_1 kitchen)",
    "(robot_at robot_1 hall)",
    "(hand_empty robot_1)",
    "(on cup_1 table_1)",
    "(on cup_2 table_1)",
    "(dirty cup_1)",
    "(on book_1 shelf_1)",
)
WATER_ON_TABLE = And((Atom("filled", ("cup_1", "water")), Atom("on", ("cup_1", "table_1"))))
# "cup_1 is empty" is a negated existential: LAPKT crashed on it before goals were put in NNF
EMPTY = Not(Quantified(False, (Parameter("l", "liquid"),), Atom("filled", ("cup_1", "?l"))))
CLEAN_EMPTY_ON_TABLE = And((Not(Atom("dirty", ("cup_1",))), EMPTY, Atom("on", ("cup_1", "table_1"))))


def plan_for(domain: Domain, goal: Formula, planner: str, timeout: float = 30.0) -> PlanResult:
    return run(domain, problem_pddl(domain, HOME, HOME_FACTS, goal, name="home"), planner, timeout)


def assert_valid(domain: Domain, result: PlanResult, goal: Formula) -> None:
    assert result.status is PlanStatus.SOLVED and result.solved, result.message
    outcome = ActionEvaluator(domain).validate(result.plan, World(domain, HOME, HOME_FACTS), goal)
    assert outcome.executable and outcome.goal_reached, outcome.reasons
    assert result.cost == len(result.plan) and result.message == ""
    assert result.plan_seconds > 0


def test_planners_are_listed_by_name_default_first() -> None:
    names = available_planners()
    assert names[:4] == (DEFAULT_PLANNER, "fast-downward-opt", "fast-downward-anytime", "lapkt")
    assert not any(n.startswith("l3mp-") or "[" in n for n in names)  # our engines' internal names, meta-engines


@pytest.mark.parametrize("planner", SATISFICING)
@pytest.mark.parametrize("goal", [WATER_ON_TABLE, CLEAN_EMPTY_ON_TABLE], ids=["fill", "wash"])
def test_a_solved_plan_validates_and_costs_its_length(household: Domain, planner: str, goal: Formula) -> None:
    result = plan_for(household, goal, planner)
    assert_valid(household, result, goal)
    assert result.planner == planner.partition("@")[0] and len(result.plan) >= 1
    # only the unified-planning route parses the problem in Python; the text route hands it over
    assert (result.parse_seconds > 0) == (planner != "fast-downward")


@pytest.mark.parametrize("planner", SATISFICING)
def test_a_goal_that_already_holds_is_the_empty_plan(household: Domain, planner: str) -> None:
    result = plan_for(household, Atom("on", ("cup_1", "table_1")), planner)
    assert result.solved and result.plan == () and result.cost == 0


@pytest.mark.parametrize("planner", SATISFICING)
@pytest.mark.parametrize(
    "goal",
    [
        Atom("on", ("book_1", "table_1")),  # the book is in the attic, which no door leads to
        And((Atom("held", ("cup_1", "robot_1")), Atom("held", ("cup_2", "robot_1")))),  # one hand
    ],
    ids=["unreachable-room", "one-hand"],
)
def test_an_unreachable_goal_is_unsolvable(household: Domain, planner: str, goal: Formula) -> None:
    result = plan_for(household, goal, planner)
    assert result.status is PlanStatus.UNSOLVABLE and result.plan == () and result.cost is None
    assert planner.partition("@")[0] in result.message and "home" in result.message


def corridor_home(domain: Domain, books: int) -> str:
    """A corridor of rooms with a table and a book per table, and a goal that moves every 24th book."""
    rooms = [f"room_{i}" for i in range(books // 10)]
    entities = [Entity(r, "room") for r in rooms]
    world = facts(f"(robot_at robot_1 {rooms[0]})", "(hand_empty robot_1)")
    for a, b in pairwise(rooms):
        world |= {Fact("connected", (a, b)), Fact("connected", (b, a))}
    for i in range(books):
        entities += [Entity(f"table_{i}", "surface"), Entity(f"book_{i}", "book")]
        world |= {Fact("in_room", (f"table_{i}", rooms[i % len(rooms)])), Fact("on", (f"book_{i}", f"table_{i}"))}
    goal = And(tuple(Atom("on", (f"book_{i}", f"table_{(i * 7 + 3) % books}")) for i in range(0, books, 24)))
    return problem_pddl(domain, entities, world, goal, name="big")


@pytest.mark.parametrize("planner", SATISFICING)
def test_a_time_limit_kills_the_planner_and_reports_timeout(
    household: Domain, planner: str, stalling_planner: Any
) -> None:
    stalls = stalling_planner(min_bytes=0)  # a search that would never end on its own
    # the limit also covers what comes before the search (LAPKT grounds in this process): a small
    # problem and a limit far above its grounding leave the search stalled when the limit ends it
    result = run(household, corridor_home(household, 10), planner, timeout=8.0)
    assert result.status is PlanStatus.TIMEOUT and result.plan == () and result.cost is None, result.message
    # the limit (wall clock, so load does not matter) really stopped it, and nothing was left running
    assert len(stalls.stalled()) == 1 and stalls.running() == []


def test_a_feature_lm_cut_refuses_is_searched_by_one_that_reads_it(household: Domain) -> None:
    # A* with LM-cut takes no axioms, which the translator makes of the household's quantified
    # preconditions: the same translated task is searched again blind (admissible with axioms)
    result = plan_for(household, WATER_ON_TABLE, "fast-downward-opt")
    assert result.status is PlanStatus.SOLVED and result.optimal, result.message
    first = plan_for(household, WATER_ON_TABLE, "fast-downward")
    assert first.solved and result.cost is not None and first.cost is not None and result.cost <= first.cost


def test_a_planner_crash_is_an_error_with_its_words(household: Domain, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(planning._lapkt, "SEARCH", "No_Such_Planner")  # lapkt_cmd.py's argparse exits 2
    result = plan_for(household, WATER_ON_TABLE, "lapkt")
    assert result.status is PlanStatus.ERROR and "lapkt_cmd.py: error: argument" in result.message, result.message


@pytest.fixture(scope="module")
def gripper(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    folder = tmp_path_factory.mktemp("gripper")
    shutil.copy(FIXTURES / "ipc" / "gripper_typed.pddl", folder / "domain.pddl")
    (folder / "language.toml").write_text(
        '[predicates]\n"at-robby" = "the robot is in {0}"\nat = "{0} is in {1}"\nfree = "{0} is free"\n'
        'carry = "{1} carries {0}"\n[actions]\nmove = "move from {0} to {1}"\npick = "pick {0} in {1} with {2}"\n'
        'drop = "drop {0} in {1} from {2}"\n'
    )
    return load_domain(Path(folder))


def test_the_optimal_planner_is_never_longer(gripper: Domain) -> None:
    balls = [Entity(f"ball_{i}", "ball") for i in range(4)]
    entities = [Entity("rooma", "room"), Entity("roomb", "room"), *balls]
    world = facts("(at-robby rooma)", "(free left)", "(free right)") | {Fact("at", (b.name, "rooma")) for b in balls}
    goal = And(tuple(Atom("at", (b.name, "roomb")) for b in balls))
    text = problem_pddl(gripper, entities, world, goal, name="four-balls")
    results = {p: run(gripper, text, p) for p in ("fast-downward-opt", *SATISFICING)}
    for result in results.values():
        outcome = ActionEvaluator(gripper).validate(result.plan, World(gripper, entities, world), goal)
        assert result.solved and outcome.executable and outcome.goal_reached, (result.planner, result.message)
    optimal = results["fast-downward-opt"]
    assert optimal.cost == len(optimal.plan) == 11  # two trips carrying two, one trip back
    assert all(optimal.cost <= r.cost for r in results.values() if r.cost is not None)


def test_an_unknown_planner_is_misuse_listing_the_names(household: Domain) -> None:
    with pytest.raises(PlanningError, match=r"unknown planner 'fast-upward'.*fast-downward, fast-downward-opt"):
        plan_for(household, WATER_ON_TABLE, "fast-upward")


def test_lapkt_missing_here_is_misuse_saying_what_is_missing(
    household: Domain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(planning._lapkt, "missing", lambda: "the lapkt package is not installed (pip install lapkt)")
    assert "lapkt" not in available_planners()
    with pytest.raises(PlanningError, match=r"'lapkt' cannot run here: the lapkt package is not installed"):
        plan_for(household, WATER_ON_TABLE, "lapkt")


def test_a_problem_that_does_not_parse_is_misuse(household: Domain) -> None:
    text = "(define (problem bad) (:domain household) (:objects x - spaceship) (:init) (:goal (on x x)))"
    with pytest.raises(PlanningError, match="does not parse"):
        solve(household, text)
