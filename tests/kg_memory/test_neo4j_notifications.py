"""What the Neo4j server says about the store's queries stays out of the user's terminal.

The store's queries read properties that only some relations and facts have (a function's value),
so on a database without them the server warns of an unknown property on every read; the driver
logs each warning, which reaches stderr wherever nothing configures logging (a script, a notebook)."""

from __future__ import annotations

import logging

import pytest

from kg_memory.stores import Neo4jStore

# a property no entity of any test has: the server warns about it on every database
UNKNOWN = "l3mp_never_a_property"


def test_the_servers_unknown_property_warnings_are_not_sent(
    neo4j_store: Neo4jStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="neo4j")
    with neo4j_store._driver.session(database=neo4j_store._database) as session:
        summary = session.run(f"MATCH (e:Entity) RETURN e.{UNKNOWN} AS value LIMIT 1").consume()
    assert list(summary.summary_notifications) == []
    assert [r.getMessage() for r in caplog.records if r.name == "neo4j.notifications"] == []
