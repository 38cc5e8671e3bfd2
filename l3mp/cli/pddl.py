"""``l3mp pddl``: PDDL benchmark problems into memories, and their goals as text.

    l3mp [--store neo4j] [--db FILE] pddl import DOMAIN PROBLEM --memory NAME [--json]
    l3mp pddl goal PROBLEM

``import`` installs the domain where every store finds it by name (see
:mod:`l3mp.pipelines.domains`), then creates the memory in one verified update.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from l3mp.cli._base import CliState, json_option, pass_state


@click.group()
def pddl() -> None:
    """PDDL problems (e.g. IPC benchmarks) into memories."""


@pddl.command("import")
@click.argument("domain", type=click.Path(path_type=Path))
@click.argument("problem", type=click.Path(path_type=Path))
@click.option("--memory", required=True, help="name of the memory to create")
@json_option
@pass_state
def import_(state: CliState, domain: Path, problem: Path, memory: str, as_json: bool) -> int:
    """Create a memory from a problem's objects and :init."""
    from l3mp.pipelines import import_problem

    report = import_problem(state.settings(), domain, problem, memory)
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
        return 0
    state.console.print(
        f"created memory {report.memory!r} on {report.store}: {report.entities} entities and {report.facts} facts "
        f"of problem {report.problem} (domain {report.domain}, from {report.domain_path}), version {report.version}",
        markup=False,
    )
    return 0


@pddl.command()
@click.argument("problem", type=click.Path(path_type=Path))
def goal(problem: Path) -> int:
    """Print a problem's goal as PDDL (for l3mp plan --goal)."""
    from planning.pddl_io import goal_of, read_text

    sys.stdout.write(f"{goal_of(read_text(problem, 'problem'), problem)}\n")
    return 0
