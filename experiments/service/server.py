"""The real server as a subprocess, and a surveyed memory in it: what the service benchmark's load and
burst (experiments.service.load, experiments.service.burst) and the service tests start."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from l3mp.examples import survey_json

SURVEY: dict[str, Any] = survey_json()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """``python -m l3mp --db DB serve`` as a subprocess on a free port; its output goes to ``log``.

    ``env`` adds to (or overrides) this process's environment for the server: its ``L3MP_*`` settings.
    ``instrumented`` runs the same app through ``experiments.service.instrumented`` with these
    arguments instead (the write groups' counters, a profile). ``serve_args`` go to ``serve`` after
    the port (``--root-path /robots/home``).
    """

    def __init__(
        self,
        db: Path,
        log: Path,
        port: int | None = None,
        env: Mapping[str, str] | None = None,
        instrumented: Sequence[str] | None = None,
        serve_args: Sequence[str] = (),
    ) -> None:
        self.db, self.log, self.port = db, log, port or free_port()
        self.serve_args = list(serve_args)
        self.env = dict(env or {})
        self.instrumented = None if instrumented is None else list(instrumented)
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> Server:
        env = {**os.environ, **self.env, "L3MP_SQLITE_PATH": str(self.db), "L3MP_STORE": "sqlite"}
        env.pop("L3MP_API_KEY", None)
        env.pop("L3MP_READ_ONLY_API_KEY", None)
        command = [sys.executable, "-m", "l3mp", "--db", str(self.db), "serve", "--port", str(self.port)]
        command += self.serve_args
        if self.instrumented is not None:
            wrapper = "experiments.service.instrumented"
            command = [sys.executable, "-m", wrapper, "--port", str(self.port), *self.instrumented]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}: see {self.log}")
            try:
                if httpx.get(f"{self.url}/ready", timeout=1.0).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server was not ready within {timeout} s: see {self.log}")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, no lifespan exit."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> Server:
        return self.start() if self.process is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def create_home(url: str, name: str) -> None:
    """A memory in ``example_home`` with the surveyed home (version 1)."""
    with httpx.Client(base_url=url, timeout=30.0) as client:
        created = client.post("/v1/memories", json={"name": name, "domain": "example_home"})
        created.raise_for_status()
        client.post(f"/v1/memories/{name}/entities", json=SURVEY).raise_for_status()
