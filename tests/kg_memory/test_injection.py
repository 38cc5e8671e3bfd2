"""Names, labels and text that try to smuggle Cypher or SQL in: stored verbatim or rejected,
never executed, on both stores."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from faults_common import survey

from kg_memory import (
    Entity,
    Fact,
    GraphStore,
    InvalidName,
    UnknownMemory,
    UpdateStatus,
    WorldMemory,
)

# -- 5. Names, labels and text with quotes, backticks and Cypher -----------------------------

EVIL_LABEL = 'Bob\'s "mug" `x` {a:1}) DETACH DELETE n //'
EVIL_TEXTS = (
    EVIL_LABEL,
    "'); DROP TABLE entities; --",
    "x\\` }]->(m) MATCH (n) DETACH DELETE n RETURN 1 //\n☕ ünïcödé",
)
EVIL_NAMES = (
    "bob's_mug",
    'mug"1',
    "mug`x`",
    "mug_{a:1}",
    "mug_1) DETACH DELETE n //",
    "mug_1'}) MATCH (n) DETACH DELETE n //",
    "mug_1`]->() DELETE",
    "mug;drop",
    "",
)
EVIL_PREDICATES = ("on`]->() DELETE", "on'", "light_on = true DETACH DELETE e //", "on {a:1}")


@dataclass(frozen=True, kw_only=True)
class _Snapshot:
    version: int
    entities: dict[str, Entity]
    labels: dict[str, str]
    facts: frozenset[Fact]
    history: int

    @classmethod
    def of(cls, memory: WorldMemory) -> _Snapshot:
        entities = memory.entities()
        labels = {n: e.label for n, e in entities.items()}
        return cls(
            version=memory.version,
            entities=entities,
            labels=labels,
            facts=memory.facts(),
            history=len(memory.history()),
        )


def test_labels_with_cypher_fragments_are_stored_verbatim(store: GraphStore, home: WorldMemory) -> None:
    bystander = survey(store)
    before = _Snapshot.of(bystander)
    mugs = tuple(Entity(f"mug_{i + 2}", "dish", text, {"note": text, text: i}) for i, text in enumerate(EVIL_TEXTS))
    update = home.add_entities(mugs, facts={Fact("on", (m.name, "table_1")) for m in mugs}, input=EVIL_LABEL)
    assert update.status is UpdateStatus.APPLIED, update.issues

    stored = home.entities([m.name for m in mugs])
    for mug in mugs:
        assert stored[mug.name].label == mug.label
        assert dict(stored[mug.name].attrs) == dict(mug.attrs)
    assert home.history()[-1].input == EVIL_LABEL
    assert home.store.get_update(home.name, update.id).delta == update.delta

    # Hostile strings used as lookup keys are plain values: they match nothing.
    for text in EVIL_TEXTS:
        assert store.entities(home.name, [text]) == {}
        assert store.facts(home.name, entity=text) == frozenset()
        assert store.facts(home.name, predicate=text) == frozenset()
        with pytest.raises(UnknownMemory):
            store.get_memory(text)
    assert _Snapshot.of(bystander) == before


def test_names_with_cypher_fragments_are_rejected(store: GraphStore, home: WorldMemory) -> None:
    bystander = survey(store)
    before, home_before = _Snapshot.of(bystander), _Snapshot.of(home)

    for bad in EVIL_NAMES:
        with pytest.raises(InvalidName):
            Entity(bad, "dish")
        with pytest.raises(InvalidName):
            Entity("mug_2", bad)
        with pytest.raises(InvalidName):
            Fact("on", (bad, "table_1"))
        with pytest.raises(InvalidName):
            store.create_memory(bad, "example_home")
        with pytest.raises(InvalidName):
            WorldMemory.create(store, bad, "example_home")
    for bad in EVIL_PREDICATES:
        with pytest.raises(InvalidName):
            Fact(bad, ("mug_1", "table_1"))
    for text in ("(on mug_1 table_1'})", "(on`]->() mug_1 table_1)", "(on mug_1 `x`)"):
        with pytest.raises(InvalidName):
            Fact.parse(text)
    quoted = ("bob's", 'home"1', "home`x`", "home'}) DETACH DELETE m //")
    for bad in quoted:
        with pytest.raises(InvalidName):
            WorldMemory.create(store, bad, "example_home")

    # the Neo4j database is shared with tests running alongside: look for these names only
    assert not {m.name for m in store.list_memories()} & {*EVIL_NAMES, *quoted}
    assert _Snapshot.of(bystander) == before
    assert _Snapshot.of(home) == home_before
