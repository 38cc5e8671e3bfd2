"""Real IPC problems read into facts, planned back from text and judged by unified-planning's
validator against the original files; features we do not handle are named."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

from kg_memory import DomainError, Entity, Fact
from planning import GroundAction, problem_pddl, solve
from planning.goal_reader import MAX_GOAL_DEPTH
from planning.pddl_io import (
    PddlError,
    PddlProblem,
    UnsupportedFeature,
    goal_of,
    load_domain_file,
    read_problem,
    read_sexpr,
    read_text,
)
from planning.validate import validate_plan

IPC = FIXTURES / "ipc"
CASES = sorted(d for d in IPC.iterdir() if (d / "p01.pddl").is_file())
UNSUPPORTED = IPC / "unsupported"


def _read(case: Path) -> tuple[str, PddlProblem]:
    domain = load_domain_file(case / "domain.pddl")
    text = read_text(case / "p01.pddl")
    return text, read_problem(domain, text, case / "p01.pddl")


def _section(text: str, keyword: str) -> list[object]:
    return next(s[1:] for s in read_sexpr(text)[1:] if isinstance(s, list) and s[:1] == [keyword])


def _object_names(text: str) -> set[str]:
    """Names in ``(:objects a b - t c)``: every token but ``-`` and the type after it."""
    tokens = [t for t in _section(text, ":objects") if isinstance(t, str)]
    types = {tokens[i + 1] for i, t in enumerate(tokens) if t == "-"}
    return {t for t in tokens if t != "-"} - types if "-" in tokens else set(tokens)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_problem_reads_as_the_file_says_and_plans_to_a_valid_plan(case: Path) -> None:
    domain = load_domain_file(case / "domain.pddl")
    text, problem = _read(case)
    # counted from the file itself, independently of unified-planning's reading
    assert {e.name for e in problem.entities} == _object_names(text) - set(domain.constants)
    assert all(e.label == e.name and e.type in domain.types for e in problem.entities)
    init = _section(text, ":init")
    assert problem.facts == {Fact(str(a[0]), tuple(map(str, a[1:]))) for a in init if isinstance(a, list)}
    assert problem.domain == domain.name and goal_of(text) == problem.goal
    assert problem.name == str(read_sexpr(text)[1][1])  # (define (problem NAME) ...)

    # the round trip through text: our problem from the facts, judged against the original file
    result = solve(domain, problem_pddl(domain, problem.entities, problem.facts, problem.goal))
    assert result.solved, result.message
    assert validate_plan(domain.pddl, text, result.plan).valid


def test_untyped_objects_are_objects() -> None:
    _, problem = _read(IPC / "gripper-untyped")
    assert Entity("rooma", "object", "rooma") in problem.entities
    assert Fact.parse("(room rooma)") in problem.facts


def test_constants_stay_with_the_domain() -> None:
    _, problem = _read(IPC / "gripper")  # left and right are the domain's constants
    assert not {"left", "right"} & {e.name for e in problem.entities}
    assert Fact.parse("(free left)") in problem.facts


def test_goal_text_reads_back_to_the_goal() -> None:
    text = read_text(IPC / "depots" / "p01.pddl")
    assert str(goal_of(text)) == "(and (on crate0 pallet2) (on crate1 pallet1))"
    _, problem = _read(IPC / "depots")
    assert problem.goal_text == str(problem.goal)


@pytest.mark.parametrize("depth", [MAX_GOAL_DEPTH + 1, 600, 5_000])
def test_a_problem_whose_goal_nests_too_deeply_is_a_pddl_error(depth: int) -> None:
    goal = "(not " * (depth - 1) + "(on crate0 pallet2)" + ")" * (depth - 1)
    text = read_text(IPC / "depots" / "p01.pddl")
    start = text.index("(:goal")
    deep = text[:start] + f"(:goal {goal})\n)\n"
    with pytest.raises(PddlError, match="nest"):
        goal_of(deep)
    at_the_limit = "(not " * (MAX_GOAL_DEPTH - 1) + "(on crate0 pallet2)" + ")" * (MAX_GOAL_DEPTH - 1)
    assert str(goal_of(text[:start] + f"(:goal {at_the_limit})\n)\n")).count("(not") == MAX_GOAL_DEPTH - 1


@pytest.mark.parametrize(
    ("file", "feature", "shown"),
    [
        ("storage/domain.pddl", "either types", "(either storearea crate)"),
        ("blocksworld-fond/domain.pddl", "non-deterministic effects", "(oneof"),
        ("depots-numeric/domain.pddl", "numeric fluents", "(:functions"),
        ("depots-numeric/p01.pddl", "numeric fluents", "(= (current_load truck0) 0)"),
    ],
)
def test_real_files_with_unsupported_features_are_named(file: str, feature: str, shown: str) -> None:
    path = UNSUPPORTED / file
    loader = load_domain_file if path.name == "domain.pddl" else _read_with_depots
    with pytest.raises(UnsupportedFeature) as caught:
        loader(path)
    assert caught.value.feature == feature and shown in caught.value.where
    assert str(path) in str(caught.value) and feature in str(caught.value)


def _read_with_depots(path: Path) -> PddlProblem:
    return read_problem(load_domain_file(IPC / "depots" / "domain.pddl"), read_text(path), path)


NUMERIC_DOMAIN = """(define (domain tanks) (:requirements :typing :numeric-fluents)
  (:types tank) (:predicates (full ?t - tank)) (:functions (level ?t - tank))
  (:action fill :parameters (?t - tank) :precondition (< (level ?t) 10)
   :effect (and (full ?t) (increase (level ?t) 1))))"""
TIMED = """(define (problem p) (:domain blocks) (:objects a - block)
  (:init (clear a) (at 10 (handempty))) (:goal (clear a)))"""


def test_tiny_numeric_domain_and_timed_literals_are_named(tmp_path: Path) -> None:
    (tmp_path / "domain.pddl").write_text(NUMERIC_DOMAIN)
    with pytest.raises(UnsupportedFeature, match=r"numeric fluents.*:functions"):
        load_domain_file(tmp_path / "domain.pddl")
    blocks = load_domain_file(IPC / "blocksworld" / "domain.pddl")
    with pytest.raises(UnsupportedFeature, match=r"timed initial literals.*\(at 10 \(handempty\)\)"):
        read_problem(blocks, TIMED, "timed.pddl")


def test_a_predicate_named_like_an_operator_is_not_a_feature(tmp_path: Path) -> None:
    (tmp_path / "domain.pddl").write_text(
        "(define (domain counter) (:predicates (increase ?x) (done ?x))"
        " (:action go :parameters (?x) :precondition (increase ?x) :effect (done ?x)))"
    )
    assert "increase" in load_domain_file(tmp_path / "domain.pddl").predicates


def test_files_that_do_not_read(tmp_path: Path) -> None:
    blocks = load_domain_file(IPC / "blocksworld" / "domain.pddl")
    with pytest.raises(PddlError, match=r"nowhere\.pddl: no such domain file"):
        load_domain_file(tmp_path / "nowhere.pddl")
    logistics = read_text(IPC / "logistics" / "p01.pddl")
    with pytest.raises(PddlError, match="problem of domain 'logistics', not of 'blocks'"):
        read_problem(blocks, logistics, "logistics.pddl")
    with pytest.raises(PddlError, match=r"x\.pddl: unbalanced parentheses"):
        read_problem(blocks, TIMED[:-1], "x.pddl")
    with pytest.raises(PddlError, match="unified-planning cannot read it"):
        read_problem(blocks, TIMED.replace("(at 10 (handempty))", "(on a zz)"), "p.pddl")  # zz is no object
    (tmp_path / "domain.pddl").write_text("(define (domain d) (:predicates (p ?x - nosuchtype)))")
    with pytest.raises(DomainError):
        load_domain_file(tmp_path / "domain.pddl")


def test_validator_says_why_a_plan_is_invalid() -> None:
    domain = load_domain_file(IPC / "blocksworld" / "domain.pddl")
    text, problem = _read(IPC / "blocksworld")
    plan = solve(domain, problem_pddl(domain, problem.entities, problem.facts, problem.goal)).plan
    assert validate_plan(domain.pddl, text, plan).valid
    wrong = validate_plan(domain.pddl, text, (GroundAction("stack", ("a", "b")), *plan[1:]))
    assert not wrong.valid and "1-th action instance stack(a, b)" in wrong.reason and "not satisfied" in wrong.reason
    short = validate_plan(domain.pddl, text, plan[:-1])
    assert not short.valid and "Goals" in short.reason
    assert validate_plan(domain.pddl, text, (GroundAction("fly", ("a",)),)).reason == (
        "step 1 (fly a): the domain has no action 'fly'"
    )
    assert "no object zz" in validate_plan(domain.pddl, text, (GroundAction("pick-up", ("zz",)),)).reason
    two = (GroundAction("pick-up", ("a", "b")),)
    assert "takes 1 argument(s), not 2" in validate_plan(domain.pddl, text, two).reason
    assert validate_plan(domain.pddl, text, plan).to_json()["validator"] == "sequential_plan_validator"
