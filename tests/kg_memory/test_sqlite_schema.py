"""SQLite files written by earlier versions open as they are and take up what came since."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import SURVEY_ENTITIES, SURVEY_FACTS, unique_name

from kg_memory import Delta, Fact, UpdateSource, UpdateStatus, WorldMemory
from kg_memory.stores import SQLiteStore


def test_a_file_from_before_imports_hid_their_memory_opens_and_imports(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = SQLiteStore(path)
    home = WorldMemory.create(store, unique_name("old"), "example_home")
    home.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    store.close()
    with sqlite3.connect(path) as old:  # as a file written before the column was added
        old.execute("ALTER TABLE memories DROP COLUMN importing")

    reopened = SQLiteStore(path)
    assert [m.name for m in reopened.list_memories()] == [home.name]
    kept = WorldMemory.open(reopened, home.name)
    copy = WorldMemory.import_lines(reopened, kept.export_lines(), name=unique_name("copy"))
    assert copy.version == kept.version == 1 and copy.facts() == kept.facts()
    lit = copy.apply(Delta(add={Fact.parse("(light_on lamp_1)")}), source=UpdateSource.API)
    assert lit.status is UpdateStatus.APPLIED, lit.issues
    reopened.close()
