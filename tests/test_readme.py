"""The README's Python blocks are runnable as written: executed in order, in one namespace, in a
fresh folder (as a reader would paste them into one session). A block that must not run is
marked ```text instead."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of every ```python block."""
    return [(text.count("\n", 0, match.start()) + 1, match.group(1)) for match in BLOCK.finditer(text)]


def test_the_readme_has_python_blocks() -> None:
    assert len(python_blocks(README.read_text(encoding="utf-8"))) >= 3


@pytest.mark.slow
def test_the_readme_python_blocks_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in [n for n in os.environ if n.startswith("L3MP_")]:  # the README's defaults, not the runner's
        monkeypatch.delenv(name)
    namespace: dict[str, object] = {"__name__": "readme"}
    for line, code in python_blocks(README.read_text(encoding="utf-8")):
        try:
            exec(compile(code, f"README.md:{line}", "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"the README's Python block at line {line} fails: {type(exc).__name__}: {exc}")
