"""The natural-language update pipeline (Alg. 3) with the scripted double, over both stores."""

from __future__ import annotations

import random
import string
import time
from collections.abc import Sequence
from typing import Any

import pytest

from kg_memory import Delta, Fact, IssueCode, UpdateSource, UpdateStatus, WorldMemory
from l3mp.llm import Message, ModelUnavailable, OpenAICompatibleModel, ScriptedModel
from l3mp.pipelines import NLUpdateConfig, NLUpdater
from l3mp.prompts import ISSUES_HEADER
from retrieval import SentenceTransformerEmbedder, retriever

UTTERANCE = "Alex moved the blue mug from the kitchen table to the hall shelf."
MOVE = {
    "remove": [{"predicate": "on", "args": ["mug_1", "table_1"]}],
    "add": [{"predicate": "on", "args": ["mug_1", "shelf_1"]}],
}
MOVED = Fact.parse("(on mug_1 shelf_1)")
WAS = Fact.parse("(on mug_1 table_1)")


def full(**overrides: Any) -> NLUpdateConfig:
    return NLUpdateConfig(retriever="full", **overrides)


def snapshot(memory: WorldMemory) -> tuple[int, frozenset[Fact], int]:
    return memory.version, memory.facts(), len(memory.history())


def test_a_verified_update_is_applied_with_provenance(home: WorldMemory) -> None:
    model = ScriptedModel([MOVE])
    result = NLUpdater(home, model, full()).update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED
    assert MOVED in home.facts() and WAS not in home.facts()
    update = home.history()[-1]
    assert update.id == result.update.id and update.source is UpdateSource.NL and update.input == UTTERANCE
    assert update.delta == Delta(remove={WAS}, add={MOVED})
    assert update.meta["retrieval"]["retriever"] == "full" and update.meta["retrieval"]["facts"] == 11
    assert update.meta["attempts"] == 1 and update.meta["verified"] is True
    assert update.meta["usage"]["prompt_tokens"] == result.usage.prompt_tokens > 0
    assert result.attempts == 1 and result.timings["overhead"] >= 0


def test_verifier_issues_are_fed_back_and_the_fixed_answer_applied(home: WorldMemory) -> None:
    no_removal = {"remove": [], "add": MOVE["add"]}
    model = ScriptedModel([no_removal, MOVE])
    result = NLUpdater(home, model, full()).update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED and result.attempts == 2
    second = model.calls[1].messages
    assert second[:2] == model.calls[0].messages  # the context is not sent twice
    assert second[2] == Message("assistant", ScriptedModel([no_removal]).complete([]).text)
    assert second[3].content.startswith(ISSUES_HEADER) and "mug_1" in second[3].content
    assert home.history()[-1].meta["attempts"] == 2


def _rejected_after_retries(memory: WorldMemory, replies: Sequence[Any], code: IssueCode, retries: int = 2) -> None:
    before = snapshot(memory)
    model = ScriptedModel(replies)
    result = NLUpdater(memory, model, full(retries=retries)).update(UTTERANCE)
    assert result.status is UpdateStatus.REJECTED
    assert len(model.calls) == retries + 1 == result.attempts
    assert {i.code for i in result.issues} >= {code}
    assert (memory.version, memory.facts()) == before[:2]
    recorded = memory.history()[-1]
    assert recorded.status is UpdateStatus.REJECTED and recorded.input == UTTERANCE
    assert recorded.issues == result.issues and len(memory.history()) == before[2] + 1


def test_output_that_is_not_json_is_fed_back_then_rejected_with_reasons(home: WorldMemory) -> None:
    _rejected_after_retries(home, ["Sure! The mug is on the shelf now."] * 3, IssueCode.MALFORMED_ANSWER)


def test_json_of_the_wrong_shape_is_fed_back_then_rejected(home: WorldMemory) -> None:
    replies = [{"edits": []}, {"remove": "on mug_1", "add": []}, {"remove": [{"args": ["mug_1"]}], "add": []}]
    _rejected_after_retries(home, replies, IssueCode.MALFORMED_ANSWER)
    issues = home.history()[-1].issues
    assert any("is not a fact" in i.message for i in issues)


def test_unknown_predicates_and_entities_are_rejected_with_reasons(home: WorldMemory) -> None:
    wrong = {
        "remove": [],
        "add": [{"predicate": "holding", "args": ["alex", "mug_1"]}, {"predicate": "on", "args": ["cup_9", "shelf_1"]}],
    }
    _rejected_after_retries(home, [wrong] * 3, IssueCode.UNKNOWN_PREDICATE)
    codes = {i.code for i in home.history()[-1].issues}
    assert IssueCode.UNKNOWN_ENTITY in codes  # a natural-language update cannot create cup_9


