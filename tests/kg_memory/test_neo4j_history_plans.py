"""Neo4j's plans for the history queries seek an index rather than scan (EXPLAIN)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kg_memory.history import HistoryQuery
from kg_memory.stores import Neo4jStore
from kg_memory.stores._neo4j_log import CHECKPOINT_QUERY, DUPLICATES_QUERY, REPLAY_QUERY, query_text


def _operators(plan: Any) -> list[str]:
    found = [plan["operatorType"]]
    for child in plan.get("children", ()):
        found += _operators(child)
    return found


def _explain(store: Neo4jStore, text: str, **params: Any) -> list[str]:
    with store._driver.session() as session:
        summary = session.run("EXPLAIN " + text, params).consume()
    assert summary.plan is not None
    return [op.split("@")[0] for op in _operators(summary.plan)]


QUERIES = [
    HistoryQuery(entity="mug_1", since=datetime(2025, 1, 1, tzinfo=UTC), limit=100),
    HistoryQuery(entity="mug_1", seen_only=True, newest_first=True, limit=1),
    HistoryQuery(since=datetime(2025, 1, 1, tzinfo=UTC), until=datetime(2025, 1, 8, tzinfo=UTC)),
    HistoryQuery(source="sensor", status="applied", after=10),
]


@pytest.mark.parametrize("query", QUERIES, ids=["entity-week", "last-seen", "time-range", "source-status"])
def test_history_queries_seek_an_index(neo4j_store: Neo4jStore, query: HistoryQuery) -> None:
    text, params = query_text(query)
    operators = _explain(neo4j_store, text, memory="m", **params)
    assert any("IndexSeek" in op for op in operators), operators
    assert not any(op in ("AllNodesScan", "NodeByLabelScan") for op in operators), operators


@pytest.mark.parametrize(
    "text", [CHECKPOINT_QUERY, REPLAY_QUERY, DUPLICATES_QUERY], ids=["checkpoint", "replay", "duplicate-ids"]
)
def test_replay_and_import_queries_seek_an_index(neo4j_store: Neo4jStore, text: str) -> None:
    operators = _explain(neo4j_store, text, memory="m", version=5, after=1, upto=9, ids=["a"])
    assert any("IndexSeek" in op for op in operators), operators
    assert not any(op in ("AllNodesScan", "NodeByLabelScan") for op in operators), operators
