"""The Python blocks of the README and of every documentation page (docs/**/*.md) are runnable as
written: a page's blocks are executed in order, in one namespace, in a fresh folder (as a reader
would paste them into one session); each page on its own. A block that must not run is marked
```text instead."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of every ```python block."""
    return [(text.count("\n", 0, match.start()) + 1, match.group(1)) for match in BLOCK.finditer(text)]


def pages() -> list[Path]:
    """The README and the documentation's pages, in a stable order."""
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


def runnable_pages() -> list[Path]:
    return [page for page in pages() if python_blocks(page.read_text(encoding="utf-8"))]


def test_the_readme_and_the_docs_have_python_blocks() -> None:
    assert python_blocks(README.read_text(encoding="utf-8"))
    assert sum(len(python_blocks(page.read_text(encoding="utf-8"))) for page in pages()) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("page", runnable_pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_a_pages_python_blocks_run_in_order(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in [n for n in os.environ if n.startswith("L3MP_")]:  # the page's defaults, not the runner's
        monkeypatch.delenv(name)
    where = page.relative_to(ROOT)
    namespace: dict[str, object] = {"__name__": "readme"}
    for line, code in python_blocks(page.read_text(encoding="utf-8")):
        try:
            exec(compile(code, f"{where}:{line}", "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"the Python block at {where}:{line} fails: {type(exc).__name__}: {exc}")
