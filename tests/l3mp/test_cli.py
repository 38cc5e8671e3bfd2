"""The ``l3mp`` command: export/import, listing and clear errors (the demo is in test_daemon.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from l3mp.cli import main

MEMORY = "home"


def test_export_then_import_under_a_new_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.db"
    assert main(["--db", str(db), "init", MEMORY, "--domain", "household", "--sim-home", "2"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "export", MEMORY]) == 0
    exported = tmp_path / "home.json"
    exported.write_text(capsys.readouterr().out)
    data = json.loads(exported.read_text())
    assert data["memory"]["name"] == MEMORY and data["history"]
    assert main(["--db", str(db), "import", str(exported), "--name", "copy"]) == 0
    assert main(["--db", str(db), "memories"]) == 0
    assert "copy" in capsys.readouterr().out
    assert main(["--db", str(db), "state", "copy", "--json"]) == 0
    copied = json.loads(capsys.readouterr().out)
    assert main(["--db", str(db), "state", MEMORY, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["facts"] == copied["facts"]


def test_unknown_memory_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "x.db"), "state", "attic"]) == 1
    assert "unknown memory 'attic'" in capsys.readouterr().err
