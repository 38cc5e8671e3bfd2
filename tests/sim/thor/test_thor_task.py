"""A whole task in a kitchen, on the real Controller against the scripted Unity side (scripted, not THOR
physics): planned from memory with search retrieval (RS), executed, replanned after THOR refuses an
action, and judged by what THOR reports."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import unique_name
from thor_support import kitchen_memory, scripted_env, wire

from kg_memory import DomainRegistry
from kg_memory.stores import SQLiteStore
from l3mp.llm import Message, ScriptedModel
from l3mp.pipelines import PlanConfig
from l3mp.runtime import Environment, ReplanCause, Runtime, RuntimeConfig, TaskStatus

MUG, SINK = "Mug|-01.76|+00.90|-00.62", "Sink|-01.90|+00.97|-01.50|SinkBasin"
REFUSAL = "No valid positions to place object found"


@pytest.mark.slow
def test_a_kitchen_task_is_planned_from_memory_replanned_after_a_refusal_and_done(
    tmp_path: Path, thor_home: Path
) -> None:
    store = SQLiteStore(tmp_path / "task.db", DomainRegistry())
    memory, names = kitchen_memory(store, unique_name("kitchen"))
    mug, sink = names.name(MUG), names.name(SINK)
    goal = f"(in_receptacle {mug} {sink})"

    def query_graph(messages: Sequence[Message]) -> dict[str, object]:
        assert "Put the mug in the sink" in messages[-1].content
        nodes = [{"id": "n1", "mention": "mug", "type": "mug"}, {"id": "n2", "mention": "sink", "type": "sinkbasin"}]
        return {"nodes": nodes, "edges": [{"source": "n1", "target": "n2", "relation": "in"}]}

    def goal_answer(messages: Sequence[Message]) -> dict[str, str]:
        prompt = messages[-1].content
        assert mug in prompt and sink in prompt  # the retrieved context names both
        return {"goal": goal}

    model = ScriptedModel([query_graph, goal_answer])
    refusal = {"action": "PutObject", "fate": "refuse", "errorMessage": REFUSAL}
    env = scripted_env(tmp_path, memory.domain, fates=[refusal])
    try:
        assert isinstance(env, Environment)
        env.add_task("Put the mug in the sink.")
        config = RuntimeConfig(plan=PlanConfig(retriever="search"))
        task = Runtime(memory, env, model, config).run(1).steps[0].task
    finally:
        env.close()
    assert task is not None and task.status is TaskStatus.SUCCEEDED, task
    first = task.plans[0]
    assert [c.name for c in model.calls] == ["query_graph", "goal"]  # RS: the model's query graph was searched
    assert first.goal == goal and first.tier == "retrieved"  # :init from the retrieved triples sufficed
    assert task.replans and task.replans[0].cause is ReplanCause.ACTION_FAILED
    assert any(REFUSAL in d for d in task.replans[0].details)
    sent = [a for a in wire(tmp_path) if a["action"] not in ("GetScenesInBuild", "Reset", "Initialize")]
    puts = [a for a in sent if a["action"] == "PutObject"]
    assert len(puts) == 2 and all(a["objectId"] == SINK and "forceAction" not in a for a in puts)
    assert {"GetInteractablePoses", "TeleportFull", "PickupObject"} <= {a["action"] for a in sent}
    assert f"(in_receptacle {mug} {sink})" in {str(f) for f in memory.facts()}
    assert json.dumps(task.to_json())
