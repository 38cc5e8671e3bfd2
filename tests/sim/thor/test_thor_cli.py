"""``l3mp thor import-scene | replay`` and ``l3mp daemon --env thor``: exit codes mean something; bad files
write nothing."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import require_thor_data

from l3mp.cli import main


def test_import_scene_creates_a_thor_memory_and_counts_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scene = require_thor_data() / "scenes" / "FloorPlan1_physics.json.gz"
    db = str(tmp_path / "cli.db")
    assert main(["--db", db, "thor", "import-scene", str(scene), "--memory", "kitchen", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "applied" and out["issues"] == []
    assert out["entities"] == out["objects"] + 1 == 78 and out["facts"] > out["entities"]
    plain = tmp_path / "FloorPlan2_physics.json"  # plain JSON too
    plain.write_bytes(gzip.decompress((require_thor_data() / "scenes" / "FloorPlan2_physics.json.gz").read_bytes()))
    assert main(["--db", db, "thor", "import-scene", str(plain), "--memory", "kitchen2"]) == 0
    assert "FloorPlan2_physics:" in capsys.readouterr().out
    args = ["--db", db, "thor", "import-scene", str(scene), "--memory", "walks", "--domain", "thor-travel", "--json"]
    assert main(args) == 0
    travel = json.loads(capsys.readouterr().out)
    assert travel["domain"] == "thor-travel" and travel["issues"] == []
    assert travel["facts"] == out["facts"] + 77 * 76  # and a distance between every two objects, both ways


@pytest.mark.parametrize("content", [b"not json", b'{"Apple|1|2|3": {"objectId": "Apple|1|2|3"}}', b"\x1f\x8bbroken"])
def test_a_malformed_scene_is_a_clear_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    db = str(tmp_path / "cli.db")
    assert main(["--db", db, "thor", "import-scene", str(bad), "--memory", "kitchen"]) == 1
    assert "bad.json" in capsys.readouterr().err
    assert main(["--db", db, "memories"]) == 0
    assert "kitchen" not in capsys.readouterr().out


def test_replay_prints_every_step_and_the_totals(thor_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = require_thor_data() / "traces" / "open_fridge.json.gz"
    assert main(["thor", "replay", str(trace), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {k: out[k] for k in ("steps", "interactions", "actions_matched", "steps_agreeing")} == {
        "steps": 5,
        "interactions": 4,
        "actions_matched": 4,
        "steps_agreeing": 5,
    }
    per_step = out["per_step"]
    assert len(per_step) == 5 and per_step[1]["pddl"].startswith("(open robot_1 drawer_")
    assert per_step[1]["sent"] == per_step[1]["recorded"] and all(s["agrees"] for s in per_step)


def test_the_daemon_on_thor_needs_a_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AI2THOR_EXECUTABLE", raising=False)
    assert main(["--db", str(tmp_path / "d.db"), "daemon", "--env", "thor", "--scene", "FloorPlan1"]) == 1
    assert "needs a local AI2-THOR Unity build" in capsys.readouterr().err
    missing = str(tmp_path / "no-build")
    assert main(["--db", str(tmp_path / "d.db"), "daemon", "--env", "thor", "--executable", missing]) == 1
    assert "no AI2-THOR build there" in capsys.readouterr().err
