"""The update experiment on a small home: verified memories stay lawful, injected errors are caught."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from experiments.updates import Lane, Variant, judge, run_episode, summarize
from kg_memory import DomainRegistry
from kg_memory.stores import SQLiteStore
from sim import HomeSpec, generate_home
from sim.model import ErrorRates

STEPS = 25
VARIANTS = (Variant("full", False), Variant("full", True), Variant("entities", True))


class NoEmbedder:
    """Neither R- nor R+ embeds anything; a call would mean the wrong retriever ran."""

    dimension = 8

    def embed(self, texts: Any) -> Any:
        raise AssertionError("no retriever here should embed")


@pytest.fixture(scope="module")
def lanes(tmp_path_factory: pytest.TempPathFactory) -> list[Lane]:
    store = SQLiteStore(Path(tmp_path_factory.mktemp("updates")) / "u.db", DomainRegistry())
    home = generate_home(HomeSpec(seed=3, rooms=6, items=24, people=3))
    rates = ErrorRates(rate=0.5, correct_on_reprompt=0.6)
    try:
        return run_episode(home, store, NoEmbedder(), steps=STEPS, rates=rates, seed=3, variants=VARIANTS)
    finally:
        store.close()


def by_name(lanes: list[Lane]) -> dict[str, Lane]:
    return {lane.variant.name: lane for lane in lanes}


def test_every_step_is_judged_for_every_variant(lanes: list[Lane]) -> None:
    assert [lane.variant.name for lane in lanes] == ["R-", "R-V", "R+V"]
    for lane in lanes:
        assert [s.step for s in lane.steps] == list(range(1, STEPS + 1))
        assert all(0.0 <= s.accuracy <= 1.0 for s in lane.steps)
        assert all(s.exact == (s.accuracy == 1.0) for s in lane.steps)


def test_verified_memories_never_hold_a_rule_violation(lanes: list[Lane]) -> None:
    for lane in lanes:
        if lane.variant.verify:
            assert [s.violations for s in lane.steps] == [0] * STEPS, lane.variant.name


def test_every_detectable_injected_error_is_refused(lanes: list[Lane]) -> None:
    verified = by_name(lanes)["R-V"]
    assert sum(len(s.injected) for s in verified.steps) >= 5  # at a 50% rate, errors did occur
    assert sum(s.detectable for s in verified.steps) >= 3
    for step in verified.steps:
        assert step.detected == step.detectable, step


def test_without_verification_injected_errors_reach_the_memory(lanes: list[Lane]) -> None:
    named = by_name(lanes)
    unverified, verified = named["R-"], named["R-V"]
    assert sum(s.slipped for s in unverified.steps) > sum(s.slipped for s in verified.steps)
    assert unverified.steps[-1].accuracy < 1.0
    assert all(s.status != "rejected" or s.attempts >= 1 for s in verified.steps)


def test_the_summary_reports_accuracy_tokens_overhead_and_detection(lanes: list[Lane]) -> None:
    summary = summarize(lanes)
    figures = summary["variants"]["R-V"]
    assert len(figures["per_step"]["accuracy"]) == STEPS
    assert figures["prompt_tokens_per_update"] > 0 and figures["overhead_ms"]["p95"] > 0
    assert figures["errors"]["answers_detected"] == figures["errors"]["answers_detectable"]
    targets = judge(summary["variants"])
    assert targets["violations_R-V"]["pass"] and targets["detected_R-V"]["pass"]
    assert "violations_R-" not in targets  # not promised without verification
    assert summary["variants"]["R+V"]["prompt_tokens_per_update"] < figures["prompt_tokens_per_update"]
