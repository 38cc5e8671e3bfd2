"""How the settings choose a reader and size a context: the packaged local models choose, any other
model writes; a fact budget reaches the retriever the pipelines build."""

from __future__ import annotations

import pytest

from kg_memory import WorldMemory
from l3mp.llm import ScriptedModel
from l3mp.pipelines import NLUpdateConfig, NLUpdater
from l3mp.pipelines.plans import PlanConfig, TaskPlanner
from l3mp.settings import Settings
from l3mp.wiring import nl_reader


@pytest.mark.parametrize(
    ("model", "reader", "expected"),
    [
        ("smollm2-135m-instruct", "auto", "choose"),
        ("gemma3-270m", "auto", "choose"),
        ("gpt-4o-mini", "auto", "write"),
        ("smollm2-135m-instruct", "write", "write"),
        ("gpt-4o-mini", "choose", "choose"),
    ],
)
def test_auto_chooses_for_the_packaged_local_models_and_writes_for_others(
    model: str, reader: str, expected: str
) -> None:
    settings = Settings(llm_model=model, nl_reader=reader)  # type: ignore[arg-type]
    assert nl_reader(settings) == expected
    assert NLUpdateConfig.from_settings(settings).reader == expected


def test_a_fact_budget_reaches_the_retrievers_of_updates_and_plans(home: WorldMemory) -> None:
    settings = Settings(llm_model="gpt-4o-mini", retriever="search", context_facts=12)
    config = NLUpdateConfig.from_settings(settings)
    assert config.max_facts == 12
    updater = NLUpdater(home, ScriptedModel([]), config)
    assert updater.retrieval.retriever.params.max_facts == 12  # type: ignore[attr-defined]
    planner = TaskPlanner(home, None, PlanConfig(retriever="entities", max_facts=7))
    assert planner.retriever.params.max_facts == 7  # type: ignore[attr-defined]
    whole = NLUpdater(home, ScriptedModel([]), NLUpdateConfig(retriever="full", max_facts=5))
    assert whole.retrieval.retriever.name == "full"  # the whole state has no budget
