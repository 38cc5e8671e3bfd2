"""The prompts' static prefix, cached by the real llama.cpp server (SmolLM2-135M, 127.0.0.1 only).

Time to the first token is compared within each test, on the same machine and server, round by round
(cold and warm interleaved), so a busy machine slows both sides alike; no absolute threshold.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kg_memory.domain import Domain, DomainRegistry
from l3mp.llm import OpenAICompatibleModel
from l3mp.llm.local import LocalServer
from l3mp.prompts import QueryGraphInput, StateChangeInput, query_graph, state_change
from l3mp.prompts.cache import first_token_client, first_token_seconds, measure_cache, with_prefix

pytestmark = pytest.mark.slow

ROUNDS = 5
TAILS = [(f"Update: Alice moved mug_{i} to the table.", f"Update: Bob switched off lamp_{i}.") for i in range(ROUNDS)]


@pytest.fixture(scope="module")
def domain() -> Domain:
    return DomainRegistry().get("household")


@pytest.fixture
def model(local_server: LocalServer) -> Iterator[OpenAICompatibleModel]:
    with first_token_client(local_server.base_url, local_server.alias) as client:
        yield client


def test_a_warm_static_prefix_reaches_the_first_token_sooner_than_a_cold_one(
    model: OpenAICompatibleModel, domain: Domain
) -> None:
    """The state-change prompt's system message (hundreds of tokens), new to the server (a nonce leads
    it) and then again with another update: the warm call evaluates the tail only."""
    prefix = state_change.system(domain)
    rounds = measure_cache(model, prefix, TAILS)
    faster = [r for r in rounds if r.warm < r.cold / 2]  # a margin relative to the round's own cold time
    assert len(faster) > ROUNDS // 2, rounds


def test_calls_of_one_update_share_their_leading_text(model: OpenAICompatibleModel, domain: Domain) -> None:
    """The state change after the query graph (same domain text first) against after an unrelated prompt."""
    extraction = query_graph.render(QueryGraphInput(domain, "Alice moved the mug to the table."))
    wins = 0
    for index, (tail, _) in enumerate(TAILS):
        change = state_change.render(StateChangeInput(domain, tail.removeprefix("Update: "), (), ()))
        first_token_seconds(model, with_prefix(f"An unrelated prompt {index}.", "Hello.", nonce=str(index)))
        after_unrelated = first_token_seconds(model, change)
        first_token_seconds(model, extraction)
        after_query_graph = first_token_seconds(model, change)
        wins += after_query_graph < after_unrelated
    assert wins > ROUNDS // 2
