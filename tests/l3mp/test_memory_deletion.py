"""Deleting a memory through the operations and the command line: one in use, and the hidden one an
import whose process was killed leaves, whose name only an explicit ``abandoned_import`` frees."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_memory import DomainRegistry, MemoryExists, UnknownMemory
from kg_memory.stores import SQLiteStore
from l3mp.cli import main
from l3mp.operations import Operations, Services
from l3mp.operations.models import MemoryIn
from l3mp.settings import Settings
from l3mp.wiring import open_store

NAME = "home"


@pytest.fixture
def ops(tmp_path: Path) -> Iterator[Operations]:
    """The operations over a store holding the memory ``NAME``, empty."""
    settings = Settings(sqlite_path=tmp_path / "delete.db")
    services = Services(settings=settings, store=open_store(settings))
    services.store.create_memory(NAME, "example_home")
    yield Operations(services=services)
    services.close()


def _left_by_a_killed_import(db: Path, name: str) -> None:
    """The hidden memory an import leaves when its process dies before its state is loaded."""
    store = SQLiteStore(db, DomainRegistry())
    try:
        store.create_memory(name, "example_home", importing=True)
    finally:
        store.close()


# -- the operation ---------------------------------------------------------------------------


def test_deleting_a_memory_removes_it_and_what_the_process_held_for_it(ops: Operations) -> None:
    ops.services.planning_world(ops.memory(NAME))  # what plans on it keep
    ops.delete_memory(" HOME ")
    assert NAME not in [m.name for m in ops.list_memories()]
    with pytest.raises(UnknownMemory, match=NAME):
        ops.get_memory(NAME)
    assert NAME not in ops.services._planning and NAME not in ops.services._worlds
    assert ops.create_memory(MemoryIn(name=NAME, domain="example_home")).version == 0


def test_deleting_an_unknown_memory_is_unknown_memory(ops: Operations) -> None:
    for abandoned_import in (False, True):
        with pytest.raises(UnknownMemory, match="attic"):
            ops.delete_memory("attic", abandoned_import=abandoned_import)


def test_a_hidden_memory_is_deleted_only_as_an_abandoned_import(ops: Operations) -> None:
    ops.services.store.create_memory("stuck", "example_home", importing=True)
    with pytest.raises(MemoryExists, match=r"'stuck' is being imported.*delete it with abandoned_import"):
        ops.delete_memory("stuck")
    with pytest.raises(MemoryExists, match="being imported"):  # still there, still hidden
        ops.create_memory(MemoryIn(name="stuck", domain="example_home"))
    ops.delete_memory("stuck", abandoned_import=True)
    assert ops.create_memory(MemoryIn(name="stuck", domain="example_home")).name == "stuck"


def test_a_memory_in_use_is_not_deleted_as_an_abandoned_import(ops: Operations) -> None:
    with pytest.raises(MemoryExists, match="not being imported"):
        ops.delete_memory(NAME, abandoned_import=True)
    assert ops.get_memory(NAME).name == NAME


# -- the command line ------------------------------------------------------------------------


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "cli.db"
    assert main(["--db", str(path), "init", NAME, "--domain", "example_home"]) == 0
    capsys.readouterr()
    return path


def _listed(db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["--db", str(db), "memories"]) == 0
    return capsys.readouterr().out


def test_cli_deletes_a_memory_once_confirmed(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(["--db", str(db), "memories", "delete", NAME]) == 1
    assert "aborted" in capsys.readouterr().err
    assert NAME in _listed(db, capsys)
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["--db", str(db), "memories", "delete", NAME]) == 0
    assert f"deleted memory '{NAME}'" in capsys.readouterr().out
    assert NAME not in _listed(db, capsys)


def test_cli_deletes_with_yes_without_asking(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(db), "memories", "delete", "HOME", "--yes"]) == 0  # stdin is not read
    assert capsys.readouterr().out == f"deleted memory '{NAME}'\n"
    assert NAME not in _listed(db, capsys)
    assert main(["--db", str(db), "memories", "delete", NAME, "--yes"]) == 1
    assert capsys.readouterr().err.strip() == f"error: unknown memory '{NAME}'"


def test_cli_frees_the_name_an_abandoned_import_left(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _left_by_a_killed_import(db, "stuck")
    assert main(["--db", str(db), "memories", "delete", "stuck", "--yes"]) == 1
    error = capsys.readouterr().err
    assert len(error.splitlines()) == 1 and "being imported" in error and "abandoned_import" in error
    assert main(["--db", str(db), "memories", "delete", NAME, "--abandoned-import", "--yes"]) == 1
    assert "not being imported" in capsys.readouterr().err
    assert main(["--db", str(db), "memories", "delete", "stuck", "--abandoned-import", "--yes"]) == 0
    assert main(["--db", str(db), "init", "stuck", "--domain", "example_home"]) == 0
    assert "stuck" in _listed(db, capsys) and NAME in _listed(db, capsys)
