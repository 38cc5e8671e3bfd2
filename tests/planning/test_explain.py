"""Plans in English: action templates, entity labels, the PDDL fallback, numbering, and errors."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from kg_memory import Domain, DomainRegistry, Language
from planning import ExplainError, GroundAction, PlanningError, explain, numbered


@pytest.fixture(scope="module")
def household() -> Domain:
    return DomainRegistry().get("household")


PLAN = tuple(
    GroundAction.parse(step)
    for step in (
        "(move robot_1 hall kitchen)",
        "(pick robot_1 mug_1 table_1 kitchen)",
        "(give robot_1 mug_1 alex kitchen)",
    )
)


def test_steps_read_from_the_action_templates(household: Domain) -> None:
    assert explain(PLAN, household) == [
        "robot_1 moves from hall to kitchen",
        "robot_1 picks up mug_1 from table_1 in kitchen",
        "robot_1 gives mug_1 to alex in kitchen",
    ]


def test_labels_replace_the_names_they_cover(household: Domain) -> None:
    labels = {"mug_1": "the blue mug", "table_1": "the kitchen table", "kitchen": "the kitchen", "alex": "Alex"}
    assert explain(PLAN[1:], household, labels) == [
        "robot_1 picks up the blue mug from the kitchen table in the kitchen",
        "robot_1 gives the blue mug to Alex in the kitchen",
    ]


def test_an_action_without_a_template_reads_as_pddl(household: Domain) -> None:
    templates = {name: t for name, t in household.language.actions.items() if name != "move"}
    terse = dataclasses.replace(
        household, language=Language(household.language.predicates, MappingProxyType(templates))
    )
    assert explain(PLAN[:2], terse, {"hall": "the hall"}) == [
        "(move robot_1 hall kitchen)",
        "robot_1 picks up mug_1 from table_1 in kitchen",
    ]


def test_numbered_counts_from_one() -> None:
    assert numbered(["go to the kitchen", "pick up the mug"]) == "1. go to the kitchen\n2. pick up the mug"
    assert numbered([]) == ""


def test_an_unknown_action_is_an_error_carrying_it(household: Domain) -> None:
    step = GroundAction("teleport", ("robot_1", "kitchen"))
    expected = r"\(teleport robot_1 kitchen\).*no action 'teleport'.*answer_phone"
    with pytest.raises(ExplainError, match=expected) as raised:
        explain((PLAN[0], step), household)
    assert raised.value.action == step and isinstance(raised.value, PlanningError)


def test_a_step_with_the_wrong_arguments_is_an_error(household: Domain) -> None:
    step = GroundAction("move", ("robot_1", "hall"))
    with pytest.raises(ExplainError, match="move takes 3 arguments") as raised:
        explain([step], household)
    assert raised.value.action == step
