"""``l3mp pddl import``: IPC problems into memories on both stores, planned back from the
memory and validated against the original files; and the errors a user can make."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, neo4j_uri, require_neo4j, unique_name

from kg_memory import WorldMemory
from l3mp.cli import main
from l3mp.pipelines import DomainClash, install_domain
from l3mp.settings import Settings
from l3mp.wiring import open_store
from planning import ActionEvaluator, PlanningError, World, problem_pddl, solve
from planning.pddl_io import load_domain_file, read_problem, read_text
from planning.validate import validate_plan

IPC = FIXTURES / "ipc"
# the classical ones, then those with IPC action costs (tests/fixtures/ipc/costs)
CASES = sorted(d for d in IPC.iterdir() if (d / "p01.pddl").is_file()) + sorted(
    d for d in (IPC / "costs").iterdir() if (d / "p01.pddl").is_file()
)


@pytest.fixture
def domains_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Imported domains go under the test's folder, never the working directory."""
    path = tmp_path / "domains"
    monkeypatch.setenv("L3MP_DOMAINS_PATH", str(path))
    return path


@pytest.fixture(params=("sqlite", "neo4j"))
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, domains_path: Path) -> Iterator[str]:
    made: list[str] = []
    if request.param == "neo4j":
        require_neo4j()
        monkeypatch.setenv("L3MP_NEO4J_URI", neo4j_uri())
        if os.environ.get("L3MP_NEO4J_PASSWORD"):
            monkeypatch.setenv("L3MP_NEO4J_USER", os.environ.get("L3MP_NEO4J_USER", "neo4j"))
            monkeypatch.setenv("L3MP_NEO4J_PASSWORD", os.environ["L3MP_NEO4J_PASSWORD"])
    request.node.made = made
    yield request.param
    if request.param == "neo4j" and made:  # the Neo4j database is shared: remove what we made
        store = open_store(Settings(store="neo4j"))
        try:
            for name in made:
                store.delete_memory(name)
        finally:
            store.close()


