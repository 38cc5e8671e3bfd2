"""A planning domain as an immutable schema: types, predicates, constants, actions,
plus its rules and English templates.

A domain lives in a folder: ``domain.pddl``, ``rules.toml`` and ``language.toml``.
The PDDL is parsed by unified-planning's reader, so anything it accepts (typing,
negative preconditions, conditional effects, ``forall``) loads.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from kg_memory._pddl import ParsedDomain, parse_pddl_domain
from kg_memory.errors import DomainError, UnknownDomain
from kg_memory.formula import ActionSchema, Parameter
from kg_memory.language import Language, load_language
from kg_memory.model import Entity
from kg_memory.rules import Rules, load_rules

ROOT_TYPE = "object"
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class PredicateSchema:
    name: str
    parameters: tuple[Parameter, ...]
    static: bool
    numeric: bool = False  # a static numeric function (an action cost): its facts carry a value

    @property
    def arity(self) -> int:
        return len(self.parameters)

    def signature(self) -> str:
        params = " ".join(f"?{p.name} - {p.type}" for p in self.parameters)
        atom = f"({self.name}{' ' + params if params else ''})"
        return f"(= {atom} NUMBER)" if self.numeric else atom


@dataclass(frozen=True, slots=True, kw_only=True)
class Domain:
    name: str
    path: Path
    pddl: str
    types: Mapping[str, str | None]  # type -> parent (None for the root, "object")
    predicates: Mapping[str, PredicateSchema]
    constants: Mapping[str, str]  # name -> type
    actions: Mapping[str, ActionSchema]
    rules: Rules
    language: Language
    # IPC action costs: a total-cost to minimise. The static numeric functions the costs read
    # are in ``predicates`` with ``numeric`` set, so facts about them are checked like others.
    costs: bool = False
    planner_pddl: str = ""  # the domain as planners get it (normalised spelling, integer costs)
    # what has been worked out from the fields above (see derived): never part of the domain's value
    _derived: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    # is_subtype's answers for the domain's own types: every write asks it many times
    _subtype: dict[tuple[str, str], bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    def derived(self, compute: Callable[[Domain], _T]) -> _T:
        """``compute(self)``, worked out once per domain: a domain never changes, and what every write
        asks of it (type lineages, static predicates) would otherwise be rebuilt for each one."""
        try:
            value: _T = self._derived[compute]
        except KeyError:
            value = self._derived.setdefault(compute, compute(self))
        return value

    def is_subtype(self, type_: str, ancestor: str) -> bool:
        """Whether ``type_`` is ``ancestor`` or descends from it."""
        try:
            return self._subtype[type_, ancestor]
        except KeyError:
            found = ancestor in self.lineage(type_)
            if type_ in self.types and ancestor in self.types:  # never grown by names from outside
                self._subtype[type_, ancestor] = found
            return found

    def lineage(self, type_: str) -> tuple[str, ...]:
        """``type_`` and its ancestors, nearest first, ending at ``object``."""
        return self.derived(_lineages).get(type_) or _lineage(self.types, type_)

    def constant_entities(self) -> tuple[Entity, ...]:
        return self.derived(_constant_entities)

    @property
    def static_predicates(self) -> frozenset[str]:
        return self.derived(_static_names)

    @property
    def functions(self) -> frozenset[str]:
        """The static numeric functions (distances and other action costs)."""
        return frozenset(p.name for p in self.predicates.values() if p.numeric)


def _lineages(domain: Domain) -> dict[str, tuple[str, ...]]:
    return {type_: _lineage(domain.types, type_) for type_ in domain.types}


def _constant_entities(domain: Domain) -> tuple[Entity, ...]:
    return tuple(Entity(name, type_) for name, type_ in sorted(domain.constants.items()))


def _static_names(domain: Domain) -> frozenset[str]:
    return frozenset(p.name for p in domain.predicates.values() if p.static)


def _lineage(types: Mapping[str, str | None], type_: str) -> tuple[str, ...]:
    chain: list[str] = []
    current: str | None = type_
    while current is not None and current in types and current not in chain:
        chain.append(current)
        current = types[current]
    return tuple(chain)


def load_domain(folder: Path | str) -> Domain:
    """Load a domain folder; any problem raises :class:`DomainError` naming the file."""
    folder = Path(folder)
    return _load_cached(folder.resolve())


@functools.lru_cache(maxsize=32)
def _load_cached(folder: Path) -> Domain:
    pddl_path = folder / "domain.pddl"
    if not pddl_path.is_file():
        raise DomainError(pddl_path, "no such file (a domain folder needs domain.pddl)")
    pddl = pddl_path.read_text(encoding="utf-8")
    parsed = parse_pddl_domain(pddl_path, pddl)
    rules = load_rules(folder / "rules.toml")
    _check_rules(folder / "rules.toml", rules, parsed)
    language = load_language(
        folder / "language.toml",
        {n: len(p) for n, p in {**parsed.predicates, **parsed.functions}.items()},
        {n: len(a.parameters) for n, a in parsed.actions.items()},
    )
    return _domain(folder, pddl, parsed, rules, language)


def domain_from_pddl(path: Path | str, pddl: str) -> Domain:
    """A bare PDDL domain (say, an IPC benchmark's) with no rules and no English templates:
    facts and actions are shown as PDDL. Raises :class:`DomainError` naming ``path``."""
    path = Path(path)
    parsed = parse_pddl_domain(path, pddl)
    return _domain(path.parent, pddl, parsed, Rules(), Language(MappingProxyType({}), MappingProxyType({})))


def _domain(folder: Path, pddl: str, parsed: ParsedDomain, rules: Rules, language: Language) -> Domain:
    static = _static_predicates(parsed, rules)
    predicates = {
        name: PredicateSchema(name, tuple(Parameter(*p) for p in params), name in static)
        for name, params in parsed.predicates.items()
    }
    predicates |= {
        name: PredicateSchema(name, tuple(Parameter(*p) for p in params), True, numeric=True)
        for name, params in parsed.functions.items()
    }
    return Domain(
        name=parsed.name,
        path=folder,
        pddl=pddl,
        types=MappingProxyType(dict(parsed.types)),
        predicates=MappingProxyType(predicates),
        constants=MappingProxyType(dict(parsed.constants)),
        actions=MappingProxyType(dict(parsed.actions)),
        rules=rules,
        language=language,
        costs=parsed.costs,
        planner_pddl=parsed.planner_text,
    )


def _static_predicates(parsed: ParsedDomain, rules: Rules) -> frozenset[str]:
    """Predicates no action changes and the rules do not declare dynamic."""
    changed = {predicate for action in parsed.actions.values() for predicate in action.changes}
    return frozenset(set(parsed.predicates) - changed - rules.dynamic)


def _check_rules(path: Path, rules: Rules, parsed: ParsedDomain) -> None:
    unknown = sorted(rules.predicates() - set(parsed.predicates) - set(parsed.functions))
    if unknown:
        raise DomainError(path, f"rules mention predicates the domain does not define: {', '.join(unknown)}")
    for invariant in rules.invariants:
        if invariant.type and invariant.type not in parsed.types:
            raise DomainError(path, f"invariant names unknown type {invariant.type!r}")
    patterns = [p for group in rules.groups for p in group.patterns]
    for invariant in rules.invariants:
        patterns += [*invariant.patterns, *([invariant.condition] if invariant.condition else [])]
    for pattern in patterns:
        if len(pattern.terms) != len({**parsed.predicates, **parsed.functions}[pattern.predicate]):
            raise DomainError(path, f"pattern {pattern} has the wrong number of arguments")


class DomainRegistry:
    """Finds domains by name: the ones shipped with the package plus registered folders."""

    def __init__(self, extra: Mapping[str, Path | str] | None = None) -> None:
        self._folders: dict[str, Path] = dict(_builtin_folders())
        for name, folder in (extra or {}).items():
            self.register(name, folder)

    def register(self, name: str, folder: Path | str) -> None:
        self._folders[name] = Path(folder)

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._folders))

    def __contains__(self, name: object) -> bool:
        return name in self._folders

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> Domain:
        folder = self._folders.get(name)
        if folder is None:
            raise UnknownDomain(name, self.names())
        return load_domain(folder)


def _builtin_folders() -> dict[str, Path]:
    root = resources.files("kg_memory") / "domains"
    found: dict[str, Path] = {}
    for entry in root.iterdir():
        if entry.is_dir() and (entry / "domain.pddl").is_file():
            found[entry.name] = Path(str(entry))
    return found
