"""An import's checkpoints, encoded from the texts kept between them, are the bytes
``Checkpoint.encode`` makes, and the imported memory's past states are the original's."""

from __future__ import annotations

from pathlib import Path

from kg_memory import Checkpoint, Delta, DomainRegistry, Entity, Fact, UpdateSource, WorldMemory
from kg_memory.stores import SQLiteStore, _sqlite_log
from kg_memory.stores._common import UPDATE_COLUMNS, update_row
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS

F = Fact.parse


def test_encoded_checkpoints_are_the_bytes_checkpoint_encode_makes() -> None:
    entities = (
        Entity("cup_1", "dish", "tasse à café", {"weight": 0.25, "fragile": True, "n": 3, "colour": 'blue "navy"'}),
        Entity("lamp_1", "light"),
    )
    facts = frozenset({F("(on cup_1 table_1)"), F("(light_on lamp_1)"), F("(= (distance a b) 4.5)"), F("(done)")})
    first = Checkpoint(250, entities, facts)
    later = Checkpoint(500, entities, facts - {F("(light_on lamp_1)")} | {F("(on cup_1 shelf_1)")})
    other = Checkpoint(750, (*entities, Entity("book_1", "item")), frozenset())
    for checkpoint in (first, later, other, first):  # kept texts reused, then replaced, then again
        assert _sqlite_log.encoded_checkpoint(checkpoint) == checkpoint.encode()
        assert Checkpoint.decode(_sqlite_log.encoded_checkpoint(checkpoint)) == checkpoint


def test_an_imported_history_has_the_same_past_states(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "past.db", DomainRegistry(), checkpoint_every=3)
    home = WorldMemory.create(store, "home", "example_home")
    home.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    for place in ("shelf_1", "sink_1", "table_1", "shelf_1", "sink_1", "table_1", "shelf_1"):
        (now,) = home.facts("on", "mug_1")
        home.apply(Delta(remove={now}, add={F(f"(on mug_1 {place})")}), source=UpdateSource.API)
    copy = WorldMemory.import_lines(store, home.export_lines(), name="copy")
    for version in range(home.version + 1):
        assert copy.state_at(version).facts == home.state_at(version).facts
    nearest = [store.nearest_checkpoint("copy", v) for v in (3, 6, 8)]
    assert [c.version if c else None for c in nearest] == [3, 6, 6]


def test_an_imports_rows_are_the_text_every_write_stores(tmp_path: Path) -> None:
    """Rows an import writes hold the text ``update_row`` makes for any update (the export's
    fast path re-encodes that text)."""
    store = SQLiteStore(tmp_path / "rows.db", DomainRegistry())
    home = WorldMemory.create(store, "home", "example_home")
    home.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    home.apply(Delta(add={F("(on mug_1 sink_1)")}), source=UpdateSource.NL, input="the mug is in the sink")
    home.apply(Delta(), source=UpdateSource.SENSOR, meta={"seen": ["mug_1"]})
    home.apply(
        Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")}),
        source=UpdateSource.API,
        input="« déplacé »",
        meta={"verified": False, "ratio": 0.5},
    )
    history = home.history()
    assert {u.status.value for u in history} == {"applied", "rejected", "noop"}
    for update in history:
        row = update_row(update)
        assert _sqlite_log.loaded_row(update) == tuple(row[c] for c in UPDATE_COLUMNS)
