"""The ``l3mp`` command on the embedded store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_memory import Fact, UpdateStatus, WorldMemory
from kg_memory.stores import SQLiteStore
from l3mp.cli import main
from l3mp.demo import MEMORY


def test_demo_applies_rejects_reverts_and_shows_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "demo.db"
    assert main(["--db", str(db), "demo"]) == 0
    out = capsys.readouterr().out
    assert "rejected" in out and "mug_1 can be in only one place" in out and "History" in out
    store = SQLiteStore(db)
    memory = WorldMemory.open(store, MEMORY)
    statuses = [u.status for u in memory.history()]
    assert statuses.count(UpdateStatus.REJECTED) == 1
    assert statuses[-1] is UpdateStatus.APPLIED and memory.history()[-1].source.value == "revert"
    assert Fact.parse("(held mug_1 robot_1)") in memory.facts()
    assert Fact.parse("(light_on ceiling_light)") in memory.facts()  # the light-off report was reverted
    store.close()
    assert main(["--db", str(db), "demo"]) == 0  # re-running starts the demo memory afresh


def test_export_then_import_under_a_new_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "demo.db"
    assert main(["--db", str(db), "demo"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "export", MEMORY]) == 0
    exported = tmp_path / "home.json"
    exported.write_text(capsys.readouterr().out)
    assert json.loads(exported.read_text())["memory"]["name"] == MEMORY
    assert main(["--db", str(db), "import", str(exported), "--name", "copy"]) == 0
    assert main(["--db", str(db), "memories"]) == 0
    assert "copy" in capsys.readouterr().out


def test_unknown_memory_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "x.db"), "state", "attic"]) == 1
    assert "unknown memory 'attic'" in capsys.readouterr().out
