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


def test_a_file_from_before_latest_times_and_sightings_opens_and_answers_by_time_and_sighting(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = SQLiteStore(path)
    home = WorldMemory.create(store, unique_name("old"), "example_home")
    home.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    for lit in (True, False, True):
        lamp = Fact.parse("(light_on lamp_1)")
        home.apply(Delta(add={lamp}) if lit else Delta(remove={lamp}), source=UpdateSource.API)
    seen = home.apply(Delta(), source=UpdateSource.SENSOR, meta={"seen": ["lamp_1"]})
    history = home.history()
    store.close()
    with sqlite3.connect(path) as old:  # as a file written before them, with the indexes it had instead
        old.execute("DROP INDEX updates_bound")
        old.execute("ALTER TABLE updates DROP COLUMN mts")
        old.execute("DROP TABLE sightings")
        old.execute("CREATE INDEX touches_time ON touches (memory_id, entity, ts)")
        old.execute("CREATE INDEX touches_seen ON touches (memory_id, entity, seq) WHERE seen = 1")

    reopened = SQLiteStore(path)
    kept = WorldMemory.open(reopened, home.name)
    since = history[2].time
    assert [u.id for u in kept.query_history(entity="lamp_1", since=since)] == [u.id for u in history[2:]]
    assert kept.last_seen("lamp_1") == seen and kept.last_seen("mug_1") == history[1]  # the survey's
    reopened.close()
    with sqlite3.connect(path) as new:
        indexes = {name for (name,) in new.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        latest = [mts for (mts,) in new.execute("SELECT mts FROM updates ORDER BY memory_id, seq")]
    assert not {"touches_time", "touches_seen"} & indexes and "updates_bound" in indexes
    assert latest == sorted(latest) and latest[-1] > 0
