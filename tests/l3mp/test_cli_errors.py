"""A user's mistake on the command line: one ``error:`` line (or Click's usage error) on stderr naming
the file, option or ``L3MP_*`` variable, a non-zero exit code, never a traceback or an internal error,
and the memory left as it was."""

from __future__ import annotations

import gc
import gzip
import json
import logging
import signal
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from kg_memory.errors import InvalidValue, StoreUnavailable
from l3mp.cli import main
from l3mp.llm.local import free_port
from l3mp.pipelines import PlanConfig
from perception import Observation, ObservedEntity


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    def refused(self, code: int = 1) -> str:
        """stderr, having checked the run failed with ``code``, cleanly and with nothing on stdout."""
        assert self.code == code, (self.code, self.out, self.err)
        assert self.out == "", self.out
        assert "Traceback" not in self.err and "internal error" not in self.err, self.err
        return self.err


def run(*args: str, env: Mapping[str, str | None] | None = None, stdin: bytes | None = None) -> Run:
    """``l3mp`` as its entry point runs it (main: its error handling), stdout and stderr apart."""
    with CliRunner().isolation(input=stdin, env=env) as (out, err, _):
        try:
            code = main(list(args))
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    return Run(code, out.getvalue().decode(), err.getvalue().decode())


@pytest.fixture(autouse=True)
def _local_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that reached for the model would find none, and nothing beyond this machine."""
    monkeypatch.setenv("L3MP_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("L3MP_LLM_MAX_RETRIES", "0")


@pytest.fixture
def db(tmp_path: Path) -> list[str]:
    """A store holding an empty memory ``home`` (example_home)."""
    argv = ["--db", str(tmp_path / "cli.db")]
    assert run(*argv, "init", "home", "--domain", "example_home").code == 0
    return argv


def _memories(db: list[str]) -> str:
    listed = run(*db, "memories")
    assert listed.code == 0
    return listed.out


def _version(db: list[str]) -> int:
    shown = run(*db, "state", "home", "--json")
    assert shown.code == 0, shown.err
    return int(json.loads(shown.out)["version"])


# -- where errors go -----------------------------------------------------------------------------------


def test_errors_go_to_stderr_so_a_redirected_output_stays_clean(db: list[str]) -> None:
    assert "unknown memory 'nosuch'" in run(*db, "export", "nosuch").refused()
    assert run(*db, "state", "nosuch", "--json").refused().startswith("error: unknown memory")


# -- settings ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("L3MP_STORE", "bogus"),
        ("L3MP_RETRIEVER", "bogus"),
        ("L3MP_MAX_REQUEST_BYTES", "abc"),
        ("L3MP_NEO4J_TIMEOUT", "-1"),
        ("L3MP_GROUP_COMMIT_MAX", "0"),
        ("L3MP_MCP_ALLOWED_HOSTS", "notjson"),
        ("L3MP_NEO4J_URI", "http://127.0.0.1:1"),
        ("L3MP_NEO4J_URI", "bolt://127.0.0.1:99999"),
        ("L3MP_NEO4J_URI", "bolt://127.0.0.1:0"),
    ],
)
def test_a_bad_setting_is_one_line_naming_its_variable(variable: str, value: str, tmp_path: Path) -> None:
    err = run("--db", str(tmp_path / "x.db"), "memories", env={variable: value}).refused()
    assert err.startswith(f"error: {variable}: ") and err.count("\n") == 1, err
    assert not (tmp_path / "x.db").exists()


def test_several_bad_settings_are_one_line_each(tmp_path: Path) -> None:
    env = {"L3MP_STORE": "bogus", "L3MP_RETRIEVER": "bogus", "L3MP_MAX_REQUEST_BYTES": "abc"}
    lines = run("--db", str(tmp_path / "x.db"), "memories", env=env).refused().splitlines()
    assert sorted(line.split(":")[1].strip() for line in lines) == sorted(env)
    assert all(line.startswith("error: ") for line in lines)


# -- a Neo4j store that cannot be used -----------------------------------------------------------------

# Every command that opens the store, with arguments that take it as far as opening it; {names} are
# files and a port filled in per test.
STORE_COMMANDS: dict[str, tuple[str, ...]] = {
    "memories": ("memories",),
    "state": ("state", "home"),
    "history": ("history", "home"),
    "last-seen": ("last-seen", "home", "mug_1"),
    "export": ("export", "home"),
    "import": ("import", "{jsonl}"),
    "compact": ("compact", "home", "--before-version", "1"),
    "init": ("init", "home"),
    "update": ("update", "home", "the mug is on the table"),
    "observe": ("observe", "home", "{observation}"),
    "revert": ("revert", "home", "1"),
    "plan": ("plan", "--memory", "home", "--goal", "(on mug_1 table_1)"),
    "pddl import": ("pddl", "import", "{domain}", "{problem}", "--memory", "home"),
    "serve": ("serve", "--port", "{port}"),
    "mcp": ("mcp",),
    "ros": ("ros", "--memory", "home"),
}


@pytest.fixture
def terminal_logs() -> Iterator[None]:
    """Log records on stderr, as a terminal shows them outside pytest (whose handlers would hold them)."""
    stderr = logging.lastResort  # writes to the stderr of the moment: the one each run captures
    assert stderr is not None
    logging.getLogger().addHandler(stderr)
    try:
        yield
    finally:
        logging.getLogger().removeHandler(stderr)


@pytest.fixture
def signal_handlers_kept() -> Iterator[None]:
    """``l3mp ros`` takes SIGINT and SIGTERM for itself: the test process gets them back."""
    kept = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in kept.items():
        signal.signal(signum, handler)


def _arguments(command: str, tmp_path: Path) -> list[str]:
    observation = tmp_path / "seen.json"
    observation.write_text('{"room": "kitchen", "entities": []}')
    (jsonl := tmp_path / "home.jsonl").write_text("")
    blocksworld = FIXTURES / "ipc" / "blocksworld"
    files = {
        "jsonl": jsonl,
        "observation": observation,
        "domain": blocksworld / "domain.pddl",
        "problem": blocksworld / "p01.pddl",
        "port": free_port(),
    }
    return [argument.format(**files) for argument in STORE_COMMANDS[command]]


def _neo4j_nobody_listens_on(scheme: str, tmp_path: Path, **settings: str) -> dict[str, str | None]:
    return {
        "L3MP_STORE": "neo4j",
        "L3MP_NEO4J_URI": f"{scheme}://127.0.0.1:{free_port()}",
        "L3MP_DOMAINS_PATH": str(tmp_path / "domains"),
        "L3MP_DEBUG": None,
        **settings,
    }


def _refused_in_one_line_naming_the_uri(args: list[str], env: Mapping[str, str | None]) -> str:
    err = run(*args, env=env).refused()
    gc.collect()  # a driver left open would warn now, and the warning fail the test
    assert err.startswith("error: L3MP_NEO4J_URI: neo4j store unavailable") and err.count("\n") == 1, err
    return err


@pytest.mark.usefixtures("terminal_logs", "signal_handlers_kept")
@pytest.mark.parametrize("command", STORE_COMMANDS)
def test_a_neo4j_nobody_answers_is_one_line_naming_its_setting_without_the_drivers_logs(
    command: str, tmp_path: Path
) -> None:
    # routing (neo4j://) fails without a retry's wait, and the driver logs that failure as an error
    env = _neo4j_nobody_listens_on("neo4j", tmp_path, L3MP_NEO4J_RETRY_TIME="0")
    err = _refused_in_one_line_naming_the_uri(_arguments(command, tmp_path), env)
    assert "routing information" in err


@pytest.mark.usefixtures("terminal_logs", "signal_handlers_kept")
@pytest.mark.parametrize("command", ["pddl import", "mcp", "ros"])
def test_a_neo4j_nobody_answers_is_one_line_without_the_drivers_retry_logs(command: str, tmp_path: Path) -> None:
    # the driver's one retry (it waits about a second before it) and its warning
    env = _neo4j_nobody_listens_on("bolt", tmp_path, L3MP_NEO4J_RETRY_TIME="0.001")
    err = _refused_in_one_line_naming_the_uri(_arguments(command, tmp_path), env)
    assert "Connection refused" in err and "will be retried" not in err


@pytest.mark.usefixtures("terminal_logs")
def test_debugging_shows_the_drivers_logs_before_the_one_error_line(tmp_path: Path) -> None:
    env = {**_neo4j_nobody_listens_on("neo4j", tmp_path, L3MP_NEO4J_RETRY_TIME="0"), "L3MP_DEBUG": "1"}
    *logs, error = run("memories", env=env).refused().splitlines()
    assert "Unable to retrieve routing information" in logs
    assert error.startswith("error: L3MP_NEO4J_URI: neo4j store unavailable")


def test_a_refused_login_names_the_settings_of_the_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kg_memory.stores import Neo4jStore

    def refuse(store: Neo4jStore) -> None:  # as the store words a refused login: see test_neo4j_errors.py
        raise StoreUnavailable("neo4j", "init schema", "authentication failed", login_refused=True)

    monkeypatch.setattr(Neo4jStore, "init_schema", refuse)
    err = run("memories", env=_neo4j_nobody_listens_on("bolt", tmp_path)).refused()
    assert err == (
        "error: L3MP_NEO4J_URI, L3MP_NEO4J_USER, L3MP_NEO4J_PASSWORD: "
        "neo4j store unavailable during init schema: authentication failed\n"
    )


def test_a_directory_as_the_sqlite_database_is_named(tmp_path: Path) -> None:
    err = run("--db", str(tmp_path), "memories").refused()
    assert str(tmp_path) in err and "is a directory" in err


# -- observe, init -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "empty"),
        (b'{"room": \n', "Invalid JSON"),
        (b'{"room": "kitchen", "entities": [{"name": "x y", "type": "item"}]}', "invalid entity name 'x y'"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_observe_names_a_file_that_is_not_an_observation(
    content: bytes, problem: str, db: list[str], tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    seen.write_bytes(content)
    err = run(*db, "observe", "home", str(seen)).refused()
    assert err.startswith(f"error: {seen}: ") and problem in err and err.count("\n") == 1, err
    assert _version(db) == 0
    assert "error: stdin: " in run(*db, "observe", "home", "-", stdin=content).refused()


def test_an_observation_still_applies(db: list[str], tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    kitchen = ObservedEntity(name="kitchen", type="room")
    seen.write_text(Observation(room="kitchen", entities=(kitchen,)).to_json())
    assert run(*db, "observe", "home", str(seen)).code == 0


def test_init_whose_survey_is_rejected_creates_nothing(tmp_path: Path) -> None:
    db = ["--db", str(tmp_path / "cli.db")]
    # the simulated home is the household domain's: example_home rejects its survey
    rejected = run(*db, "init", "home", "--domain", "example_home", "--sim-home", "1")
    assert rejected.code == 2 and "not created" in rejected.out
    assert "home" not in _memories(db)
    assert run(*db, "init", "home", "--domain", "example_home").code == 0  # the name is free


# -- import --------------------------------------------------------------------------------------------


def _gzip_cut_in_its_first_line() -> bytes:
    return _gzipped(b'{"format": "l3mp.memory.jsonl/1", "memory": {"name": "x"' + b" " * 5000)[:30]


def _gzipped(data: bytes) -> bytes:
    """The same bytes on every call (no time in the header): each test worker collects the same cases."""
    return gzip.compress(data, mtime=0)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("nonutf.jsonl", b"abc\xff\n"),
        ("nonutf.jsonl.gz", _gzipped(b"\xff\xfeabc\n")),
        ("corrupt.jsonl.gz", _gzipped(b'{"format": "l3mp.memory.jsonl/1"}\n' * 50)[:20] + b"\x00" * 40),
        ("null.json", b'{"format": null}\n'),
        ("number.json", b'{"format": 5}\n'),
        ("deep.json", b"[" * 100_000 + b"]" * 100_000),
        ("cut.jsonl.gz", _gzip_cut_in_its_first_line()),
        ("empty.json", b""),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_import_names_a_file_it_cannot_read(name: str, content: bytes, db: list[str], tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    err = run(*db, "import", str(path), "--name", "copy").refused()
    assert err.startswith(f"error: {path}") and err.count("\n") == 1, err
    assert "copy" not in _memories(db)


# -- history, plan, serve, ros: options ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--since", "1000000d"),
        ("--since", "99999999999d"),
        ("--until", "99999999999w"),
        ("--since", "garbage"),
        ("--cursor", "99999999999999999999999"),
    ],
)
def test_history_options_out_of_range_are_usage_errors_naming_the_option(
    option: str, value: str, db: list[str]
) -> None:
    assert f"'{option}'" in run(*db, "history", "home", option, value).refused(2)


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_plan_refuses_a_timeout_that_is_no_number_of_seconds(value: str, db: list[str]) -> None:
    assert "'--timeout'" in run(*db, "plan", "--memory", "home", "--goal", "(x)", "--timeout", value).refused(2)


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), 0.0])
def test_plan_config_refuses_a_timeout_that_is_no_number_of_seconds(timeout: float) -> None:
    with pytest.raises(InvalidValue, match="timeout"):
        PlanConfig(timeout=timeout)


def test_plan_names_a_goal_file_that_is_not_utf8(db: list[str], tmp_path: Path) -> None:
    goal = tmp_path / "goal.pddl"
    goal.write_bytes(b"\xff\xfe(define")
    err = run(*db, "plan", "--memory", "home", "--goal-file", str(goal)).refused()
    assert f"{goal}: cannot read the problem file" in err and err.count("\n") == 1


def test_plan_without_a_request_or_goal_says_what_to_give(db: list[str]) -> None:
    assert "give a request, --goal or --goal-file" in run(*db, "plan", "--memory", "home").refused(2)


@pytest.mark.parametrize("port", ["70000", "-1", "0"])
def test_serve_refuses_a_port_out_of_range(port: str, db: list[str]) -> None:
    assert "'--port'" in run(*db, "serve", "--port", port).refused(2)


@pytest.mark.parametrize("root", ["robots", "/robots/", "/robots//home", "/robots?x=1"])
def test_serve_refuses_a_root_path_that_is_no_path_prefix(root: str, db: list[str]) -> None:
    assert "'--root-path'" in run(*db, "serve", "--root-path", root).refused(2)


@pytest.mark.parametrize(("root", "given"), [("/robots/home", "/robots/home"), ("/", ""), ("", "")])
def test_serve_hands_its_root_path_to_uvicorn(
    root: str, given: str, db: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    started: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: started.update(options))
    monkeypatch.setattr(sys, "setswitchinterval", lambda _interval: None)  # this process's is kept
    assert run(*db, "serve", "--root-path", root).code == 0
    assert started["root_path"] == given


def test_serve_on_a_store_it_cannot_open_is_one_line_before_uvicorn_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("uvicorn started")

    monkeypatch.setattr(uvicorn, "run", never)
    err = run("--db", str(tmp_path), "serve", "--port", "8000").refused()
    assert "is a directory" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("option", "value"),
    [("--name", "a*b"), ("--name", ""), ("--name", "bad name"), ("--name", "1st"), ("--namespace", "x?y")],
)
def test_ros_refuses_names_ros2_refuses(option: str, value: str, db: list[str]) -> None:
    assert f"'{option}'" in run(*db, "ros", "--memory", "home", option, value).refused(2)


def test_model_serve_reports_a_file_that_is_no_model_by_the_servers_last_line(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from l3mp.llm.local import free_port

    gguf = tmp_path / "m.gguf"
    gguf.write_text("not a model")
    served = run("model", "serve", "--gguf", str(gguf), "--port", str(free_port()))
    assert served.code == 1 and served.out.startswith("starting llama.cpp")
    assert served.err.startswith("error: the server exited with code") and served.err.count("\n") == 1
    assert "Failed to load model from file" in served.err and "Traceback" not in served.err
