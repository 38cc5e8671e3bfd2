"""``l3mp init | observe | update | revert | state --json``: exit codes mean something, state is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from l3mp.cli import main
from perception import Observation, ObservedEntity


def _observation(light_on: bool) -> Observation:
    return Observation(
        room="kitchen",
        entities=(
            ObservedEntity(name="kitchen", type="room"),
            ObservedEntity(name="robot_1", type="robot", relations=(("robot_at", "kitchen"),)),
            ObservedEntity(
                name="lamp_1",
                type="light",
                label="ceiling lamp",
                properties=("light_on",) if light_on else (),
                relations=(("light_in", "kitchen"),),
            ),
        ),
    )


def _state(db: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert main(["--db", str(db), "state", "home", "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_init_observe_revert_and_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.db"
    assert main(["--db", str(db), "init", "home", "--domain", "example_home"]) == 0
    assert "created memory 'home'" in capsys.readouterr().out
    seen = tmp_path / "on.json"
    seen.write_text(_observation(True).to_json())
    assert main(["--db", str(db), "observe", "home", str(seen), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["status"] == "applied" and first["source"] == "sensor"
    assert "(light_on lamp_1)" in _state(db, capsys)["facts"]  # type: ignore[operator]
    dark = tmp_path / "off.json"
    dark.write_text(_observation(False).to_json())
    assert main(["--db", str(db), "observe", "home", str(dark), "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert "(light_on lamp_1)" not in _state(db, capsys)["facts"]  # type: ignore[operator]
    assert main(["--db", str(db), "revert", "home", second["id"]]) == 0
    state = _state(db, capsys)
    assert "(light_on lamp_1)" in state["facts"] and state["version"] == 3  # type: ignore[operator]


def test_errors_and_rejections_have_their_own_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "codes.db"
    assert main(["--db", str(db), "init", "home", "--domain", "example_home"]) == 0
    assert main(["--db", str(db), "init", "home", "--domain", "example_home"]) == 1  # exists
    assert main(["--db", str(db), "update", "home", "   "]) == 2  # rejected unread, recorded
    monkeypatch.setenv("L3MP_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("L3MP_LLM_MAX_RETRIES", "0")
    capsys.readouterr()
    assert main(["--db", str(db), "update", "home", "The lamp is on now.", "--retriever", "full"]) == 1
    assert "unavailable" in capsys.readouterr().err
    assert _state(db, capsys)["version"] == 0  # nothing written
    assert main(["--db", str(db), "revert", "home", "no-such-update"]) == 1


def test_state_at_a_past_version_and_time_is_the_services_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "cli.db"
    assert main(["--db", str(db), "init", "home", "--domain", "example_home"]) == 0
    for light_on in (True, False):
        path = tmp_path / f"seen-{light_on}.json"
        path.write_text(_observation(light_on).to_json())
        assert main(["--db", str(db), "observe", "home", str(path)]) == 0
    now = _state(db, capsys)
    capsys.readouterr()
    assert main(["--db", str(db), "state", "home", "--version", "1", "--json"]) == 0
    then = json.loads(capsys.readouterr().out)
    assert (then["version"], then["now"], now["version"]) == (1, 2, 2)
    assert "(light_on lamp_1)" in then["facts"] and "(light_on lamp_1)" not in now["facts"]
    assert main(["--db", str(db), "state", "home", "--at", "2001-01-01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["version"] == 0
    assert main(["--db", str(db), "state", "home", "--version", "9"]) == 1
    assert "versions 0..2" in capsys.readouterr().err
