#!/usr/bin/env python3
"""Obtain, start, wait for and stop a real Neo4j 5.26 server without Docker.

Neo4j comes from Maven Central (``tools/neo4j/pom.xml``) and runs embedded in a
small Java launcher with Bolt on 127.0.0.1. Used by ``make test``/``make bench``
and by the fault-injection tests, which start a private instance and kill it.

    python scripts/neo4j_server.py start [--port 7687] [--password PW] [--home DIR]
    python scripts/neo4j_server.py stop  [--home DIR]
    python scripts/neo4j_server.py status [--port 7687]
    python scripts/neo4j_server.py run -- COMMAND...   # start unless L3MP_NEO4J_URI answers; stop after

Only the standard library is used, so this runs before the virtualenv exists.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "tools" / "neo4j"
DEFAULT_HOME = ROOT / ".neo4j"
MAIN_CLASS = "l3mp.neo4j.Server"
JVM_FLAGS = (
    "-Xmx1g",
    "-XX:+UseG1GC",
    "-Dio.netty.tryReflectionSetAccessible=true",
    *(
        f"--add-opens=java.base/{pkg}=ALL-UNNAMED"
        for pkg in (
            "java.nio",
            "java.io",
            "sun.nio.ch",
            "java.lang",
            "java.util",
            "java.util.concurrent",
            "java.lang.invoke",
        )
    ),
)


class Neo4jServerError(RuntimeError):
    """The server could not be built, started or stopped; the message says why."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerHandle:
    pid: int
    port: int
    home: Path
    log: Path
    process: subprocess.Popen[bytes]


def build() -> Path:
    """Fetch Neo4j's jars from Maven Central and compile the launcher (once)."""
    lib = LAUNCHER / "target" / "lib"
    jar = LAUNCHER / "target" / "l3mp-neo4j-server-1.0.0.jar"
    if jar.exists() and lib.is_dir() and any(lib.glob("neo4j-kernel-*.jar")):
        return LAUNCHER / "target"
    result = subprocess.run(
        ["mvn", "-B", "-q", "package", "-DskipTests"],
        cwd=LAUNCHER,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise Neo4jServerError(f"building the Neo4j launcher failed:\n{result.stdout}{result.stderr}")
    return LAUNCHER / "target"


def is_listening(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def start(
    port: int = 7687,
    password: str = "",
    home: Path = DEFAULT_HOME,
    timeout: float = 180.0,
) -> ServerHandle:
    """Start a server in the background and return once it answers queries."""
    if is_listening(port):
        raise Neo4jServerError(f"port {port} is already in use; stop that server or pick another port")
    target = build()
    home.mkdir(parents=True, exist_ok=True)
    log = home / "server.log"
    classpath = os.pathsep.join([str(target / "l3mp-neo4j-server-1.0.0.jar"), str(target / "lib" / "*")])
    command = ["java", *JVM_FLAGS, "-cp", classpath, MAIN_CLASS, str(home / "data"), str(port), password]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    (home / "server.pid").write_text(str(process.pid))
    _wait_ready(process, log, timeout)
    return ServerHandle(pid=process.pid, port=port, home=home, log=log, process=process)


def _wait_ready(process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Neo4jServerError(f"Neo4j exited with code {process.returncode}; see {log}:\n{_tail(log)}")
        if b"READY" in log.read_bytes():
            return
        time.sleep(0.2)
    process.kill()
    raise Neo4jServerError(f"Neo4j did not become ready within {timeout:.0f} s; see {log}:\n{_tail(log)}")


def _tail(log: Path, lines: int = 30) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def stop(home: Path = DEFAULT_HOME, timeout: float = 60.0) -> bool:
    """Stop the server recorded in ``home`` cleanly (SIGTERM); SIGKILL after ``timeout``."""
    pid_file = home / "server.pid"
    if not pid_file.exists():
        return False
    pid = int(pid_file.read_text())
    pid_file.unlink()
    return terminate(pid, timeout)


def terminate(pid: int, timeout: float = 60.0) -> bool:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)
    return True


def _alive(pid: int) -> bool:
    try:
        finished, _ = os.waitpid(pid, os.WNOHANG)
        if finished == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in _proc_state(pid)


def _proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return "zombie"


def port_of(uri: str) -> int:
    """The Bolt port of a ``bolt://host:port`` or ``neo4j://host:port`` URI."""
    authority = uri.split("://", 1)[-1].split("/", 1)[0]
    return int(authority.rsplit(":", 1)[1]) if ":" in authority else 7687


def run_with_server(command: list[str], home: Path = DEFAULT_HOME) -> int:
    """Run ``command`` with Neo4j up: reuse the one at L3MP_NEO4J_URI, else start one and stop it after."""
    uri = os.environ.get("L3MP_NEO4J_URI", "bolt://127.0.0.1:7687")
    port = port_of(uri)
    started = None
    if not is_listening(port):
        started = start(port, os.environ.get("L3MP_NEO4J_PASSWORD", ""), home)
        print(f"started Neo4j on bolt://127.0.0.1:{port} (pid {started.pid}); it stops when the command ends")
    try:
        return subprocess.call(command)
    finally:
        if started is not None:
            stop(home)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "run":
        command = argv[2:] if argv[1:2] == ["--"] else argv[1:]
        try:
            return run_with_server(command)
        except Neo4jServerError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("build", "start", "stop", "status"))
    parser.add_argument("--port", type=int, default=7687)
    parser.add_argument("--password", default="")
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME)
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            print(build())
        elif args.command == "start":
            handle = start(args.port, args.password, args.home)
            print(f"neo4j ready on bolt://127.0.0.1:{handle.port} (pid {handle.pid}, log {handle.log})")
        elif args.command == "stop":
            print("stopped" if stop(args.home) else "not running")
        else:
            up = is_listening(args.port)
            print(f"bolt://127.0.0.1:{args.port} is {'up' if up else 'down'}")
            return 0 if up else 1
    except Neo4jServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
