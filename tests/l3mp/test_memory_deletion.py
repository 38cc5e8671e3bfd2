"""Deleting a memory through the operations and the command line: a memory in use, with its history
(what the process held for it forgotten), or, asked for as an ``abandoned_import``, only the hidden one
an import whose process was killed leaves."""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from kg_memory import Delta, DomainRegistry, Fact, MemoryExists, UnknownMemory, UpdateSource, WorldMemory
from kg_memory.stores import SQLiteStore
from l3mp.cli import main
from l3mp.operations import Operations, Services
from l3mp.operations.models import DeltaIn, MemoryIn
from l3mp.settings import Settings
from l3mp.wiring import open_store
from retrieval import Context, QueryGraph

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


def test_a_memory_in_use_is_deleted_and_what_the_process_held_for_it_is_forgotten(ops: Operations) -> None:
    held = ops.memory(NAME)
    kept = ops.services.planning_world(held)  # what plans on it keep
    ops.delete_memory(" HOME ")
    with pytest.raises(UnknownMemory, match=NAME):
        ops.get_memory(NAME)
    with pytest.raises(UnknownMemory, match=NAME):
        ops.apply_delta(NAME, DeltaIn(add=["(light_on robot_1)"]))
    ops.create_memory(MemoryIn(name=NAME, domain="household"))
    again = ops.memory(NAME)
    assert again is not held and again.domain.name == "household"
    assert ops.services.planning_world(again) is not kept


class _Keeping:
    """A retriever that keeps something per memory, and hears which ones to let go of."""

    name = "keeping"

    def __init__(self) -> None:
        self.forgotten: list[tuple[object, str]] = []

    def retrieve(self, memory: WorldMemory, *, names: Sequence[str] = (), query: QueryGraph | None = None) -> Context:
        raise AssertionError("not asked to retrieve here")

    def forget(self, store: object, memory: str) -> None:
        self.forgotten.append((store, memory))


def test_the_retriever_lets_go_of_a_deleted_memory(tmp_path: Path) -> None:
    settings = Settings(sqlite_path=tmp_path / "delete.db")
    keeping = _Keeping()
    services = Services(settings=settings, store=open_store(settings), _retriever=keeping)
    try:
        services.store.create_memory(NAME, "example_home")
        Operations(services=services).delete_memory(" Home ")
        assert keeping.forgotten == [(services.store, NAME)]
    finally:
        services.close()


def test_another_process_deleting_and_making_the_memory_again_is_seen_by_this_one(ops: Operations) -> None:
    held = ops.memory(NAME)  # this process's handle, cached
    other = Services(settings=ops.services.settings, store=open_store(ops.services.settings))
    try:
        Operations(services=other).delete_memory(NAME)
        Operations(services=other).create_memory(MemoryIn(name=NAME, domain="household"))
    finally:
        other.close()
    with pytest.raises(UnknownMemory, match=NAME):  # the handle itself never writes to the new one
        held.apply(Delta(add=frozenset({Fact.parse("(light_on robot_1)")})), source=UpdateSource.API)
    assert ops.memory(NAME).domain.name == "household"  # the next request finds the memory made again
    assert ops.get_memory(NAME).version == 0


def test_deleting_an_unknown_memory_is_unknown_memory(ops: Operations) -> None:
    for abandoned_import in (False, True):
        with pytest.raises(UnknownMemory, match="attic"):
            ops.delete_memory("attic", abandoned_import=abandoned_import)


def test_a_hidden_memory_is_deleted_only_as_an_abandoned_import(ops: Operations) -> None:
    ops.services.store.create_memory("stuck", "example_home", importing=True)
    with pytest.raises(UnknownMemory, match="stuck"):  # hidden: not there for anything but its import
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


def test_cli_deletes_what_an_abandoned_import_left_once_confirmed(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _left_by_a_killed_import(db, "stuck")
    delete = ["--db", str(db), "memories", "delete", "stuck", "--abandoned-import"]
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(delete) == 1
    assert "aborted" in capsys.readouterr().err
    assert main(["--db", str(db), "init", "stuck", "--domain", "example_home"]) == 1  # still taken
    assert "being imported" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(delete) == 0
    assert "deleted memory 'stuck'" in capsys.readouterr().out
    assert main(["--db", str(db), "init", "stuck", "--domain", "example_home"]) == 0


def test_cli_deletes_a_memory_in_use_only_as_itself(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(db), "memories", "delete", NAME, "--abandoned-import", "--yes"]) == 1
    error = capsys.readouterr().err
    assert len(error.splitlines()) == 1 and "not being imported" in error
    assert NAME in _listed(db, capsys)
    assert main(["--db", str(db), "memories", "delete", "HOME", "--yes"]) == 0  # stdin is not read
    assert f"deleted memory '{NAME}'" in capsys.readouterr().out
    assert NAME not in _listed(db, capsys)
    assert main(["--db", str(db), "memories", "delete", "attic", "--yes"]) == 1
    assert capsys.readouterr().err.strip() == "error: unknown memory 'attic'"


def test_cli_frees_the_name_an_abandoned_import_left(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _left_by_a_killed_import(db, "stuck")
    assert main(["--db", str(db), "memories", "delete", "stuck", "--yes"]) == 1
    assert capsys.readouterr().err.strip() == "error: unknown memory 'stuck'"  # hidden without the flag
    assert main(["--db", str(db), "memories", "delete", "stuck", "--abandoned-import", "--yes"]) == 0
    assert main(["--db", str(db), "init", "stuck", "--domain", "example_home"]) == 0
    assert "stuck" in _listed(db, capsys) and NAME in _listed(db, capsys)
