"""Token counts of contexts too long for one call of the encoder (a building's full state)."""

from __future__ import annotations

import pytest

import retrieval.context as context
from retrieval import count_tokens


def test_a_long_text_counts_as_many_tokens_in_pieces_as_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n".join(f"(mug_{i}, on, table_{i % 7})" for i in range(3000))
    whole = count_tokens(text)
    monkeypatch.setattr(context, "COUNT_CHUNK", 1000)
    assert count_tokens(text) == whole > 3000
    assert count_tokens("x" * 2500) == len(context._cl100k().encode("x" * 2500))  # no newline: cut anyway
    assert count_tokens("") == 0


def test_a_building_sized_context_is_counted() -> None:
    text = "\n".join(f"(item_{i}, inside, cabinet_{i % 900})" for i in range(120_000))  # over a million characters
    assert len(text) > 1_000_000 and count_tokens(text) > 120_000
