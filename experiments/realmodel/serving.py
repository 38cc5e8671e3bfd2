"""The model a lane reads with: a packaged model's llama.cpp server started for it, the client the
product builds for that server, or the lane's cassette (recorded alongside, or replayed without a
server); and the server's time to the first token, cold and warm."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kg_memory.domain import Domain
from l3mp.llm import CassettePlayer, CassetteRecorder, LanguageModel, OpenAICompatibleModel
from l3mp.llm.base import Completion, Message
from l3mp.llm.local import LocalServer, free_port, packaged_model
from l3mp.pipelines.ranking import choice_messages
from l3mp.prompts.cache import first_token_client, measure_cache
from l3mp.settings import Settings
from l3mp.wiring import configured_model

MODES = "modes.json"  # beside the cassettes: each lane's client output mode, which shapes its schemas
TTFT_ROUNDS = 3


class Dialected:
    """A recorder or a player that answers ``mode`` as the client it stands for: the state-change
    schema's dialect follows the client's mode, so live, recorded and replayed runs ask alike."""

    def __init__(self, inner: LanguageModel, mode: Callable[[], str | None]) -> None:
        self.inner = inner
        self._mode = mode

    @property
    def mode(self) -> str | None:
        return self._mode()

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        name: str = "response",
        timeout: float | None = None,
    ) -> Completion:
        return self.inner.complete(messages, schema=schema, name=name, timeout=timeout)


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
        yield Dialected(CassetteRecorder(client, folder / f"{slug}.jsonl"), lambda: client.mode)
    finally:
        modes = _modes(folder)
        modes[slug] = client.mode
        (folder / MODES).write_text(json.dumps(modes, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def replaying(folder: Path, slug: str) -> tuple[LanguageModel, CassettePlayer]:
    """The lane's cassette as a model (and its player, to count what was left unplayed)."""
    path = folder / f"{slug}.jsonl"
    if not path.is_file():
        raise SystemExit(f"no cassette {path}: record it with --record {folder}")
    player = CassettePlayer(path)
    mode = _modes(folder).get(slug)
    return Dialected(player, lambda: mode), player


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