def test_a_model_that_cannot_be_reached_raises_and_changes_nothing(home: WorldMemory) -> None:
    before = snapshot(home)
    model = ScriptedModel([ModelUnavailable("http://localhost:1/v1", "m", "connection refused", attempts=3)])
    with pytest.raises(ModelUnavailable, match="after 3 attempt"):
        NLUpdater(home, model, full()).update(UTTERANCE)
    assert snapshot(home) == before


def test_an_endpoint_that_is_down_fails_after_bounded_retries(home: WorldMemory) -> None:
    before = snapshot(home)
    # a refused connection is an outage (raised); a call that runs out of time would be a recorded rejection
    client = OpenAICompatibleModel("http://127.0.0.1:9/v1", "any", timeout=5.0, max_retries=1, backoff=0.0)
    started = time.perf_counter()
    with pytest.raises(ModelUnavailable) as caught:
        NLUpdater(home, client, full()).update(UTTERANCE)
    assert caught.value.attempts == 2 and not caught.value.timed_out and time.perf_counter() - started < 20
    assert snapshot(home) == before


@pytest.mark.parametrize(
    "utterance",
    ["", "   \n", "".join(random.Random(7).choices(string.printable, k=10_000)), "%$#@!& 12345 ;;; ???"],
    ids=["empty", "blank", "10kB-noise", "symbols"],
)
def test_empty_or_noise_is_rejected_quickly_without_a_model_call(home: WorldMemory, utterance: str) -> None:
    before = snapshot(home)
    model = ScriptedModel([])
    result = NLUpdater(home, model, full()).update(utterance)
    assert not model.calls
    assert result.status is UpdateStatus.REJECTED and result.issues[0].code is IssueCode.INVALID_INPUT
    assert (home.version, home.facts()) == before[:2] and home.history()[-1].status is UpdateStatus.REJECTED


def test_a_triple_view_truth_flag_is_understood(home: WorldMemory) -> None:
    answer = {"remove": [{"predicate": "hand_empty", "args": ["robot_1", "true"]}], "add": []}
    result = NLUpdater(home, ScriptedModel([answer]), full()).update("The robot's hand is no longer empty now.")
    assert result.status is UpdateStatus.APPLIED
    assert Fact.parse("(hand_empty robot_1)") not in home.facts()


def test_unverified_variant_writes_what_a_graph_can_hold(home: WorldMemory) -> None:
    bad = {"remove": [], "add": [*MOVE["add"], {"predicate": "holding", "args": ["alex", "mug_1"]}]}
    result = NLUpdater(home, ScriptedModel([bad]), full(verify=False)).update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED and result.attempts == 1
    assert {MOVED, WAS} <= home.facts()  # the mug is now in two places: what verification prevents
    meta = home.history()[-1].meta
    assert meta["verified"] is False and meta["dropped"] == ["(holding alex mug_1)"]
    assert {i["code"] for i in meta["issues"]} >= {"functional", "unknown_predicate"}


