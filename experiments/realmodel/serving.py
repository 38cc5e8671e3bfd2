"""The model a lane reads with: a packaged model's llama.cpp server started for it, the client the
product builds for that server, or the lane's cassette (recorded alongside, or replayed without a
server); the scorer a likelihood lane ranks with, likewise live, recorded or replayed; and the
server's time to the first token, cold and warm.

A likelihood lane's tokens are the readings' tokens it scored (the server's own counts of the cached
ranking prompt are not in a score cassette), so a replay reproduces them."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kg_memory.domain import Domain
from l3mp.llm import CassettePlayer, CassetteRecorder, LanguageModel, OpenAICompatibleModel
from l3mp.llm.base import Deadline, Usage
from l3mp.llm.cassette import ScorePlayer, ScoreRecorder
from l3mp.llm.local import LocalServer, free_port, packaged_model
from l3mp.llm.scoring import OpenAICompatibleScorer, Scores, TextScorer
from l3mp.pipelines.ranking import choice_messages
from l3mp.prompts.cache import first_token_client, measure_cache
from l3mp.settings import Settings
from l3mp.wiring import configured_model

MODES = "modes.json"  # beside the cassettes: each lane's client output mode, which shapes its schemas
SCORES = ".scores.jsonl"  # a lane's score cassette: its slug, then this
TTFT_ROUNDS = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoredTokens:
    """``inner``'s scores, their usage the continuation tokens scored: the same live and replayed."""

    inner: TextScorer

    def score(self, prompt: str, continuations: Sequence[str], *, deadline: Deadline) -> Scores:
        scores = self.inner.score(prompt, continuations, deadline=deadline)
        return replace(scores, usage=Usage(sum(scores.tokens), 0))


def server_for(name: str, threads: int, *, scoring: bool | None = None) -> LocalServer:
    """The server ``l3mp model serve`` starts for a packaged model (its context, and scoring as it
    defaults), on a free port with ``threads`` threads."""
    record = packaged_model(name)
    on = record.scores_by_default(record.ctx) if scoring is None else scoring
    return LocalServer.of(record, port=free_port(), threads=threads, scoring=on)


def product_client(server: LocalServer) -> OpenAICompatibleModel:
    """The client the product wires for a local model: the settings' defaults, pointed at ``server``."""
    model = configured_model(Settings(llm_base_url=server.base_url, llm_model=server.alias))
    assert isinstance(model, OpenAICompatibleModel)
    return model


def product_scorer(client: OpenAICompatibleModel) -> OpenAICompatibleScorer:
    """The scorer the likelihood ranker builds for ``client``: its server's /v1/score."""
    return OpenAICompatibleScorer(client.base_url, client.model)


def client_settings(client: OpenAICompatibleModel) -> dict[str, Any]:
    """What a results file says about the client."""
    return {
        "output": client.output,
        "mode": client.mode,
        "stream": client.stream,
        "max_tokens": client.max_tokens,
        "timeout": client.timeout,
        "max_retries": client.max_retries,
        "temperature": client.temperature,
    }


@contextmanager
def recording(client: OpenAICompatibleModel, folder: Path, slug: str) -> Iterator[LanguageModel]:
    """``client`` with its traffic recorded to ``folder/slug.jsonl``, its final mode kept in :data:`MODES`."""
    try:
        yield CassetteRecorder(client, folder / f"{slug}.jsonl")
    finally:
        modes = _modes(folder)
        modes[slug] = client.mode
        (folder / MODES).write_text(json.dumps(modes, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def recording_scores(scorer: TextScorer, folder: Path, slug: str) -> TextScorer:
    """``scorer`` with its scores recorded to the lane's score cassette."""
    return ScoreRecorder(scorer, folder / f"{slug}{SCORES}")


def replaying(folder: Path, slug: str) -> CassettePlayer:
    """The lane's cassette as a model, asking in the recorded client's mode (and counting what is left
    unplayed)."""
    path = folder / f"{slug}.jsonl"
    if not path.is_file():
        raise SystemExit(f"no cassette {path}: record it with --record {folder}")
    return CassettePlayer(path, mode=_modes(folder).get(slug))


def replaying_scores(folder: Path, slug: str) -> ScorePlayer:
    path = folder / f"{slug}{SCORES}"
    if not path.is_file():
        raise SystemExit(f"no score cassette {path}: record it with --record {folder}")
    return ScorePlayer(path)


def _modes(folder: Path) -> dict[str, str | None]:
    path = folder / MODES
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def time_to_first_token(server: LocalServer, domain: Domain, reports: Sequence[str]) -> dict[str, Any]:
    """Seconds to the first token of the choosing reader's prompt: its fixed system message new to the
    server (cold), then again with another report (warm); median of a few rounds."""
    if len(reports) < 2 * TTFT_ROUNDS:
        raise ValueError(f"need {2 * TTFT_ROUNDS} reports for {TTFT_ROUNDS} rounds, got {len(reports)}")
    system, *_ = choice_messages(domain, "", ["(nothing)"])
    tails = [(reports[2 * n], reports[2 * n + 1]) for n in range(TTFT_ROUNDS)]
    client = first_token_client(server.base_url, server.alias)
    try:
        rounds = measure_cache(client, system.content, [(f"Report: {a}", f"Report: {b}") for a, b in tails])
    finally:
        client.close()
    return {
        "rounds": TTFT_ROUNDS,
        "cold_s": round(statistics.median(r.cold for r in rounds), 3),
        "warm_s": round(statistics.median(r.warm for r in rounds), 3),
        "each": [{"cold_s": round(r.cold, 3), "warm_s": round(r.warm, 3)} for r in rounds],
    }
