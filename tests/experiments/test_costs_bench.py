"""The costs benchmark's arithmetic: the pruning gap and totals that compare."""

from __future__ import annotations

import pytest

from experiments.costs import Run, gap, summarize


def run(task: str, mode: str, cost: float | None, pruned: float | None = None, full: float | None = None) -> Run:
    status = "solved" if cost is not None else "timeout"
    return Run(
        task=task,
        kind="k",
        mode=mode,
        status=status,
        tier="retrieved",
        seconds=1.0,
        steps=2,
        cost=cost,
        valid=cost is not None,
        proven=full is not None,
        pruned_optimum=pruned,
        full_optimum=full,
    )


def test_the_gap_counts_only_tasks_whose_whole_state_was_searched_to_the_end() -> None:
    runs = [
        run("a", "optimal", 10.0, pruned=10.0, full=8.0),  # pruning lost 2 m
        run("b", "optimal", 5.0, pruned=5.0, full=5.0),
        run("c", "optimal", 7.0, pruned=7.0),  # the whole state ran out of time: not compared
        run("a", "satisficing", 12.0),
    ]
    assert gap(runs) == {"optimal_runs": 3, "compared": 2, "pruning_lost": 1, "loss_max": 2.0, "loss_max_share": 0.25}


def test_costs_are_totalled_over_the_tasks_every_mode_solved() -> None:
    runs = [
        run("a", "satisficing", 12.0),
        run("a", "anytime", 11.0),
        run("a", "optimal", 10.0),
        run("b", "satisficing", 30.0),
        run("b", "anytime", 30.0),
        run("b", "optimal", None),
    ]
    figures = summarize(runs)
    assert figures["satisficing"]["solved"] == 2 and figures["optimal"]["solved"] == 1
    assert [figures[m]["cost_total"] for m in ("satisficing", "anytime", "optimal")] == pytest.approx([12, 11, 10])
    assert figures["optimal"]["common_tasks"] == 1


def test_a_thor_kitchen_task_is_two_things_for_the_sink_and_lama_walks_it() -> None:
    from conftest import require_thor_data

    from experiments.costs import THOR_DOMAIN, _thor_kitchen, plan_once
    from kg_memory import DomainRegistry
    from kg_memory.formula import And, Atom
    from planning.tiers import TieredPlanner

    domain = DomainRegistry().get(THOR_DOMAIN)
    path = require_thor_data() / "scenes" / "FloorPlan1_physics.json.gz"
    world, (text, kind, goal) = _thor_kitchen(path, domain, seed=0)
    assert _thor_kitchen(path, domain, seed=0)[1][0] == text  # the seed decides the task
    assert isinstance(goal, And) and all(isinstance(a, Atom) for a in goal.args)
    items = [a.terms for a in goal.args if isinstance(a, Atom)]
    assert len(items) == 2 and items[0][1] == items[1][1] == "sinkbasin_1" and items[0][0] != items[1][0]
    assert all(f"(fits {item} sinkbasin_1)" in {str(f) for f in world.facts} for item, _ in items)
    assert text.startswith("FloorPlan1: put the ") and kind == "thor"
    result = plan_once(world, (text, kind, goal), "satisficing", TieredPlanner(domain, timeout=30))
    assert result.status == "solved" and result.valid and result.cost is not None and result.cost > 0
