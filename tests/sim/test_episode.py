"""Episodes: deterministic files, readable summaries, clear errors, and the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from l3mp.cli import main
from sim.episode import EpisodeConfig, generate_episode, read_episode, summarize, write_episode
from sim.errors import EpisodeFormatError
from sim.household import HomeSpec

CONFIG = EpisodeConfig(seed=11, steps=12, task_every=4, spec=HomeSpec(seed=11, rooms=6, items=24, people=3))


@pytest.mark.slow
def test_the_same_seed_gives_an_identical_episode_file(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert write_episode(first, generate_episode(CONFIG)) == 12
    write_episode(second, generate_episode(CONFIG))
    assert first.read_bytes() == second.read_bytes()
    other = EpisodeConfig(seed=12, steps=12, task_every=4, spec=HomeSpec(seed=12, rooms=6, items=24, people=3))
    write_episode(tmp_path / "c.jsonl", generate_episode(other))
    assert (tmp_path / "c.jsonl").read_bytes() != first.read_bytes()


@pytest.mark.slow
def test_episode_records_and_summary(tmp_path: Path) -> None:
    path = tmp_path / "episode.jsonl"
    write_episode(path, generate_episode(CONFIG))
    episode = read_episode(path)
    assert [s["type"] for s in episode.steps] == ["event", "event", "event", "task"] * 3
    task = episode.steps[3]
    assert task["goal"].startswith("(") and task["reference_plan"] and task["text"]
    event = episode.steps[0]
    assert event["text"] and (event["delta"]["add"] or event["delta"]["remove"])
    summary = summarize(episode)
    assert (summary["events"], summary["tasks"]) == (9, 3)
    assert summary["entities"] == len(episode.home["entities"]) and summary["mean_plan_length"] > 0


def test_malformed_episode_files_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "event"}\n')
    with pytest.raises(EpisodeFormatError, match=r"bad\.jsonl:1"):
        read_episode(path)
    path.write_text('{"type": "home", "format": "l3mp.episode/1"}\nnot json\n')
    with pytest.raises(EpisodeFormatError, match=r"bad\.jsonl:2: not JSON"):
        read_episode(path)
    path.write_text('{"type": "home", "format": "l3mp.episode/1"}\n[1]\n')
    with pytest.raises(EpisodeFormatError, match=r"bad\.jsonl:2: a record must be a JSON object"):
        read_episode(path)
    path.write_text('{"type": "home", "format": "l3mp.episode/1"}\n{"type": "task", "step": 1}\n')
    with pytest.raises(EpisodeFormatError, match=r"bad\.jsonl:2: a task record needs goal, kind"):
        read_episode(path)


@pytest.mark.slow
def test_cli_generate_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "episode.jsonl"
    args = [
        "sim",
        "generate",
        "--seed",
        "2",
        "--steps",
        "6",
        "--task-every",
        "3",
        "--rooms",
        "6",
        "--items",
        "20",
        "--people",
        "3",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    assert "wrote 6 steps" in capsys.readouterr().out
    assert main(["sim", "show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "4 events, 2 tasks" in shown and "sample tasks" in shown
