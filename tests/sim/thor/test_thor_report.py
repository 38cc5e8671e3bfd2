"""An English report about an AI2-THOR scene, applied through the NL pipeline (Alg. 3) with a scripted model
answering the real prompts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from conftest import unique_name
from thor_support import kitchen_memory, scene

from kg_memory import DomainRegistry, Fact, UpdateStatus
from kg_memory.stores import SQLiteStore
from l3mp.llm import Message, ScriptedModel
from l3mp.pipelines import NLUpdateConfig, NLUpdater

MUG, SINK = "Mug|-01.76|+00.90|-00.62", "Sink|-01.90|+00.97|-01.50|SinkBasin"
REPORT = "Someone put the mug in the sink."


def test_someone_put_the_mug_in_the_sink(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "report.db", DomainRegistry())
    memory, names = kitchen_memory(store, unique_name("kitchen"))
    mug, sink = names.name(MUG), names.name(SINK)
    was = [names.name(p) for p in scene()[MUG]["parentReceptacles"]]
    assert was and sink not in was

    def pick_entities(messages: Sequence[Message]) -> dict[str, list[str]]:
        prompt = messages[-1].content
        assert REPORT in prompt and mug in prompt and "mug in the sink basin" not in prompt
        return {"entities": [mug, sink]}

    def state_change(messages: Sequence[Message]) -> dict[str, object]:
        prompt = messages[-1].content
        assert all(p in prompt for p in was)  # the retrieved context says where the mug is now
        remove = [{"predicate": "in_receptacle", "args": [mug, p]} for p in was]
        return {"remove": remove, "add": [{"predicate": "in_receptacle", "args": [mug, sink]}]}

    model = ScriptedModel([pick_entities, state_change])
    result = NLUpdater(memory, model, NLUpdateConfig(retriever="entities")).update(REPORT)
    assert result.status is UpdateStatus.APPLIED, result.issues
    facts = memory.facts()
    assert Fact("in_receptacle", (mug, sink)) in facts
    assert not any(Fact("in_receptacle", (mug, p)) in facts for p in was)
    assert model.remaining == 0
