"""Retrieval with a language model in the loop (Alg. 3 and 4, line 1).

R- needs no model. For R+ the model picks entities from the memory's list; for RS it writes the
query graph that the search matches. Both answers are read with bounded re-prompts; a model that
never gives a usable answer yields problems, not an exception, so the caller can record them.

Real models answer loosely, so the answers are read for what is usable in them: names written as
listed in the prompt (``mateo_1 (perishable): ...`` is ``mateo_1``), the query graph's nodes
without the edges that name undeclared nodes. When RS still gets no usable query graph, or one that
matches nothing, a fallback (``fallback``) finds a bounded context another way instead of giving up.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from kg_memory.errors import L3mpError
from kg_memory.memory import WorldMemory
from l3mp.llm.base import Deadline, LanguageModel, Message
from l3mp.pipelines.conversation import Exchange, ask_parsed
from l3mp.pipelines.errors import AnswerProblem
from l3mp.prompts import EntitySelectionInput, QueryGraphInput, entity_selection, query_graph
from retrieval import Context, QueryGraph, RetrievalError, Retriever, read_answer
from retrieval.retrievers import EntityParams, EntityRetriever

Fallback = Literal["entities", "words", "none"]
FALLBACKS: tuple[str, ...] = ("entities", "words", "none")
_WORD = re.compile(r"[a-z0-9]+")
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,99}")
# Words too common in requests to point at an entity.
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "from",
        "with",
        "that",
        "this",
        "has",
        "have",
        "was",
        "were",
        "are",
        "not",
        "now",
        "its",
        "it's",
        "into",
        "onto",
        "out",
        "off",
        "over",
        "under",
        "back",
        "has",
        "been",
        "there",
        "their",
        "they",
        "them",
        "she",
        "her",
        "his",
        "him",
        "you",
        "your",
        "our",
        "put",
        "moved",
        "took",
        "left",
    ]
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Retrieved:
    """The context, or the problems that kept the model from pointing at one; with the costs."""

    context: Context | None
    exchange: Exchange | None  # the model conversation, if the retriever needed one
    seconds: float  # wall time of the whole stage, model included
    problems: tuple[str, ...] = ()
    fallback: str | None = None  # the fallback that found the context, if the model's answer did not
    notes: tuple[str, ...] = ()  # what was left out of the model's answer
    extra: tuple[Exchange, ...] = field(default=())  # a fallback's own model conversation

    @property
    def exchanges(self) -> tuple[Exchange, ...]:
        return (*((self.exchange,) if self.exchange is not None else ()), *self.extra)

    def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = {"seconds": round(self.seconds, 6)}
        if self.context is not None:
            context = self.context
            stats |= {"retriever": context.retriever, **context.sizes(), "truncated": context.truncated}
            if context.missing:
                stats["missing"] = list(context.missing)
        if self.exchange is not None:
            stats["model"] = self.exchange.stats()
        if self.fallback is not None:
            stats["fallback"] = self.fallback
            stats["problems"] = list(self.problems)
        if self.notes:
            stats["left_out"] = list(self.notes)
        for extra in self.extra:
            stats["fallback_model"] = extra.stats()
        return stats


def _entity_reader(memory: WorldMemory) -> Callable[[Any], list[str]]:
    known = set(memory.entities())

    def read(data: Any) -> list[str]:
        names = data.get("entities") if isinstance(data, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise AnswerProblem(['answer {"entities": [...]} with a list of entity names'])
        written = list(dict.fromkeys(_as_listed(n) for n in names))
        if any(n in known for n in written):
            # the unknown ones that read as names go along, so the context reports them missing
            return [n for n in written if n in known or _NAME.fullmatch(n)]
        if not names:
            raise AnswerProblem(["name at least one entity the request concerns"])
        shown = ", ".join(repr(n) for n in names[:5])
        raise AnswerProblem([f"none of {shown} is an entity of the list: write names exactly as listed, e.g. mug_1"])

    return read


def _as_listed(name: str) -> str:
    """``mateo_1 (perishable): label`` and ``"Mug_1"`` as the bare name the list shows."""
    return name.split("(")[0].split(":")[0].strip().strip("'\"`<>").lower()


@dataclass(frozen=True, slots=True)
class _Query:
    graph: QueryGraph
    dropped: tuple[str, ...]


def _query(data: Any) -> _Query:
    try:
        read = read_answer(data)
    except RetrievalError as exc:
        raise AnswerProblem([str(exc)]) from exc
    return _Query(read.graph, read.dropped)


_Start = Callable[[list[Message], Mapping[str, Any], str], Exchange]


class ModelRetrieval:
    """Runs a retriever, asking the model for what it needs (entity names, a query graph)."""

    def __init__(
        self,
        retriever: Retriever,
        model: LanguageModel,
        *,
        retries: int = 2,
        fallback: Fallback = "words",
        fallback_facts: int = 80,
    ) -> None:
        self.retriever = retriever
        self.model = model
        self.retries = retries
        self.fallback = fallback
        self.fallback_facts = fallback_facts

    def retrieve(
        self,
        memory: WorldMemory,
        text: str,
        *,
        deadline: Deadline | None = None,
        budget: float = 0.0,
        what: str = "update",
    ) -> Retrieved:
        """The context for ``text``. Raises DeadlinePassed when ``deadline`` passes during a model call."""
        start = time.perf_counter()

        def exchange_for(messages: list[Message], schema: Mapping[str, Any], name: str) -> Exchange:
            return Exchange(
                model=self.model,
                messages=messages,
                schema=schema,
                name=name,
                deadline=deadline,
                budget=budget,
                what=what,
            )

        if self.retriever.name == "entities":
            exchange, names, problems = self._ask_entities(memory, exchange_for, text)
            chosen = None if names is None else self._run(lambda: self.retriever.retrieve(memory, names=names))
            return Retrieved(context=chosen, exchange=exchange, seconds=time.perf_counter() - start, problems=problems)
        if self.retriever.name != "search":
            return Retrieved(
                context=self.retriever.retrieve(memory), exchange=None, seconds=time.perf_counter() - start
            )
        inputs = QueryGraphInput(memory.domain, text)
        exchange = exchange_for(query_graph.render(inputs), query_graph.schema(inputs), query_graph.NAME)
        answer = ask_parsed(exchange, _query, self.retries)
        notes: tuple[str, ...] = ()
        problems = answer.problems
        context: Context | None = None
        if answer.value is not None:
            graph, notes = replace(answer.value.graph, text=text), answer.value.dropped
            context = self._run(lambda: self.retriever.retrieve(memory, query=graph))
            if context is not None and not context.entities:
                problems, context = ("the query graph matched no entity of the memory",), None
        if context is not None or self.fallback == "none":
            return Retrieved(
                context=context, exchange=exchange, seconds=time.perf_counter() - start, problems=problems, notes=notes
            )
        return self._fall_back(memory, text, exchange, exchange_for, start, problems, notes)

    def _fall_back(
        self,
        memory: WorldMemory,
        text: str,
        exchange: Exchange,
        exchange_for: _Start,
        start: float,
        problems: tuple[str, ...],
        notes: tuple[str, ...],
    ) -> Retrieved:
        bounded = EntityRetriever(EntityParams(hops=1, max_facts=self.fallback_facts))
        extra: tuple[Exchange, ...] = ()
        if self.fallback == "entities":
            selection, names, more = self._ask_entities(memory, exchange_for, text)
            extra, problems = (selection,), problems + more
        else:
            names = _sharing_words(memory, text)
            if not names:
                problems += ("no entity's name or label shares a word with the request",)
        context = None if not names else self._run(lambda: bounded.retrieve(memory, names=names))
        seconds = time.perf_counter() - start
        return Retrieved(
            context=context,
            exchange=exchange,
            seconds=seconds,
            problems=problems,
            fallback=self.fallback,
            notes=notes,
            extra=extra,
        )

    def _ask_entities(
        self, memory: WorldMemory, exchange_for: _Start, text: str
    ) -> tuple[Exchange, list[str] | None, tuple[str, ...]]:
        inputs = EntitySelectionInput(memory.domain, text, tuple(memory.entities().values()))
        exchange = exchange_for(entity_selection.render(inputs), entity_selection.schema(inputs), entity_selection.NAME)
        names = ask_parsed(exchange, _entity_reader(memory), self.retries)
        return exchange, names.value, names.problems

    @staticmethod
    def _run(retrieve: Callable[[], Context]) -> Context | None:
        """A retriever's context; None if it refuses the model's answer (names, a query it cannot use)."""
        try:
            return retrieve()
        except L3mpError:
            return None


def _sharing_words(memory: WorldMemory, text: str) -> list[str]:
    """Entities whose name or label shares a word (three letters or more) with the request."""
    words = {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _STOP}
    found = []
    for name, entity in sorted(memory.entities().items()):
        own = set(_WORD.findall(f"{name.replace('_', ' ')} {entity.label}".lower()))
        if own & words:
            found.append(name)
    return found
