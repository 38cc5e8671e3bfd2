"""Retrieval with a language model in the loop (Alg. 3 and 4, line 1).

R- needs no model. For R+ the model picks entities from the memory's list; for RS it writes the
query graph that the search matches. Both answers are read with bounded re-prompts; a model that
never gives a usable answer yields problems, not an exception, so the caller can record them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kg_memory.memory import WorldMemory
from l3mp.llm.base import LanguageModel, Message
from l3mp.pipelines.exchange import AnswerProblem, Exchange, ask_parsed
from l3mp.prompts import EntitySelectionInput, QueryGraphInput, entity_selection, query_graph
from retrieval import Context, QueryGraph, RetrievalError, Retriever


@dataclass(frozen=True, slots=True)
class Retrieved:
    """The context, or the problems that kept the model from pointing at one; with the costs."""

    context: Context | None
    exchange: Exchange | None  # the model conversation, if the retriever needed one
    seconds: float  # wall time of the whole stage, model included
    problems: tuple[str, ...] = ()

    def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = {"seconds": round(self.seconds, 6)}
        if self.context is not None:
            context = self.context
            stats |= {"retriever": context.retriever, **context.sizes(), "truncated": context.truncated}
            if context.missing:
                stats["missing"] = list(context.missing)
        if self.exchange is not None:
            stats["model"] = self.exchange.stats()
        return stats


def _entity_names(data: Any) -> list[str]:
    names = data.get("entities") if isinstance(data, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise AnswerProblem(['answer {"entities": [...]} with a list of entity names'])
    if not names:
        raise AnswerProblem(["name at least one entity the request concerns"])
    return names


def _query(data: Any) -> QueryGraph:
    try:
        graph = QueryGraph.from_json(data)
    except RetrievalError as exc:
        raise AnswerProblem([str(exc)]) from exc
    if not graph.nodes:
        raise AnswerProblem(["the graph has no nodes: add one for each thing the request mentions"])
    return graph


def _ask_entities(memory: WorldMemory, exchange_for: _Start, text: str, retries: int) -> _Asked:
    inputs = EntitySelectionInput(memory.domain, text, tuple(memory.entities().values()))
    exchange = exchange_for(entity_selection.render(inputs), entity_selection.SCHEMA, entity_selection.NAME)
    names = ask_parsed(exchange, _entity_names, retries)
    return exchange, None if names.value is None else {"names": names.value}, names.problems


def _ask_query(memory: WorldMemory, exchange_for: _Start, text: str, retries: int) -> _Asked:
    inputs = QueryGraphInput(memory.domain, text)
    exchange = exchange_for(query_graph.render(inputs), query_graph.SCHEMA, query_graph.NAME)
    graph = ask_parsed(exchange, _query, retries)
    return exchange, None if graph.value is None else {"query": graph.value}, graph.problems


_Start = Callable[[list[Message], Mapping[str, Any], str], Exchange]
_Asked = tuple[Exchange, dict[str, Any] | None, tuple[str, ...]]
# What each retriever needs from the model; R- (``full``) needs nothing.
_REQUESTS: dict[str, Callable[[WorldMemory, _Start, str, int], _Asked]] = {
    "entities": _ask_entities,
    "search": _ask_query,
}


class ModelRetrieval:
    """Runs a retriever, asking the model for what it needs (entity names, a query graph)."""

    def __init__(self, retriever: Retriever, model: LanguageModel, *, retries: int = 2) -> None:
        self.retriever = retriever
        self.model = model
        self.retries = retries

    def _exchange(self, messages: list[Message], schema: Mapping[str, Any], name: str) -> Exchange:
        return Exchange(self.model, messages, schema, name)

    def retrieve(self, memory: WorldMemory, text: str) -> Retrieved:
        start = time.perf_counter()
        request = _REQUESTS.get(self.retriever.name)
        if request is None:
            return Retrieved(self.retriever.retrieve(memory), None, time.perf_counter() - start)
        exchange, arguments, problems = request(memory, self._exchange, text, self.retries)
        if arguments is None:
            return Retrieved(None, exchange, time.perf_counter() - start, problems)
        context = self.retriever.retrieve(memory, **arguments)
        return Retrieved(context, exchange, time.perf_counter() - start)
