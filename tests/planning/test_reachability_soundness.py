"""Property: ``impossible`` is never answered for a goal that holds or that a plan reaches.

Random goals (atoms over static and fluent predicates, ``and``, ``or``, ``not``, ``exists``,
``forall``, implications) over tiny simulated homes, some with facts forgotten so that actions are
blocked too: the evaluator says which hold, and every goal the check calls impossible goes to the
planner on the full state (see ``experiments.impossible``, which runs many more).
"""

from __future__ import annotations

import pytest

from experiments.impossible import UNSOLVABLE, run, summary

HOMES, GOALS_PER_HOME = 25, 12
STATIC = ("in_room", "appliance_in", "connected", "faucet_at")


@pytest.mark.slow
def test_impossible_is_never_answered_for_a_goal_that_holds_or_that_a_plan_reaches() -> None:
    verdicts = run(HOMES, GOALS_PER_HOME, seed=1)
    unsound = [(v.goal, v.gaps, v.planner) for v in verdicts if v.unsound]
    assert not unsound, unsound
    undecided = [(v.goal, v.planner) for v in verdicts if v.undecided]
    assert not undecided, undecided  # the planner proved each impossible goal unsolvable
    # the relaxation alone (without the "already holds" shortcut) lets every goal that holds through
    assert not [v.goal for v in verdicts if v.holds and v.relaxed_gaps]
    figures = summary(verdicts)
    # not vacuous: goals that hold, goals called impossible (each confirmed), and others, all in numbers
    assert figures["goals"] == HOMES * GOALS_PER_HOME
    assert figures["held"] >= 50 and figures["impossible"] >= 50
    assert figures["goals"] - figures["held"] - figures["impossible"] >= 30
    assert figures["impossible_confirmed_by_planner"] == figures["impossible"]
    assert all(v.planner == UNSOLVABLE for v in verdicts if v.impossible)
    # and the goals people ask: quantified ones, some of them over static predicates, some impossible
    quantified = [v for v in verdicts if "exists" in v.goal or "forall" in v.goal]
    static = [v for v in quantified if any(f"({p} ?" in v.goal for p in STATIC)]
    assert len(quantified) >= 100 and len(static) >= 20
    assert any(v.impossible for v in static) and any(not v.impossible and not v.holds for v in static)
