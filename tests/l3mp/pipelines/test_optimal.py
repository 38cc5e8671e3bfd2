"""Optimal plans on request: the cheapest plan, proven, from memory through the pipeline,
the CLI and REST; and, when the deadline ends the search, the best plan found, said not proven."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from kg_memory import DomainRegistry
from kg_memory.formula import Atom
from l3mp.cli import main
from l3mp.pipelines import PlanConfig, TaskPlanner
from l3mp.pipelines.domains import import_problem
from l3mp.settings import Settings
from l3mp.wiring import open_store
from planning import PlanStatus, World
from planning.problem import focused_context
from planning.tiers import TieredPlanner
from sim import HomeSpec, generate_home

sys.path.insert(0, str(Path(__file__).parents[2] / "planning"))
from test_costs import DASHED, PROBLEM

CHEAP = ["(walk hall yard)", "(walk yard shop)", "(start c1 shop)"]


@pytest.fixture
def plant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("L3MP_DOMAINS_PATH", str(tmp_path / "domains"))
    monkeypatch.setenv("L3MP_SQLITE_PATH", str(tmp_path / "t.db"))
    settings = Settings(sqlite_path=tmp_path / "t.db", domains_path=tmp_path / "domains")
    (tmp_path / "domain.pddl").write_text(DASHED, encoding="utf-8")
    (tmp_path / "p1.pddl").write_text(PROBLEM, encoding="utf-8")
    import_problem(settings, tmp_path / "domain.pddl", tmp_path / "p1.pddl", "plant")
    return settings


def test_optimal_returns_the_cheapest_plan_with_more_steps_proven(plant: Settings) -> None:
    from kg_memory import WorldMemory

    store = open_store(plant)
    try:
        memory = WorldMemory.open(store, "plant")
        report = TaskPlanner(memory, config=PlanConfig(optimal=True, timeout=600, deadline=1800)).plan(goal="(on c1)")
    finally:
        store.close()
    assert report.solved and [str(a) for a in report.plan] == CHEAP
    assert report.optimal and report.cost == 5.25 and report.optimality == ""
    assert report.cost_explanation == "The plan costs 5.25 (proven the cheapest)."
    assert report.to_json()["optimal"] is True and report.to_json()["cost"] == 5.25


def test_l3mp_plan_optimal_on_the_command_line(plant: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--db", str(plant.sqlite_path)]
    assert main([*argv, "plan", "--memory", "plant", "--goal", "(on c1)", "--optimal", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["plan"] == CHEAP and record["optimal"] is True and record["cost"] == 5.25
    assert main([*argv, "plan", "--memory", "plant", "--goal", "(on c1)", "--optimal"]) == 0
    assert "The plan costs 5.25 (proven the cheapest)." in capsys.readouterr().out


def test_optimal_over_rest(plant: Settings) -> None:
    from fastapi.testclient import TestClient

    from l3mp.service import create_app

    with TestClient(create_app(plant)) as client:
        plain = client.post("/v1/memories/plant/plans", json={"goal": "(on c1)"}).json()
        best = client.post("/v1/memories/plant/plans", json={"goal": "(on c1)", "optimal": True}).json()
    assert plain["status"] == "solved" and plain["optimal"] is False and plain["cost"] >= 5.25
    assert best["plan"] == CHEAP and best["optimal"] is True and best["cost"] == 5.25


def test_when_the_deadline_ends_the_search_the_best_plan_so_far_is_not_proven(stalling_planner: Any) -> None:
    # a household of 1,200 things: the retrieved context is proven for real; the search of the whole
    # state never ends, so its time limit stops it
    stalls = stalling_planner(min_bytes=20_000)
    home = generate_home(HomeSpec(seed=3, rooms=30, items=1_000, people=4))
    world = World(DomainRegistry().get("household"), home.entities, home.facts)
    cup = next(c for c in world.objects_of("cup"))
    goal = Atom("held", (cup, "robot_1"))
    first = focused_context(world, goal, ["robot_1"])
    result = TieredPlanner(world.domain, timeout=10.0, optimal=True).plan(world, goal, first, anchors=["robot_1"])
    assert result.status is PlanStatus.SOLVED and result.tier == "retrieved" and len(result.plan) >= 1
    assert not result.optimal and result.cost == len(result.plan)
    full = result.attempts[-1]
    assert full.tier == "full" and full.result.status is PlanStatus.TIMEOUT
    assert len(stalls.stalled()) == 1 and stalls.running() == []  # killed at its time limit
    assert "ran out of its" in result.note and "retrieved context" in result.note
