"""The house's rules, checked on the code itself: the product never loads the lab, no import circles,
no private module used from another package, every package face exports what it lists, and the
import-linter contracts hold and really catch what they forbid."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import grimp
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("kg_memory", "retrieval", "planning", "perception", "l3mp", "sim", "experiments")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def test_the_product_loads_nothing_of_the_lab() -> None:
    code = (
        "import l3mp.service, l3mp.runtime, l3mp.cli; import sys; "
        "assert not any(m == 'sim' or m.startswith('sim.') for m in sys.modules); "
        "assert not any(m == 'experiments' or m.startswith('experiments.') for m in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_no_module_imports_itself_through_others() -> None:
    graph = _graph()
    edges = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.split(".")[0] in PACKAGES:
                edges.add_edge(module, imported)
    circles = [sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1]
    assert circles == []


def _private_owner(module: str) -> str | None:
    """The package a private module (a ``_name`` part) belongs to, or None if it is public."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def test_no_private_module_is_imported_from_another_package() -> None:
    graph = _graph()
    crossings = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            owner = _private_owner(imported)
            if owner is not None and not (module == owner or module.startswith(owner + ".")):
                crossings.append(f"{module} -> {imported}")
    assert crossings == []


def _faces() -> list[str]:
    faces = []
    for package in PACKAGES:
        for init in sorted((ROOT / package).rglob("__init__.py")):
            faces.append(".".join(init.parent.relative_to(ROOT).parts))
    return faces


@pytest.mark.parametrize("face", _faces())
def test_every_package_face_exports_exactly_what_it_lists(face: str) -> None:
    module = importlib.import_module(face)
    names = getattr(module, "__all__", None)
    if names is None:  # a namespace of subpackages only (e.g. the domains' data folder)
        public = [n for n, v in vars(module).items() if not n.startswith("_") and not isinstance(v, ModuleType)]
        assert public == [], f"{face} defines names but lists none"
        return
    assert len(names) == len(set(names)), f"{face} lists a name twice"
    assert [n for n in names if not hasattr(module, n)] == [], f"{face} lists names it does not have"


def test_the_import_contracts_hold() -> None:
    result = subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# One deliberate violation per contract: the contract must break on it, or it guards nothing.
VIOLATIONS = {
    "Packages import downwards only": ("l3mp/_violation.py", "import sim\n"),
    "Inside the product": ("l3mp/llm/_violation.py", "import l3mp.pipelines\n"),
    "Only l3mp.llm talks to language-model servers": ("l3mp/pipelines/_violation.py", "import openai\n"),
    "The ground (kg_memory)": ("planning/_violation.py", "import rich\n"),
    "Only the wiring and the stores name a store backend": ("l3mp/service/_violation.py", "import sqlite3\n"),
}


@pytest.mark.slow
@pytest.mark.parametrize("contract", sorted(VIOLATIONS))
def test_each_contract_breaks_on_a_deliberate_violation(tmp_path: Path, contract: str) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "results"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    path, code = VIOLATIONS[contract]
    (tmp_path / path).write_text(code)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)}
    result = subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in " ".join(broken.split()), result.stdout
    assert "_violation" in result.stdout
