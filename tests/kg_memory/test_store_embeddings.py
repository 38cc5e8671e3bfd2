"""Entity embeddings in the store, run against every backend (SQLite and a real Neo4j).

Embeddings are a cache of derived data keyed by the hash of the embedded text: storing
them is not an update, so the memory's version and history stay as they were.
"""

from __future__ import annotations

import math
import sqlite3
from array import array
from collections.abc import Sequence

import neo4j
import pytest
from conftest import SURVEY_ENTITIES, SURVEY_FACTS, neo4j_auth, neo4j_uri, unique_name

from kg_memory import GraphStore, InvalidValue, NotApplicable, UnknownMemory, WorldMemory
from kg_memory.stores import Neo4jStore, SQLiteStore


def f32(values: Sequence[float]) -> tuple[float, ...]:
    """What a stored vector reads back as: float32 values."""
    return tuple(array("f", values))


def unit(dim: int, *hot: int) -> list[float]:
    """A vector with 1.0 at the ``hot`` positions (plus a little everywhere, to be non-trivial)."""
    return [1.0 if i in hot else 0.01 * (i % 7) for i in range(dim)]


def stored_rows(store: GraphStore, memory: str) -> int:
    """Embeddings of ``memory`` left in the database, counted behind the store's back."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as conn:
            row = conn.execute(
                "SELECT count(*) FROM embeddings e LEFT JOIN memories m ON m.id = e.memory_id "
                "WHERE m.name = ? OR m.id IS NULL",
                (memory,),
            ).fetchone()
        return int(row[0])
    with neo4j.GraphDatabase.driver(neo4j_uri(), auth=neo4j_auth()) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (e:Entity {memory: $memory}) WHERE e.embedding IS NOT NULL RETURN count(e) AS n", memory=memory
        )
    return int(records[0]["n"])


def another_home(store: GraphStore) -> WorldMemory:
    """A second memory with the same entity names as ``home``."""
    other = WorldMemory.create(store, unique_name("other"), "example_home")
    update = other.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS)
    assert update.status.value == "applied", update.issues
    return other


# -- round trip ----------------------------------------------------------------------------


def test_put_then_get_round_trips_at_float32_precision(store: GraphStore, home: WorldMemory) -> None:
    mug, table = [0.1, -0.2, 0.3, 1e-3], [1.0, 2.0, 3.0, 4.0]
    store.put_embeddings(home.name, {"mug_1": ("hash-mug", mug), "table_1": ("hash-table", table)})
    got = store.embeddings(home.name)
    assert got == {"mug_1": ("hash-mug", f32(mug)), "table_1": ("hash-table", f32(table))}
    assert got["mug_1"][1] == pytest.approx(mug, rel=1e-6)
    assert all(type(x) is float for x in got["mug_1"][1])


def test_a_memory_starts_without_embeddings(store: GraphStore, home: WorldMemory) -> None:
    assert store.embeddings(home.name) == {}
    store.put_embeddings(home.name, {})
    assert store.embeddings(home.name) == {}


def test_replacing_keeps_the_latest(store: GraphStore, home: WorldMemory) -> None:
    store.put_embeddings(home.name, {"mug_1": ("old", [1.0, 0.0]), "book_1": ("book", [0.0, 1.0])})
    store.put_embeddings(home.name, {"mug_1": ("new", [0.5, 0.5])})
    assert store.embeddings(home.name) == {"mug_1": ("new", (0.5, 0.5)), "book_1": ("book", (0.0, 1.0))}


def test_filter_by_names(store: GraphStore, home: WorldMemory) -> None:
    rows = {name: (f"h-{name}", [float(i + 1), 1.0]) for i, name in enumerate(["mug_1", "book_1", "kitchen"])}
    store.put_embeddings(home.name, rows)
    assert set(store.embeddings(home.name, ["mug_1", "kitchen", "nobody", "hall"])) == {"mug_1", "kitchen"}
    assert store.embeddings(home.name, []) == {}
    assert store.embeddings(home.name, iter(["book_1"])) == {"book_1": ("h-book_1", (2.0, 1.0))}


# -- refusals: nothing is written ------------------------------------------------------------


def test_unknown_entities_are_named_and_nothing_is_written(store: GraphStore, home: WorldMemory) -> None:
    store.put_embeddings(home.name, {"mug_1": ("before", [1.0, 0.0])})
    rows = {"mug_1": ("after", [0.0, 1.0]), "ghost": ("g", [1.0, 1.0]), "phantom": ("p", [1.0, 2.0])}
    with pytest.raises(NotApplicable, match=r"\['ghost', 'phantom'\]"):
        store.put_embeddings(home.name, rows)
    assert store.embeddings(home.name) == {"mug_1": ("before", (1.0, 0.0))}


def test_inconsistent_dimensions_are_refused_and_nothing_is_written(store: GraphStore, home: WorldMemory) -> None:
    with pytest.raises(InvalidValue, match="dimension"):
        store.put_embeddings(home.name, {"mug_1": ("a", [1.0, 0.0]), "book_1": ("b", [1.0, 0.0, 0.0])})
    assert store.embeddings(home.name) == {}
    store.put_embeddings(home.name, {"mug_1": ("a", [1.0, 0.0]), "book_1": ("b", [0.0, 1.0])})
    with pytest.raises(InvalidValue, match="dimension"):  # against what the memory keeps
        store.put_embeddings(home.name, {"mug_1": ("a3", [1.0, 0.0, 0.0]), "kitchen": ("k3", [0.0, 0.0, 1.0])})
    assert set(store.embeddings(home.name)) == {"mug_1", "book_1"}
    # a new model: replacing every stored embedding may change the dimension
    store.put_embeddings(home.name, {"mug_1": ("a3", [1.0, 0.0, 0.0]), "book_1": ("b3", [0.0, 1.0, 0.0])})
    assert {len(v) for _, v in store.embeddings(home.name).values()} == {3}


@pytest.mark.parametrize(
    ("text_hash", "vector"),
    [("h", []), ("h", [0.0, 0.0]), ("h", [1.0, math.nan]), ("h", [math.inf, 1.0]), ("h", ["x"]), ("", [1.0])],
    ids=["empty", "zero", "nan", "inf", "not-numbers", "no-hash"],
)
def test_bad_vectors_and_hashes_are_refused(
    store: GraphStore, home: WorldMemory, text_hash: str, vector: list[float]
) -> None:
    with pytest.raises(InvalidValue):
        store.put_embeddings(home.name, {"book_1": ("ok", [1.0]), "mug_1": (text_hash, vector)})
    assert store.embeddings(home.name) == {}


def test_unknown_memory_is_named(store: GraphStore) -> None:
    with pytest.raises(UnknownMemory, match="no_such_memory"):
        store.embeddings("no_such_memory")
    with pytest.raises(UnknownMemory, match="no_such_memory"):
        store.put_embeddings("no_such_memory", {"mug_1": ("h", [1.0])})


# -- isolation, deletion, versions -----------------------------------------------------------


def test_memories_are_isolated(store: GraphStore, home: WorldMemory) -> None:
    other = another_home(store)
    store.put_embeddings(home.name, {"mug_1": ("home", [1.0, 0.0])})
    store.put_embeddings(other.name, {"mug_1": ("other", [0.0, 1.0, 0.0])})  # its own dimension, too
    assert store.embeddings(home.name) == {"mug_1": ("home", (1.0, 0.0))}
    assert store.embeddings(other.name) == {"mug_1": ("other", (0.0, 1.0, 0.0))}
    store.delete_memory(other.name)
    assert store.embeddings(home.name) == {"mug_1": ("home", (1.0, 0.0))}


def test_delete_memory_removes_embeddings(store: GraphStore, home: WorldMemory) -> None:
    store.put_embeddings(home.name, {"mug_1": ("h", [1.0, 0.0]), "book_1": ("b", [0.0, 1.0])})
    assert stored_rows(store, home.name) == 2
    store.delete_memory(home.name)
    assert stored_rows(store, home.name) == 0
    WorldMemory.create(store, home.name, "example_home")
    assert store.embeddings(home.name) == {}


def test_putting_embeddings_is_not_an_update(store: GraphStore, home: WorldMemory) -> None:
    before = (home.version, [u.id for u in home.history()])
    store.put_embeddings(home.name, {"mug_1": ("h", [1.0, 0.0])})
    store.put_embeddings(home.name, {"mug_1": ("h2", [0.0, 1.0])})
    assert (home.version, [u.id for u in home.history()]) == before
    assert store.get_memory(home.name).version == before[0]


# -- nearest neighbours (optional API) ----------------------------------------------------------


@pytest.mark.parametrize("indexed", [False, True], ids=["exact-scan", "vector-index"])
def test_nearest_ranks_by_cosine_within_the_memory(store: GraphStore, home: WorldMemory, indexed: bool) -> None:
    index = store.vector_index() if isinstance(store, Neo4jStore) else None
    dim = (index[1] if index else 384) if indexed else 3
    if index and not indexed and index[1] == dim:
        dim += 1  # Neo4j answers from the index only for vectors of its dimension
    rows = {"mug_1": ("m", unit(dim, 0)), "book_1": ("b", unit(dim, 1)), "kitchen": ("k", unit(dim, 0, 1))}
    store.put_embeddings(home.name, rows)
    other = another_home(store)
    store.put_embeddings(other.name, {"table_1": ("t", unit(dim, 0))})  # as close as can be, but elsewhere
    found = store.nearest(home.name, unit(dim, 0), 2)
    assert [name for name, _ in found] == ["mug_1", "kitchen"]
    query = f32(unit(dim, 0))
    for name, score in found:
        vector = f32(rows[name][1])
        expected = sum(a * b for a, b in zip(query, vector, strict=True)) / (math.hypot(*query) * math.hypot(*vector))
        assert score == pytest.approx(expected, abs=1e-5)
    assert [n for n, _ in store.nearest(home.name, unit(dim, 1), 10)] == ["book_1", "kitchen", "mug_1"]
    assert store.nearest(home.name, unit(dim, 1), 0) == []


def test_nearest_refuses_a_query_of_another_dimension(store: GraphStore, home: WorldMemory) -> None:
    store.put_embeddings(home.name, {"mug_1": ("m", [1.0, 0.0])})
    with pytest.raises(InvalidValue, match="dimension"):
        store.nearest(home.name, [1.0, 0.0, 0.0], 1)
    with pytest.raises(InvalidValue):
        store.nearest(home.name, [0.0, 0.0], 1)
    empty = store.create_memory(unique_name("empty"), "example_home")
    assert store.nearest(empty.name, [1.0, 0.0, 0.0], 3) == []


# -- Neo4j schema ------------------------------------------------------------------------------


def test_neo4j_vector_index_exists_after_init_schema(neo4j_store: Neo4jStore) -> None:
    neo4j_store.init_schema()  # idempotent
    with neo4j.GraphDatabase.driver(neo4j_uri(), auth=neo4j_auth()) as driver:
        records, _, _ = driver.execute_query(
            "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options "
            "WHERE type = 'VECTOR' AND labelsOrTypes = ['Entity'] AND properties = ['embedding'] RETURN *"
        )
    assert len(records) == 1  # Neo4j allows one; init_schema keeps one made before, whatever its name
    index = records[0]
    config = index["options"]["indexConfig"]
    assert config["vector.similarity_function"].lower() == "cosine"
    assert neo4j_store.vector_index() == (index["name"], config["vector.dimensions"])
    if index["name"] == "l3mp_entity_embedding":
        assert config["vector.dimensions"] == 384


def test_neo4j_refuses_a_bad_index_dimension(neo4j_store: Neo4jStore) -> None:
    with pytest.raises(InvalidValue):
        neo4j_store.init_schema(embedding_dimension=0)
