"""A real model's answers, replayed offline: the cassette of SmolLM2-135M (llama.cpp, local) answering
the update episode's first steps through RSV (`python -m experiments updates --model configured`)
goes through the same pipeline, deterministically, with no server."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from experiments.updates.episode import VARIANTS, run_episode
from kg_memory.stores.sqlite import SQLiteStore
from l3mp.llm import CassettePlayer, Completion, DeadlinePassed, Message, UnrecordedRequest
from sim import HomeSpec, generate_home

CASSETTE = Path(__file__).parents[1] / "fixtures" / "cassettes" / "smollm2-rsv" / "RSV.jsonl"


class Replay:
    """The recorded answers; a call the recording's deadline cut short was never answered, so it is not
    on the tape: replayed as that deadline passing, as it did live."""

    def __init__(self, player: CassettePlayer) -> None:
        self.player = player

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        try:
            return self.player.complete(messages, schema=schema, name=name)
        except UnrecordedRequest as exc:
            raise DeadlinePassed(180.0, "update") from exc


@pytest.mark.slow
def test_a_real_models_recorded_run_replays_offline_through_the_pipeline(tmp_path: Path) -> None:
    from retrieval import SentenceTransformerEmbedder

    if not CASSETTE.is_file():
        pytest.fail(f"missing fixture {CASSETTE}")
    steps = 10  # as recorded
    player = CassettePlayer(CASSETTE)
    rsv = [v for v in VARIANTS if v.name == "RSV"]
    store = SQLiteStore(tmp_path / "replay.db")
    try:
        (lane,) = run_episode(
            generate_home(HomeSpec(seed=0)),
            store,
            SentenceTransformerEmbedder(),
            steps=steps,
            seed=0,
            variants=rsv,
            real=lambda _variant: Replay(player),
            deadline=180.0,
        )
    finally:
        store.close()
    assert len(lane.steps) == steps
    assert {s.status for s in lane.steps} <= {"applied", "noop", "rejected"}
    assert all(s.reasons for s in lane.steps if s.status == "rejected")  # every rejection says why
    assert lane.steps[-1].violations == 0  # a real, weak model never got a rule violation written
    assert player.remaining == 0  # every recorded answer was asked for again, in order
