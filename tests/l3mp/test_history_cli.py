"""``l3mp history`` queries, ``last-seen``, JSON Lines export/import and ``compact`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from l3mp.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_history_queries_export_import_and_compaction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--db", str(tmp_path / "cli.db")]
    _run(capsys, *db, "init", "home", "--domain", "household", "--sim-home", "2")
    page = json.loads(_run(capsys, *db, "history", "home", "--since", "7d", "--json"))
    # the domain's update (its constants, at version 0), then the survey
    assert [u["version"] for u in page["updates"]] == [0, 1] and page["next_cursor"] is None
    survey = page["updates"][1]
    item = survey["delta"]["new_entities"][-1]["name"]
    by_entity = json.loads(_run(capsys, *db, "history", "home", "--entity", item, "--json", "--limit", "5"))
    assert [u["id"] for u in by_entity["updates"]] == [survey["id"]]
    assert json.loads(_run(capsys, *db, "history", "home", "--until", "7d", "--json"))["updates"] == []
    assert survey["id"] in _run(capsys, *db, "history", "home")  # the whole log, as before
    assert survey["id"] in _run(capsys, *db, "last-seen", "home", item, "--json")
    out = tmp_path / "home.jsonl.gz"
    _run(capsys, *db, "export", "home", "--jsonl", "--gzip", "-o", str(out))
    assert "version 1" in _run(capsys, *db, "import", str(out), "--name", "copy")
    doc = tmp_path / "home.json"
    doc.write_text(_run(capsys, *db, "export", "home"))
    assert "version 1" in _run(capsys, *db, "import", str(doc), "--name", "copy2")
    # the domain's update (version 0) and the survey
    assert "compacted 2 updates" in _run(capsys, *db, "compact", "copy", "--before-version", "1")
    capsys.readouterr()
    assert main([*db, "history", "home", "--since", "last tuesday"]) != 0


@pytest.mark.parametrize("command", ["history", "last-seen", "export", "import", "compact"])
def test_history_commands_are_documented(command: str) -> None:
    page = (Path(__file__).parents[2] / "docs" / "concepts" / "lifelong.md").read_text(encoding="utf-8")
    assert f"l3mp {command} " in page, command