def test_a_concurrent_write_is_reverified_without_asking_the_model_again(
    home: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = WorldMemory.open(home.store, home.name)
    verify = home.verify
    calls = []

    def verify_then_someone_writes(delta: Delta, source: UpdateSource) -> Any:
        issues = verify(delta, source)
        if not calls:  # between our check and our commit, a person walks into the kitchen
            other.apply(
                Delta(remove={Fact.parse("(person_in alex hall)")}, add={Fact.parse("(person_in alex kitchen)")}),
                source=UpdateSource.SENSOR,
            )
        calls.append(delta)
        return issues

    monkeypatch.setattr(home, "verify", verify_then_someone_writes)
    model = ScriptedModel([MOVE])
    result = NLUpdater(home, model, full()).update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED and len(model.calls) == 1 and len(calls) >= 2
    assert {MOVED, Fact.parse("(person_in alex kitchen)")} <= home.facts()


def test_a_concurrent_write_that_invalidates_the_delta_asks_again(home: WorldMemory) -> None:
    other = WorldMemory.open(home.store, home.name)

    def answer_after_someone_moved_it(messages: Sequence[Message]) -> dict[str, Any]:
        other.apply(Delta(remove={WAS}, add={Fact.parse("(on mug_1 sink_1)")}), source=UpdateSource.SENSOR)
        return MOVE

    fixed = {"remove": [{"predicate": "on", "args": ["mug_1", "sink_1"]}], "add": MOVE["add"]}
    model = ScriptedModel([answer_after_someone_moved_it, fixed])
    result = NLUpdater(home, model, full()).update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED and len(model.calls) == 2
    assert "does not hold" in model.calls[1].messages[-1].content or "mug_1" in model.calls[1].messages[-1].content
    assert MOVED in home.facts()


def test_entity_selection_retrieval_asks_for_names_then_sends_their_context(home: WorldMemory) -> None:
    model = ScriptedModel([{"entities": ["mug_1", "shelf_1", "nonsense_3"]}, MOVE])
    result = NLUpdater(home, model, NLUpdateConfig(retriever="entities")).update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED
    assert model.calls[0].name == "entity_selection" and model.calls[1].name == "state_change"
    assert "lamp_1" not in model.calls[1].messages[1].content.split("Current facts:")[1]  # not near the mug
    retrieval = home.history()[-1].meta["retrieval"]
    assert retrieval["retriever"] == "entities" and retrieval["missing"] == ["nonsense_3"]


@pytest.fixture(scope="module")
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def test_search_retrieval_matches_the_models_query_graph(home: WorldMemory, embedder: Any) -> None:
    graph = {
        "nodes": [
            {"id": "n1", "mention": "blue mug", "type": "dish"},
            {"id": "n2", "mention": "kitchen table", "type": None},
            {"id": "n3", "mention": "hall shelf", "type": None},
        ],
        "edges": [{"source": "n1", "target": "n2", "relation": "on"}],
    }
    model = ScriptedModel([graph, MOVE])
    updater = NLUpdater(home, model, NLUpdateConfig(), retriever=retriever("search", embedder=embedder))
    result = updater.update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED and model.calls[0].name == "query_graph"
    assert "(mug_1, on, table_1)" in model.calls[1].messages[1].content
    assert home.history()[-1].meta["retrieval"]["retriever"] == "search"


def test_an_unusable_query_graph_is_rejected_before_any_edit_is_asked_for(home: WorldMemory, embedder: Any) -> None:
    before = snapshot(home)
    model = ScriptedModel(["no idea", {"nodes": []}, {"nodes": "n1"}])
    config = NLUpdateConfig(retrieval_retries=2, fallback="none")
    updater = NLUpdater(home, model, config, retriever=retriever("search", embedder=embedder))
    result = updater.update(UTTERANCE)
    assert result.status is UpdateStatus.REJECTED and result.attempts == 0
    assert [c.name for c in model.calls] == ["query_graph"] * 3
    assert all(i.code is IssueCode.MALFORMED_ANSWER for i in result.issues)
    assert (home.version, home.facts()) == before[:2]


def test_an_unusable_query_graph_falls_back_to_the_entities_sharing_words(home: WorldMemory, embedder: Any) -> None:
    model = ScriptedModel(["no idea", {"nodes": []}, MOVE])
    updater = NLUpdater(
        home, model, NLUpdateConfig(retrieval_retries=1), retriever=retriever("search", embedder=embedder)
    )
    result = updater.update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED and MOVED in home.facts()
    assert [c.name for c in model.calls] == ["query_graph", "query_graph", "state_change"]
    sent = model.calls[2].messages[1].content
    assert "mug_1" in sent and "shelf_1" in sent  # "mug", "shelf" are words of the request
    retrieval = result.update.meta["retrieval"]
    assert retrieval["fallback"] == "words" and retrieval["problems"]
    assert result.usage.prompt_tokens > 0  # the two unusable answers' tokens are counted


def test_query_graph_edges_naming_undeclared_nodes_are_dropped_not_fatal(home: WorldMemory, embedder: Any) -> None:
    graph = {
        "nodes": [
            {"id": "n1", "mention": "blue mug", "type": None},
            {"id": "n2", "mention": "hall shelf", "type": None},
        ],
        "edges": [
            {"source": "n1", "target": "n9", "relation": "on"},
            {"source": "n1", "target": "n2", "relation": "on"},
        ],
    }
    model = ScriptedModel([graph, MOVE])
    updater = NLUpdater(home, model, NLUpdateConfig(fallback="none"), retriever=retriever("search", embedder=embedder))
    result = updater.update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED
    assert [c.name for c in model.calls] == ["query_graph", "state_change"]
    assert any("n9" in note for note in result.update.meta["retrieval"]["left_out"])


def test_entity_names_written_loosely_are_read_as_listed_and_nonsense_is_sent_back(home: WorldMemory) -> None:
    model = ScriptedModel([{"entities": ["<name>"]}, {"entities": ["mug_1 (dish): blue mug", "Shelf_1"]}, MOVE])
    result = NLUpdater(home, model, NLUpdateConfig(retriever="entities")).update(UTTERANCE)
    assert result.status is UpdateStatus.APPLIED
    feedback = model.calls[1].messages[-1].content
    assert "write names exactly as listed" in feedback
    assert "shelf_1" in model.calls[2].messages[1].content


def test_config_is_checked() -> None:
    with pytest.raises(Exception, match="retriever"):
        NLUpdateConfig(retriever="graph")
    with pytest.raises(Exception, match="retries"):
        NLUpdateConfig(retries=-1)
