"""Cassettes: record through a model, replay offline and deterministically, fail loudly otherwise."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from l3mp.llm import (
    CassetteError,
    CassettePlayer,
    CassetteRecorder,
    LanguageModel,
    MalformedOutput,
    Message,
    ScriptedModel,
    UnrecordedRequest,
    request_key,
)

SCHEMA = {"type": "object", "properties": {"add": {"type": "array"}}}
ASK = [Message("system", "Edit the state."), Message("user", "Jessica turned off the light")]
AGAIN = [*ASK, Message("assistant", "{}"), Message("user", "Try again")]


def record(path: Path) -> list[object]:
    inner = ScriptedModel([{"add": ["(off light)"]}, "plain text", {"add": []}, "garbage"])
    recorder = CassetteRecorder(inner, path)
    assert isinstance(recorder, LanguageModel)
    results: list[object] = [
        recorder.complete(ASK, schema=SCHEMA, name="edits"),
        recorder.complete(AGAIN),
        recorder.complete(ASK, schema=SCHEMA, name="edits"),
    ]
    with pytest.raises(MalformedOutput) as caught:
        recorder.complete(AGAIN, schema=SCHEMA)
    results.append(caught.value.text)
    return results


def replay(player: LanguageModel) -> list[object]:
    results: list[object] = [
        player.complete(ASK, schema=SCHEMA, name="edits"),
        player.complete(AGAIN),
        player.complete(ASK, schema=SCHEMA, name="edits"),
    ]
    with pytest.raises(MalformedOutput) as caught:
        player.complete(AGAIN, schema=SCHEMA)
    results.append(caught.value.text)
    return results


def test_replay_reproduces_the_recording(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    recorded = record(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    assert json.loads(lines[0])["key"] == request_key(ASK, SCHEMA, "edits")
    player = CassettePlayer(path)
    assert replay(player) == recorded
    assert player.remaining == 0
    # identical requests replay in recorded order
    assert recorded[0] != recorded[2]


def test_re_recording_a_replay_is_byte_identical(tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    record(first)
    replay(CassetteRecorder(CassettePlayer(first), second))
    assert second.read_bytes() == first.read_bytes()


def test_unrecorded_request_fails_loudly(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    record(path)
    player = CassettePlayer(path)
    other = [Message("user", "Bob opened the fridge")]
    with pytest.raises(UnrecordedRequest, match="Bob opened the fridge") as caught:
        player.complete(other)
    assert caught.value.key == request_key(other)
    with pytest.raises(UnrecordedRequest):  # same messages, different schema: a different request
        player.complete(ASK)


def test_replaying_more_often_than_recorded_fails(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    record(path)
    player = CassettePlayer(path)
    player.complete(AGAIN)
    with pytest.raises(UnrecordedRequest, match="recorded only 1 time"):
        player.complete(AGAIN)


def test_request_key_is_stable_and_order_sensitive() -> None:
    assert request_key(ASK, {"b": 1, "a": 2}) == request_key(list(ASK), {"a": 2, "b": 1})
    assert request_key(ASK) != request_key(list(reversed(ASK)))
    assert request_key(ASK, name="x") != request_key(ASK, name="y")


def test_corrupt_cassette_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"key": "k", "response": {}}\nnot json\n', encoding="utf-8")
    with pytest.raises(CassetteError, match=r"bad.jsonl:2"):
        CassettePlayer(path)


def test_scores_record_and_replay_offline_and_an_unscored_continuation_is_refused(tmp_path: Path) -> None:
    from l3mp.llm.base import Deadline, Usage
    from l3mp.llm.cassette import ScorePlayer, ScoreRecorder, UnrecordedRequest
    from l3mp.llm.scoring import Scores

    class Fixed:
        def score(self, prompt: str, continuations: Sequence[str], *, deadline: Deadline) -> Scores:
            values = tuple(-float(len(c)) for c in continuations)
            return Scores(
                logprobs=values, tokens=tuple(len(c.split()) for c in continuations), usage=Usage(), seconds=0.0
            )

    path = tmp_path / "scores.jsonl"
    recorded = ScoreRecorder(Fixed(), path).score("Report: x\nNow:", [" a b", " c"], deadline=Deadline.after(5))
    replayed = ScorePlayer(path).score("Report: x\nNow:", [" c", " a b"], deadline=Deadline.after(5))
    assert replayed.logprobs == (recorded.logprobs[1], recorded.logprobs[0]) and replayed.tokens == (1, 2)
    with pytest.raises(UnrecordedRequest):
        ScorePlayer(path).score("Report: y\nNow:", [" c"], deadline=Deadline.after(5))