def _import(db: Path, backend: str, case: Path, memory: str, *extra: str) -> int:
    store = ["--store", backend] if backend == "neo4j" else []
    files = [str(case / "domain.pddl"), str(case / "p01.pddl")]
    return main([*store, "--db", str(db), "pddl", "import", *files, "--memory", memory, *extra])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_import_holds_the_init_and_plans_back_to_a_valid_plan(
    case: Path, backend: str, tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    name = unique_name(case.name.replace("-", "_"))
    request.node.made.append(name)
    assert _import(tmp_path / "t.db", backend, case, name, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    domain = load_domain_file(case / "domain.pddl")
    text = read_text(case / "p01.pddl")
    problem = read_problem(domain, text)
    assert report["memory"] == name and report["store"] == backend and report["version"] == 1
    assert (report["entities"], report["facts"]) == (len(problem.entities), len(problem.facts))

    # a new store, opened as any later command would, finds the domain by name
    store = open_store(Settings(store=backend, sqlite_path=tmp_path / "t.db"))  # type: ignore[arg-type]
    try:
        memory = WorldMemory.open(store, name)
        assert memory.domain.name == domain.name and memory.domain.pddl == domain.pddl
        facts = memory.facts()
        entities = [e for n, e in memory.entities().items() if n not in domain.constants]
    finally:
        store.close()
    assert facts == problem.facts
    assert {(e.name, e.type) for e in entities} == {(e.name, e.type) for e in problem.entities}

    # plan from the memory's state with the problem's goal; the original files judge the plan
    result = solve(domain, problem_pddl(domain, entities, facts, problem.goal))
    assert result.solved, result.message
    validation = validate_plan(domain.pddl, text, result.plan, case / "p01.pddl")
    assert validation.valid
    if domain.costs:  # our evaluator's cost from the memory's state equals unified-planning's
        world = World(domain, entities, facts)
        outcome = ActionEvaluator(domain).validate(result.plan, world, problem.goal)
        assert outcome.executable and outcome.goal_reached
        assert validation.cost is not None and outcome.cost == pytest.approx(validation.cost)
        assert any(f.value is not None for f in facts) == bool(domain.functions)


def test_a_second_problem_reuses_the_installed_domain(
    domains_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    assert _import(db, "sqlite", IPC / "logistics", "first") == 0
    assert "created memory 'first'" in capsys.readouterr().out
    # the same domain with other comments and spacing is the same domain
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "domain.pddl").write_text(";; a copy\n" + (IPC / "logistics_typed.pddl").read_text().replace(" ", "  "))
    (copy / "p01.pddl").write_text((IPC / "logistics" / "p01.pddl").read_text())
    assert _import(db, "sqlite", copy, "second") == 0
    assert sorted(p.name for p in domains_path.iterdir()) == ["logistics"]
    assert (domains_path / "logistics" / "domain.pddl").read_text() == (IPC / "logistics" / "domain.pddl").read_text()
    assert main(["--db", str(db), "memories"]) == 0
    out = capsys.readouterr().out
    assert "first" in out and "second" in out


def test_a_different_domain_under_a_taken_name_is_refused(
    domains_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    assert _import(db, "sqlite", IPC / "logistics", "first") == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "domain.pddl").write_text((IPC / "logistics" / "domain.pddl").read_text().replace("in-city", "within"))
    (other / "p01.pddl").write_text((IPC / "logistics" / "p01.pddl").read_text().replace("in-city", "within"))
    capsys.readouterr()
    assert _import(db, "sqlite", other, "second") == 1
    assert "a different domain named 'logistics' is already installed" in " ".join(capsys.readouterr().err.split())
    with pytest.raises(DomainClash) as caught:
        install_domain(load_domain_file(other / "domain.pddl"), other / "domain.pddl", domains_path)
    assert caught.value.given == other / "domain.pddl"
    assert caught.value.installed == (domains_path / "logistics" / "domain.pddl").resolve()
    store = open_store(Settings(sqlite_path=db))
    try:
        assert [m.name for m in store.list_memories()] == ["first"]
    finally:
        store.close()


def test_a_shipped_domain_name_cannot_be_taken(domains_path: Path, tmp_path: Path) -> None:
    (tmp_path / "domain.pddl").write_text("(define (domain example_home) (:predicates (p ?x)))")
    with pytest.raises(DomainClash, match="example_home"):
        install_domain(load_domain_file(tmp_path / "domain.pddl"), tmp_path / "domain.pddl", domains_path)
    assert not domains_path.exists()


@pytest.mark.parametrize(
    ("domain", "problem", "message"),
    [
        ("nowhere.pddl", "logistics/p01.pddl", "nowhere.pddl: no such domain file"),
        ("logistics/domain.pddl", "nowhere.pddl", "nowhere.pddl: no such problem file"),
        ("unsupported/storage/domain.pddl", "unsupported/storage/p01.pddl", "uses either types"),
        ("depots/domain.pddl", "unsupported/depots-numeric/p01.pddl", "uses numeric fluents"),
        ("blocksworld/domain.pddl", "logistics/p01.pddl", "problem of domain 'logistics', not of 'blocks'"),
    ],
)
def test_errors_are_clear_and_leave_nothing_behind(
    domain: str, problem: str, message: str, domains_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    argv = ["--db", str(db), "pddl", "import", str(IPC / domain), str(IPC / problem), "--memory", "m"]
    assert main(argv) == 1
    out = " ".join(capsys.readouterr().err.split())
    assert "error:" in out and message in out.replace(f"{IPC}/", "")
    assert not domains_path.exists() and not db.exists()


def test_an_existing_memory_is_not_overwritten(
    domains_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _import(tmp_path / "t.db", "sqlite", IPC / "gripper", "g") == 0
    assert _import(tmp_path / "t.db", "sqlite", IPC / "blocksworld", "g") == 1
    assert "memory 'g' already exists" in capsys.readouterr().err


def test_goal_prints_the_problem_goal_as_pddl(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pddl", "goal", str(IPC / "blocksworld" / "p01.pddl")]) == 0
    assert capsys.readouterr().out == "(and (on d c) (on c b) (on b a))\n"
    assert main(["pddl", "goal", "nowhere.pddl"]) == 1
    assert "nowhere.pddl: no such problem file" in capsys.readouterr().err


def test_a_shipped_domain_is_reused_and_its_rules_still_hold(
    domains_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shipped = Path(__file__).resolve().parents[2] / "kg_memory" / "domains" / "example_home" / "domain.pddl"
    problem = tmp_path / "home.pddl"
    problem.write_text(
        "(define (problem home) (:domain example_home) (:objects hall - room table_1 shelf_1 - furniture mug_1 - item)"
        " (:init (in_room table_1 hall) (in_room shelf_1 hall) (on mug_1 table_1) (on mug_1 shelf_1))"
        " (:goal (held mug_1 robot_1)))"
    )
    db = tmp_path / "t.db"
    argv = ["--db", str(db), "pddl", "import", str(shipped), str(problem), "--memory", "home"]
    assert main(argv) == 1
    assert "mug_1 can be in only one place" in " ".join(capsys.readouterr().err.split())
    assert not domains_path.exists()  # the shipped domain was used, not copied
    problem.write_text(problem.read_text().replace(" (on mug_1 shelf_1)", ""))
    assert main(argv) == 0  # the rejected memory was removed, so the name is free


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_l3mp_plan_plans_the_problems_goal_from_memory_and_validates_it(
    tmp_path: Path, backend: str, case: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    name = unique_name("plan")
    request.node.made.append(name)
    db = tmp_path / "plan.db"
    assert _import(db, backend, case, name) == 0
    capsys.readouterr()
    store = ["--store", backend] if backend == "neo4j" else []
    goal_file = str(case / "p01.pddl")
    code = main([*store, "--db", str(db), "plan", "--memory", name, "--goal-file", goal_file, "--json"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0 and record["status"] == "solved", record["issues"]
    assert record["validation"] == {"valid": True, "reason": ""} or record["validation"]["valid"] is True
    assert record["tier"] in ("retrieved", "widened", "full") and record["plan"]
    assert len(record["explanation"]) == len(record["plan"])


def test_l3mp_plan_exit_codes(tmp_path: Path, domains_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = IPC / "blocksworld"
    db = tmp_path / "codes.db"
    assert _import(db, "sqlite", case, "blocks") == 0
    capsys.readouterr()
    unknown = main(["--db", str(db), "plan", "--memory", "blocks", "--goal", "(on nothing_1 nothing_2)", "--json"])
    record = json.loads(capsys.readouterr().out)
    assert unknown == 2 and record["status"] == "invalid_goal" and "nothing_1" in " ".join(record["issues"])
    assert main(["--db", str(db), "plan", "--memory", "no_such_memory", "--goal", "(clear a)"]) == 1


# unified-planning reads a type named "number"; Fast Downward's translator reserves the name
RESERVED = """(define (domain counting) (:requirements :typing) (:types number)
  (:predicates (seen ?n - number) (counted ?n - number))
  (:action count :parameters (?n - number) :precondition (seen ?n) :effect (counted ?n)))
"""


def test_a_domain_no_planner_can_read_is_refused_at_import_in_the_translators_words(
    domains_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "domain.pddl").write_text(RESERVED, encoding="utf-8")
    problem = "(define (problem c1) (:domain counting) (:objects n1 - number) (:init (seen n1)) (:goal (counted n1)))"
    (tmp_path / "p01.pddl").write_text(problem, encoding="utf-8")
    db = tmp_path / "t.db"
    argv = ["--db", str(db), "pddl", "import", str(tmp_path / "domain.pddl"), str(tmp_path / "p01.pddl")]
    assert main([*argv, "--memory", "m"]) == 1
    out = " ".join(capsys.readouterr().err.split())
    assert "no planner can read it" in out and 'type "number", which is a reserved type' in out, out
    assert not (domains_path / "counting").exists() and not db.exists()
    # installing the domain alone is refused the same way
    with pytest.raises(PlanningError, match="reserved type"):
        install_domain(load_domain_file(tmp_path / "domain.pddl"), tmp_path / "domain.pddl", domains_path)
    assert not (domains_path / "counting").exists()


def test_a_domain_name_too_long_for_a_folder_is_a_clear_error(
    domains_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 300-character domain name used to end in a raw OSError (file name too long)."""
    name = "d" * 300
    (tmp_path / "domain.pddl").write_text(
        f"(define (domain {name}) (:requirements :strips :typing) (:types thing) (:predicates (ok ?x - thing))"
        " (:action touch :parameters (?x - thing) :precondition (ok ?x) :effect (not (ok ?x))))"
    )
    (tmp_path / "p.pddl").write_text(
        f"(define (problem p) (:domain {name}) (:objects a - thing) (:init (ok a)) (:goal (not (ok a))))"
    )
    db = tmp_path / "t.db"
    argv = ["--db", str(db), "pddl", "import", str(tmp_path / "domain.pddl"), str(tmp_path / "p.pddl"), "--memory", "m"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    out = " ".join(captured.err.split())
    assert "error:" in out and "invalid domain name" in out and "names have at most 200 characters" in out
    assert "(300 characters)" in out and name not in out  # the name is shown cut, not 300 characters of it
    assert "Traceback" not in captured.out + captured.err and "Errno" not in out
    assert not domains_path.exists() and not db.exists()


def test_a_domain_neo4j_refuses_leaves_no_folder_behind(
    domains_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Predicates named like a node's properties are refused by Neo4j, and the
    domain folder the import installed for it is removed again (it used to stay)."""
    require_neo4j()
    monkeypatch.setenv("L3MP_NEO4J_URI", neo4j_uri())
    domain = unique_name("clash")
    (tmp_path / "domain.pddl").write_text(
        f"(define (domain {domain}) (:requirements :strips :typing) (:types thing)"
        " (:predicates (name ?x - thing) (memory ?x - thing))"
        " (:action touch :parameters (?x - thing) :precondition (name ?x) :effect (memory ?x)))"
    )
    (tmp_path / "p.pddl").write_text(
        f"(define (problem p) (:domain {domain}) (:objects a - thing) (:init (name a)) (:goal (memory a)))"
    )
    memory = unique_name("clash")
    argv = ["--store", "neo4j", "pddl", "import", str(tmp_path / "domain.pddl"), str(tmp_path / "p.pddl")]
    assert main([*argv, "--memory", memory]) == 1
    out = " ".join(capsys.readouterr().err.split())
    assert "error:" in out and "['memory', 'name'] clash with node properties" in out
    assert not (domains_path / domain).exists() and list(domains_path.iterdir()) == []
    store = open_store(Settings(store="neo4j"))
    try:
        assert memory not in {m.name for m in store.list_memories()}
    finally:
        store.close()
    # the same files on SQLite import, so it was the store's refusal that removed the folder
    assert main(["--db", str(tmp_path / "t.db"), *argv[2:], "--memory", memory]) == 0
    assert (domains_path / domain / "domain.pddl").is_file()
