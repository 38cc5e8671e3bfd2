"""English for a domain: one template per predicate and per action (``language.toml``).

Templates use positional placeholders for the arguments: ``light_on = "{0} is on"``.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from kg_memory.errors import DomainError
from kg_memory.model import Fact


@dataclass(frozen=True, slots=True)
class Language:
    predicates: Mapping[str, str]
    actions: Mapping[str, str]

    def fact(self, fact: Fact, labels: Mapping[str, str] | None = None) -> str:
        """``(light_on lamp_1)`` → ``"lamp_1 is on"`` (or the entity labels, if given)."""
        template = self.predicates.get(fact.predicate)
        if template is None:
            return str(fact)
        return template.format(*_names(fact.args, labels))

    def action(self, name: str, args: Sequence[str], labels: Mapping[str, str] | None = None) -> str:
        template = self.actions.get(name)
        if template is None:
            return f"({' '.join((name, *args))})"
        return template.format(*_names(args, labels))


def _names(args: Sequence[str], labels: Mapping[str, str] | None) -> list[str]:
    return [labels.get(a, a) if labels else a for a in args]


def load_language(path: Path, predicates: Mapping[str, int], actions: Mapping[str, int]) -> Language:
    """Read and check ``language.toml`` against the domain's predicate and action arities."""
    if not path.exists():
        raise DomainError(path, "missing: every domain needs an English template per predicate and action")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise DomainError(path, f"not valid TOML: {exc}") from exc
    return Language(
        predicates=_section(path, data, "predicates", predicates),
        actions=_section(path, data, "actions", actions),
    )


def _section(path: Path, data: Mapping[str, object], section: str, arities: Mapping[str, int]) -> Mapping[str, str]:
    raw = data.get(section, {})
    if not isinstance(raw, dict):
        raise DomainError(path, f'[{section}] must be a table of name = "template"')
    templates = {str(k).lower(): v for k, v in raw.items()}
    missing = sorted(set(arities) - set(templates))
    if missing:
        raise DomainError(path, f"[{section}] has no template for {', '.join(missing)}")
    extra = sorted(set(templates) - set(arities))
    if extra:
        raise DomainError(path, f"[{section}] has templates for unknown {section}: {', '.join(extra)}")
    for name, template in templates.items():
        _check_template(path, section, name, template, arities[name])
    return MappingProxyType(templates)


def _check_template(path: Path, section: str, name: str, template: object, arity: int) -> None:
    if not isinstance(template, str) or not template.strip():
        raise DomainError(path, f"[{section}] {name}: the template must be a non-empty string")
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise DomainError(path, f"[{section}] {name}: {exc}") from exc
    for field_name in fields:
        if not field_name.isdigit() or int(field_name) >= arity:
            raise DomainError(
                path, f"[{section}] {name}: placeholder {{{field_name}}} is not one of {{0}}..{{{arity - 1}}}"
            )
