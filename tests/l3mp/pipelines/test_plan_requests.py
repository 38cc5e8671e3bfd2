"""A plan request that is not worth a model call is answered at once, in words about a plan request."""

from __future__ import annotations

import pytest

from kg_memory import WorldMemory
from l3mp.llm import ScriptedModel
from l3mp.pipelines.plans import PlanConfig, TaskPlanner


@pytest.mark.parametrize(
    ("request_text", "problem"),
    [
        ("", "the request is empty: say what the robot should do (or give a PDDL goal)"),
        ("   ", "the request is empty"),
        ("x", "the request does not read as a sentence: say what the robot should do"),
        ("x" * 2_001, "the request is 2001 characters long; the limit is 2000"),
    ],
)
def test_an_unusable_request_is_named_as_a_plan_request(surveyed: WorldMemory, request_text: str, problem: str) -> None:
    model = ScriptedModel([])  # never asked
    report = TaskPlanner(surveyed, model, PlanConfig(retriever="full")).plan(request_text)
    assert report.status == "invalid_request" and len(report.issues) == 1
    assert report.issues[0].startswith(problem) and "update" not in report.issues[0]
