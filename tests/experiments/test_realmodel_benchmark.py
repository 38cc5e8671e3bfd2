"""The real-model benchmark (experiments.realmodel): its committed figures for the judged lane (the
default packaged model, one thread, the choosing reader with the likelihood ranker: the product's
default) come back exactly when its recorded traffic (chat completions and scores) is replayed
offline, and so do the choice ranker's; and against the real local server, reports that the recorded
run read exactly, each ranked by the model, are read exactly again."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from experiments.harness import open_store
from experiments.realmodel import BENCHMARK, main
from experiments.realmodel.data import SETS, load_reports
from experiments.realmodel.reading import CONFIGS, DEFAULT_CONFIG, read_reports, surveyed_memory
from experiments.realmodel.report import without_timing
from experiments.realmodel.run import add_arguments, run_benchmark
from experiments.realmodel.serving import product_client, product_scorer, recording, replaying
from l3mp.llm import ScriptedModel
from l3mp.llm.local import DEFAULT_MODEL
from l3mp.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "experiments" / "results" / "realmodel.json"
CASSETTES = ROOT / "tests" / "fixtures" / "cassettes" / "realmodel"
DEFAULT_LANE = f"{DEFAULT_MODEL}/t1/{DEFAULT_CONFIG}"
# read exactly in the recorded run where the words left readings open and the model's scores chose:
# a cup filled, an item moved (held-out), a drink finished (held-out)
LIVE_EXACT = ("r54", "h24", "h47")


def recorded() -> dict[str, Any]:
    results: dict[str, Any] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return results


def test_the_main_entry_lists_the_benchmark() -> None:
    from experiments.__main__ import BY_NAME

    assert BY_NAME["realmodel"].main is main


def test_the_judged_lane_is_the_settings_default_reading() -> None:
    settings = Settings()
    assert settings.nl_ranker == CONFIGS[DEFAULT_CONFIG].ranker
    assert settings.nl_reader in ("auto", "choose")  # auto chooses for the packaged local models
    assert CONFIGS[DEFAULT_CONFIG].reader == "choose"
    assert recorded()["default_lane"] == DEFAULT_LANE


@pytest.mark.parametrize("config", [DEFAULT_CONFIG, "choose+choice"])
def test_replaying_a_recorded_lane_reproduces_its_committed_figures(tmp_path: Path, config: str) -> None:
    key = f"{DEFAULT_MODEL}/t1/{config}"
    committed = recorded()["lanes"][key]
    assert committed["cassette"], f"the committed figures of {key} were not recorded"
    parser = BENCHMARK.parser(None)
    add_arguments(parser)
    lane = ["--models", DEFAULT_MODEL, "--threads", "1", "--configs", config]
    args = parser.parse_args([*lane, "--replay", str(CASSETTES), "--out", str(tmp_path / "replayed.json")])
    results = run_benchmark(args, Console(file=io.StringIO()))
    replayed = results["lanes"][key]
    assert replayed["unplayed"] == 0  # every recorded exchange was asked for again
    assert without_timing(replayed["summary"]) == without_timing(committed["summary"])
    outcome = {r["id"]: (r["outcome"], r["prompt_tokens"], r["status"]) for r in committed["reports"]}
    assert {r["id"]: (r["outcome"], r["prompt_tokens"], r["status"]) for r in replayed["reports"]} == outcome
    goals = {t["id"]: (t["outcome"], t["goal"]) for t in committed["tasks"]}
    assert {t["id"]: (t["outcome"], t["goal"]) for t in replayed["tasks"]} == goals
    assert committed["summary"]["reports"]["all"]["updates"] == sum(len(load_reports(s)) for s in SETS)
    if config == DEFAULT_CONFIG:  # the targets judge the replayed lane as they judged the recorded one
        untimed = ("registered_exactly", "wrong_writes", "tasks_right_goal")
        committed_targets = recorded()["targets"]
        assert [results["targets"][t] for t in untimed] == [committed_targets[t] for t in untimed]


class _Moded(ScriptedModel):
    """A scripted client in llama-cpp-python's JSON mode, whose prompts use the tuples dialect."""

    mode = "json_object_schema"


def test_a_replayed_lane_asks_in_the_mode_of_the_client_it_recorded(tmp_path: Path) -> None:
    client = _Moded([{"now": "x"}])
    with recording(client, tmp_path, "lane") as model:  # type: ignore[arg-type]
        assert getattr(model, "mode", None) == "json_object_schema"
        model.complete([], schema={"type": "object"})
    assert getattr(replaying(tmp_path, "lane"), "mode", None) == "json_object_schema"


def test_the_reports_read_live_were_read_exactly_when_recorded() -> None:
    rows = {r["id"]: r for r in recorded()["lanes"][DEFAULT_LANE]["reports"]}
    assert [rows[report]["outcome"] for report in LIVE_EXACT] == ["exact"] * len(LIVE_EXACT)
    assert all(rows[report]["prompt_tokens"] > 0 for report in LIVE_EXACT)  # the model's scores ranked it


@pytest.mark.slow
def test_the_default_lane_reads_three_reports_exactly_against_the_real_server(local_server: Any) -> None:
    reports = [r for s in SETS for r in load_reports(s) if r.id in LIVE_EXACT]
    assert {r.id for r in reports} == set(LIVE_EXACT)
    client = product_client(local_server)
    scorer = product_scorer(client)
    try:
        with open_store("sqlite") as store:
            memory = surveyed_memory(store)
            initial = memory.facts()
            config = CONFIGS[DEFAULT_CONFIG]
            rows = read_reports(memory, client, config, reports, settings=Settings(), scorer=scorer)
            assert memory.facts() == initial  # each update was undone
    finally:
        client.close()
        scorer.close()
    assert [(r["id"], r["outcome"]) for r in rows] == [(r.id, "exact") for r in reports], rows
    assert all(r["prompt_tokens"] > 0 for r in rows), rows  # each read was ranked by the model's scores
