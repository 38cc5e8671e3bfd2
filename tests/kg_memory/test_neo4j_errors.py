"""How the Neo4j store words the driver's failures (no server needed: the driver connects on first use)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neo4j.exceptions import AuthError, ServiceUnavailable

from kg_memory.errors import StoreUnavailable
from kg_memory.stores import Neo4jStore


@pytest.fixture
def store() -> Iterator[Neo4jStore]:
    store = Neo4jStore("bolt://127.0.0.1:9", ("neo4j", "wrong"))
    yield store
    store.close()


def test_a_refused_login_is_unavailable_and_says_the_login_was_refused(store: Neo4jStore) -> None:
    refused = pytest.raises(StoreUnavailable, match="during read: authentication failed")
    with refused as raised, store._errors("read"):
        raise AuthError("The client is unauthorized due to authentication failure.")
    assert raised.value.login_refused and raised.value.backend == "neo4j"


def test_a_database_nobody_answers_is_unavailable_with_the_login_not_in_question(store: Neo4jStore) -> None:
    with pytest.raises(StoreUnavailable, match="during read: nobody home") as raised, store._errors("read"):
        raise ServiceUnavailable("nobody home")
    assert not raised.value.login_refused
