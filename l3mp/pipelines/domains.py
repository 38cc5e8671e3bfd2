"""Installing a PDDL domain and creating a memory from a PDDL problem (``l3mp pddl import``, and any
caller that brings its own domain).

A memory records only its domain's name, so installing writes the domain file under
``Settings.domains_path/<domain name>/`` (with a starter ``language.toml`` that shows facts
and actions as PDDL until someone writes English templates); every store opened through
:func:`l3mp.wiring.open_store` finds it there by name. Importing another problem of the
same domain reuses the folder; a different domain under a name already taken is an error.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kg_memory import Domain, DomainRegistry, UpdateStatus, WorldMemory, load_domain
from kg_memory.errors import InvalidName
from kg_memory.model import pddl_name
from l3mp.pipelines.errors import PipelineError
from l3mp.settings import Settings
from l3mp.wiring import domain_registry, open_store
from planning import PlanningError, check_readable, problem_pddl
from planning.pddl_io import PddlError, PddlProblem, load_domain_file, read_problem, read_sexpr, read_text


class DomainClash(PipelineError):
    """A domain file whose domain name is taken by a different domain."""

    def __init__(self, name: str, given: Path, installed: Path) -> None:
        self.name = name
        self.given = given
        self.installed = installed
        super().__init__(
            f"a different domain named {name!r} is already installed: {given} differs from {installed}; "
            "rename the domain in one of the files"
        )


class ImportFailed(PipelineError):
    """A problem that could not become a memory; nothing of it was kept in the store."""

    def __init__(self, problem: Path | str, reason: str) -> None:
        self.problem = str(problem)
        super().__init__(f"{problem}: not imported: {reason}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportReport:
    memory: str
    domain: str
    domain_path: Path  # the installed domain file the memory's domain is read from
    problem: str
    entities: int
    facts: int
    version: int
    store: str

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "domain_path": str(self.domain_path)}


def import_problem(settings: Settings, domain_path: Path, problem_path: Path, memory: str) -> ImportReport:
    """Read both files (nothing is written if either fails), install the domain, then create
    the memory with the problem's objects and ``:init`` in one verified update. When the memory
    cannot be made (a store refusing the domain, a rejected ``:init``), a domain folder this call
    installed is removed again: a failed import leaves nothing behind."""
    domain = load_domain_file(domain_path)
    problem = read_problem(domain, read_text(problem_path, "problem"), problem_path)
    # the planners read the task as we write it from memory: a task they cannot read is refused here
    task = problem_pddl(domain, problem.entities, problem.facts, problem.goal, name=problem.name)
    installed, new_folder = _install(domain, domain_path, settings.domains_path, task)
    try:
        return _create(settings, installed, problem, problem_path, memory)
    except BaseException:
        if new_folder is not None:
            shutil.rmtree(new_folder, ignore_errors=True)
        raise


def _create(settings: Settings, domain: Domain, problem: PddlProblem, problem_path: Path, memory: str) -> ImportReport:
    store = open_store(settings, domain_registry(settings))
    try:
        world = WorldMemory.create(store, memory, domain.name)
        update = world.add_entities(problem.entities, facts=problem.facts, input=f"pddl import {problem_path}")
        if update.status is not UpdateStatus.APPLIED:
            store.delete_memory(world.name)  # a memory holding none of the problem is no use
            issues = "; ".join(issue.message for issue in update.issues) or update.status.value
            raise ImportFailed(problem_path, issues)
        return ImportReport(
            memory=world.name,
            domain=domain.name,
            domain_path=domain.path / "domain.pddl",
            problem=problem.name,
            entities=len(problem.entities),
            facts=len(problem.facts),
            version=update.version,
            store=store.backend,
        )
    finally:
        store.close()


def install_domain(domain: Domain, source: Path, root: Path, task: str | None = None) -> Domain:
    """The domain (read from ``source``) as stores will find it by name: a shipped one, the
    folder an earlier import made, or a new folder under ``root``. A different domain under a
    name already taken raises :class:`DomainClash`; a name that cannot name a folder (not a PDDL
    name, or longer than every name may be) raises :class:`PddlError` before anything is written.

    A new domain is installed only if Fast Downward's translator reads it (with ``task``, a
    problem of it, or else an empty one): otherwise :class:`PddlError` carries the translator's
    own words and nothing is written."""
    return _install(domain, source, root, task)[0]


def _install(domain: Domain, source: Path, root: Path, task: str | None = None) -> tuple[Domain, Path | None]:
    """:func:`install_domain`, and the folder it made (``None`` when it reused one)."""
    try:
        pddl_name(domain.name, "domain")
    except InvalidName as exc:
        raise PddlError(source, f"{exc}; a domain's name also names its folder") from exc
    shipped = DomainRegistry()
    if domain.name in shipped:
        return _same_or_clash(domain, source, shipped.get(domain.name)), None
    folder = root / domain.name
    if (folder / "domain.pddl").is_file():
        return _same_or_clash(domain, source, load_domain(folder)), None
    _check_plannable(domain, source, task)
    made = None if folder.exists() else folder
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "language.toml").write_text(starter_language(domain), encoding="utf-8")
    # domain.pddl last, by rename: a folder with one is what the registry takes for a domain
    partial = folder / f".domain.pddl.{os.getpid()}"
    partial.write_text(domain.pddl, encoding="utf-8")
    partial.replace(folder / "domain.pddl")
    return load_domain(folder), made


def _check_plannable(domain: Domain, source: Path, task: str | None) -> None:
    """:class:`PddlError` (the translator's message) if no planner of ours can read the domain."""
    if task is None:
        task = f"(define (problem empty) (:domain {domain.name}) (:objects) (:init) (:goal (and)))"
    try:
        check_readable(domain, task)
    except PlanningError as exc:
        raise PddlError(source, f"no planner can read it: {exc}") from exc


def _same_or_clash(new: Domain, source: Path, existing: Domain) -> Domain:
    """``existing`` if its PDDL equals ``new``'s up to comments, spacing and case."""
    installed = existing.path / "domain.pddl"
    if read_sexpr(new.pddl, source) == read_sexpr(existing.pddl, installed):
        return existing
    raise DomainClash(new.name, source, installed)


def starter_language(domain: Domain) -> str:
    """``language.toml`` with a template per predicate and action that shows it as PDDL."""
    predicates = {name: p.arity for name, p in domain.predicates.items()}
    actions = {name: len(a.parameters) for name, a in domain.actions.items()}
    lines = [
        f"# English for domain {domain.name}, written by `l3mp pddl import`.",
        '# Each template shows a fact or action as PDDL; edit them into English, e.g. at = "{0} is at {1}".',
        "[predicates]",
        *_templates(predicates),
        "[actions]",
        *_templates(actions),
    ]
    return "\n".join(lines) + "\n"


def _templates(arities: dict[str, int]) -> list[str]:
    """``"name" = "(name {0} {1})"`` lines; JSON strings are valid TOML basic strings."""
    lines = []
    for name, arity in arities.items():
        template = "(" + " ".join([name, *(f"{{{i}}}" for i in range(arity))]) + ")"
        lines.append(f"{json.dumps(name)} = {json.dumps(template)}")
    return lines
