"""A small surveyed home in the ``example_home`` domain: the shared fixture of the tests, the
service benchmark and anyone trying the API by hand."""

from __future__ import annotations

from typing import Any

from kg_memory import Entity, Fact

SURVEY_ENTITIES = (
    Entity("kitchen", "room"),
    Entity("hall", "room"),
    Entity("table_1", "furniture", "kitchen table"),
    Entity("shelf_1", "furniture", "hall shelf"),
    Entity("sink_1", "sink", "kitchen sink"),
    Entity("mug_1", "dish", "blue mug", {"colour": "blue"}),
    Entity("book_1", "item", "cookbook"),
    Entity("lamp_1", "light", "ceiling lamp"),
    Entity("alex", "person", "Alex"),
)
SURVEY_FACTS = tuple(
    Fact.parse(f)
    for f in (
        "(connected kitchen hall)",
        "(connected hall kitchen)",
        "(in_room table_1 kitchen)",
        "(in_room sink_1 kitchen)",
        "(in_room shelf_1 hall)",
        "(light_in lamp_1 kitchen)",
        "(robot_at robot_1 hall)",
        "(hand_empty robot_1)",
        "(on mug_1 table_1)",
        "(on book_1 shelf_1)",
        "(person_in alex hall)",
    )
)


def survey_json(input: str = "survey") -> dict[str, Any]:
    """The survey as the body of ``POST /v1/memories/{m}/entities``."""
    return {
        "entities": [e.to_json() for e in SURVEY_ENTITIES],
        "facts": [str(f) for f in SURVEY_FACTS],
        "input": input,
    }
