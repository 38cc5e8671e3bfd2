"""The daemon's episode (what ``make demo`` runs) on a small home: tasks executed, a replan caused by a
person's change during execution, accuracy per step, and the report file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from kg_memory import DomainRegistry
from kg_memory.stores import SQLiteStore
from l3mp.cli import main
from l3mp.runtime import InboxError, read_inbox
from sim import HomeSpec
from sim.daemon import DaemonConfig, run_daemon, write_report

STEPS = 12


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("daemon")
    store = SQLiteStore(folder / "d.db", DomainRegistry())
    config = DaemonConfig(steps=STEPS, seed=1, task_every=4, home=HomeSpec(seed=1, rooms=6, items=24, people=3))
    try:
        run = run_daemon(store, config, Console(quiet=True))
    finally:
        store.close()
    return write_report(folder / "report.json", run)


def test_the_report_has_accuracy_per_step_and_labels_the_simulated_model(record: dict[str, object]) -> None:
    accuracy = record["accuracy_per_step"]
    assert isinstance(accuracy, list) and len(accuracy) == STEPS
    assert all(0.9 <= a <= 1.0 for a in accuracy)
    assert str(record["model"]).startswith("simulated")


def test_tasks_are_executed_and_a_human_change_causes_a_replan(record: dict[str, object]) -> None:
    tasks = record["tasks"]
    assert isinstance(tasks, list) and len(tasks) == STEPS // 4
    assert sum(t["actions"] for t in tasks) > 0 and any(t["status"] == "succeeded" for t in tasks)
    causes = [r["cause"] for t in tasks for r in t["replans"]]
    assert "divergence" in causes, causes  # a person tidied away what the robot went for


def test_the_daemon_command_writes_its_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    code = main(["--db", str(tmp_path / "x.db"), "daemon", "--steps", "2", "--report", str(report)])
    assert code == 0 and json.loads(report.read_text())["summary"]["steps"] == 2


@pytest.mark.parametrize("optimal", [False, True])
def test_tasks_queued_from_an_inbox_are_planned_and_executed(tmp_path: Path, optimal: bool) -> None:
    from sim import generate_home

    spec = HomeSpec(seed=2, rooms=6, items=24, people=3)
    item = next(e.name for e in generate_home(spec).entities if e.type in ("book", "pen", "remote"))
    inbox = read_inbox(json.dumps({"task": f"Hold the {item}.", "goal": f"(held {item} robot_1)"}) + "\n\n")
    store = SQLiteStore(tmp_path / "inbox.db", DomainRegistry())
    try:
        config = DaemonConfig(steps=2, seed=2, task_every=0, event_rate=0.0, home=spec, inbox=inbox, optimal=optimal)
        run = run_daemon(store, config, Console(quiet=True))
    finally:
        store.close()
    tasks = [s.task for s in run.report.steps if s.task is not None]
    assert [t.request for t in tasks] == [f"Hold the {item}."] and tasks[0].succeeded
    assert tasks[0].plans[0].optimal is optimal  # --optimal: proven the shortest for the whole home


@pytest.mark.parametrize(
    "text", ["not json", '{"goal": "(clear a)"}', '{"report": ""}', '{"report": "x", "task": "y"}', "[1]"]
)
def test_a_bad_inbox_line_is_named(text: str) -> None:
    with pytest.raises(InboxError, match="inbox line 1"):
        read_inbox(text)


def test_english_reports_from_a_file_need_a_real_model(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.db", DomainRegistry())
    config = DaemonConfig(
        steps=1, home=HomeSpec(seed=2, rooms=6, items=24, people=3), inbox=read_inbox('{"report": "The mug is gone."}')
    )
    try:
        with pytest.raises(InboxError, match="real model"):
            run_daemon(store, config, Console(quiet=True))
    finally:
        store.close()
