"""The retrieval evaluation on simulator episodes: ground truth, noisy query graphs, metrics, CLI."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from experiments import retrieval as ev
from kg_memory import Atom, Entity, Fact
from kg_memory.stores import SQLiteStore
from l3mp.cli import main
from retrieval import SentenceTransformerEmbedder
from sim import HomeSpec, Simulator, Task, generate_home

SMALL = HomeSpec(seed=3, rooms=6, items=20, people=3)
NOISE = ev.Noise()


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def probes(spec: HomeSpec, steps: int, seed: int = 0, noise: ev.Noise = NOISE) -> list[ev.Probe]:
    sim = Simulator(generate_home(spec), seed=spec.seed)
    rng = random.Random(seed)
    return [ev.next_probe(sim, step, 4, rng, noise) for step in range(1, steps + 1)]


def test_query_graphs_are_deterministic_for_a_seed_and_use_labels_not_names() -> None:
    spec = HomeSpec(seed=3, rooms=6, items=20, people=3, undescriptive_names=True)
    first, again, other = probes(spec, 12), probes(spec, 12), probes(spec, 12, seed=1)
    assert [p.query for p in first] == [p.query for p in again]
    assert [p.query for p in first] != [p.query for p in other]  # the noise follows the seed
    names = {e.name for e in generate_home(spec).entities}
    labels = {e.label for e in generate_home(spec).entities}
    for probe in first:
        assert all(n.id.startswith("n") and n.id not in names for n in probe.query.nodes)
        assert all("object_" not in n.mention and n.mention not in names for n in probe.query.nodes)
    assert {n.mention for p in first for n in p.query.nodes} & labels  # mostly the labels themselves


def test_noise_shortens_swaps_synonyms_and_drops_types_and_edges() -> None:
    mug = Entity("mug_1", "cup", "blue mug")
    rng = random.Random(0)
    assert ev.mention(mug, rng, ev.Noise(synonym=0.0, shorten=1.0)) == "mug"
    assert ev.mention(mug, rng, ev.Noise(synonym=1.0, shorten=0.0)) == "blue cup"
    assert ev.mention(Entity("ava", "person", "Ava B."), rng, ev.Noise(synonym=0.0, shorten=1.0)) == "Ava"
    entities = {"mug_1": mug, "table_1": Entity("table_1", "surface", "kitchen table")}
    links = [("on", "mug_1", "table_1")]
    bare = ev.Noise(drop_type=1.0, drop_edge=1.0)
    query = ev.query_graph(["mug_1", "table_1"], links, entities, {"on": "{0} is on {1}"}, rng, bare)
    assert query is not None and not query.edges and all(n.type is None for n in query.nodes)
    exact = ev.Noise(synonym=0.0, shorten=0.0, drop_type=0.0, paraphrase=0.0, drop_edge=0.0)
    query = ev.query_graph(["mug_1", "table_1"], links, entities, {"on": "{0} is on {1}"}, rng, exact)
    assert query is not None and [e.relation for e in query.edges] == ["is on"]
    assert [(n.mention, n.type) for n in query.nodes] == [("blue mug", "cup"), ("kitchen table", "surface")]


def test_an_events_needed_facts_are_the_facts_it_removes() -> None:
    sim = Simulator(generate_home(SMALL), seed=1)
    rng = random.Random(0)
    for step in range(1, 15):
        before = sim.state
        event = sim.next_event()
        probe = ev.event_probe(step, event, sim.world, rng, ev.Noise())
        assert probe.needed == event.delta.remove == ev.event_needed(event)
        assert probe.needed <= before and probe.delta == event.delta and probe.names == event.entities


def test_a_tasks_needed_facts_are_its_entities_and_where_they_are() -> None:
    home = generate_home(SMALL)
    sim = Simulator(home, seed=1)
    placed = next(f for f in sim.state if f.predicate == "on")
    item, holder = placed.args
    target = next(r for r in home.receptacles if r != holder and sim.world.type_of(r) == "surface")
    task = Task("put_item", "put it there", Atom("on", (item, target)), (item, target))
    probe = ev.task_probe(5, task, sim.world, random.Random(0), ev.Noise())
    room = home.room_of[holder]
    assert {placed, Fact("in_room", (holder, room)), Fact("in_room", (target, home.room_of[target]))} <= probe.needed
    assert all(f.args[0] in (item, target, holder) for f in probe.needed)
    assert probe.kind == "task" and probe.delta is None and set(probe.names) == {item, target}


@pytest.fixture
def sqlite(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "eval.db")
    yield store
    store.close()


def test_a_tiny_episode_gives_metrics_in_range_for_every_retriever(
    sqlite: SQLiteStore, embedder: SentenceTransformerEmbedder
) -> None:
    scale = ev.Scale(name="tiny", spec=SMALL, steps=8, episodes=1, task_every=4)
    result = ev.run_scale(scale, sqlite, embedder)
    assert set(result["retrievers"]) == set(ev.RETRIEVER_NAMES)
    for figures in result["retrievers"].values():
        assert figures["steps"] == 8 and figures["judged_steps"] > 0
        for key in ("recall", "precision", "token_ratio_mean", "complete_share"):
            assert 0.0 <= figures[key] <= 1.0, key
        assert figures["latency_p95_ms"] >= figures["latency_p50_ms"] > 0
    full = result["retrievers"]["full"]
    assert full["recall"] == 1.0 and full["token_ratio_mean"] == 1.0
    assert result["re_embedded_after_warmup"] == 0 and result["warmup_entities_embedded"] > 0
    assert sqlite.list_memories() == []  # the episode's memory is deleted


def test_targets_are_judged_for_the_scales_that_ran() -> None:
    search = {"recall": 0.97, "token_ratio_mean": 0.2, "latency_p95_ms": 10.0}
    scales = {"paper": {"sqlite": {"retrievers": {"search": search}, "re_embedded_after_warmup": 0}}}
    verdicts = ev.judge(scales)
    assert set(verdicts) == {"recall_paper", "tokens_paper", "latency_paper", "re_embedded"}
    assert verdicts["recall_paper"]["pass"] and not verdicts["tokens_paper"]["pass"]
    assert verdicts["latency_paper"]["pass"]
    assert verdicts["re_embedded"] == {"target": "no entity re-embedded after warm-up", "measured": 0, "pass": True}


def test_cli_runs_a_small_benchmark_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "retrieval.json"
    argv = ["bench", "retrieval", "--steps", "5", "--episodes", "1", "--scales", "paper,large"]
    assert main([*argv, "--entities", "120", "--large-steps", "3", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["benchmark"] == "retrieval" and set(results["scales"]) == {"paper", "large"}
    assert results["scales"]["large"]["sqlite"]["home"]["entities"] < 200
    judged = {"recall_paper", "tokens_paper", "latency_paper", "tokens_large", "latency_large", "re_embedded"}
    assert judged == set(results["targets"])
    printed = capsys.readouterr().out
    assert "retrieval targets" in printed and ("PASS" in printed or "MISS" in printed)
