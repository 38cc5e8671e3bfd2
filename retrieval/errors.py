"""Exceptions of the retrieval package: misuse and infrastructure, each carrying its input.

Expected outcomes (a query node with no match, a search that ran out of budget) are values
on :class:`~retrieval.matcher.MatchResult`, not exceptions.
"""

from __future__ import annotations

from collections.abc import Iterable

from kg_memory.errors import L3mpError


class RetrievalError(L3mpError):
    """Root of the retrieval package's exceptions."""


class InvalidQuery(RetrievalError):
    """A query graph (or a part of one) built from bad input."""

    def __init__(self, what: str, value: object, problem: str) -> None:
        self.what = what
        self.value = value
        super().__init__(f"invalid {what} {value!r}: {problem}")


class InvalidParameters(RetrievalError):
    """Retriever or matcher parameters that are unknown or out of range."""

    def __init__(self, retriever: str, params: object, problem: str) -> None:
        self.retriever = retriever
        self.params = params
        super().__init__(f"invalid parameters for retriever {retriever!r} {params!r}: {problem}")


class UnknownRetriever(RetrievalError):
    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        self.known = tuple(known)
        super().__init__(f"unknown retriever {name!r}; choose one of: {', '.join(self.known)}")


class EmbeddingError(RetrievalError):
    """The embedding model could not be loaded or returned something unusable."""

    def __init__(self, model: str, problem: str) -> None:
        self.model = model
        super().__init__(f"embedding model {model!r}: {problem}")
