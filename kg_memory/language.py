"""English for a domain: one template per predicate and per action (``language.toml``).

Templates use positional placeholders for the arguments: ``light_on = "{0} is on"``. Two optional
tables help read what people say: ``[negations]`` says a fact that stops holding in plain words
(``light_on = "{0} is off"``), ``[cues]`` lists the words that signal a predicate's fact being
added or removed (``light_on = { add = ["turned on"], remove = ["off"] }``), and ``[[examples]]``
pair a report with what is true after it, for prompts; ``[markers]`` are the words that introduce
a two-place predicate's second argument ("into" for ``inside``).
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from kg_memory.errors import DomainError
from kg_memory.model import Fact


@dataclass(frozen=True, slots=True, kw_only=True)
class Cues:
    """Words (or phrases) that signal a predicate's fact becoming true (``add``) or false (``remove``)."""

    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Language:
    predicates: Mapping[str, str]
    actions: Mapping[str, str]
    negations: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    cues: Mapping[str, Cues] = field(default_factory=lambda: MappingProxyType({}))
    examples: tuple[tuple[str, str], ...] = ()  # (what a person said, what is true now), for prompts
    markers: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    def fact(self, fact: Fact, labels: Mapping[str, str] | None = None) -> str:
        """``(light_on lamp_1)`` → ``"lamp_1 is on"`` (or the entity labels, if given)."""
        template = self.predicates.get(fact.predicate)
        if template is None:
            return str(fact)
        return _filled(template, fact.args, labels) or str(fact)

    def no_longer(self, fact: Fact, labels: Mapping[str, str] | None = None) -> str:
        """``(light_on lamp_1)`` stopping → ``"lamp_1 is off"`` (or ``"not: lamp_1 is on"`` without a negation)."""
        template = self.negations.get(fact.predicate)
        if template is None:
            return f"not: {self.fact(fact, labels)}"
        return _filled(template, fact.args, labels) or f"not: {fact}"

    def action(self, name: str, args: Sequence[str], labels: Mapping[str, str] | None = None) -> str:
        template = self.actions.get(name)
        if template is None:
            return f"({' '.join((name, *args))})"
        return template.format(*_names(args, labels))


def _filled(template: str, args: Sequence[str], labels: Mapping[str, str] | None) -> str | None:
    """The template filled, or ``None`` for a fact with too few arguments (a malformed one is
    still worded in the verifier's refusal, never a crash)."""
    try:
        return template.format(*_names(args, labels))
    except IndexError:
        return None


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
        negations=_optional_section(path, data, "negations", predicates),
        cues=_cues(path, data, predicates),
        examples=_examples(path, data),
        markers=_markers(path, data, predicates),
    )


def _markers(path: Path, data: Mapping[str, object], arities: Mapping[str, int]) -> Mapping[str, tuple[str, ...]]:
    raw = data.get("markers", {})
    if not isinstance(raw, dict):
        raise DomainError(path, '[markers] must be a table of predicate = ["word", ...]')
    markers: dict[str, tuple[str, ...]] = {}
    for name, values in raw.items():
        key = str(name).lower()
        if arities.get(key, 0) < 2:
            raise DomainError(path, f"[markers] {name}: must name a predicate of two or more arguments")
        if not isinstance(values, list) or not all(isinstance(v, str) and v.strip() for v in values):
            raise DomainError(path, f"[markers] {name}: must be a list of words, got {values!r}")
        markers[key] = tuple(v.lower() for v in values)
    return MappingProxyType(markers)


def _examples(path: Path, data: Mapping[str, object]) -> tuple[tuple[str, str], ...]:
    raw = data.get("examples", [])
    if not isinstance(raw, list):
        raise DomainError(path, '[[examples]] must be tables of report = "..." and now = "..."')
    examples = []
    for entry in raw:
        if not isinstance(entry, dict) or set(entry) != {"report", "now"}:
            raise DomainError(path, f'[[examples]]: each needs report = "..." and now = "...", got {entry!r}')
        if not all(isinstance(v, str) and v.strip() for v in entry.values()):
            raise DomainError(path, f"[[examples]]: report and now must be non-empty strings, got {entry!r}")
        examples.append((entry["report"], entry["now"]))
    return tuple(examples)


def _optional_section(
    path: Path, data: Mapping[str, object], section: str, arities: Mapping[str, int]
) -> Mapping[str, str]:
    """A table of templates for some of the names (none is fine)."""
    return _section(path, data, section, arities, complete=False)


def _cues(path: Path, data: Mapping[str, object], arities: Mapping[str, int]) -> Mapping[str, Cues]:
    raw = data.get("cues", {})
    if not isinstance(raw, dict):
        raise DomainError(path, "[cues] must be a table of predicate = { add = [...], remove = [...] }")
    cues: dict[str, Cues] = {}
    for name, entry in raw.items():
        key = str(name).lower()
        if key not in arities:
            raise DomainError(path, f"[cues] names an unknown predicate: {name}")
        if not isinstance(entry, dict) or set(entry) - {"add", "remove"}:
            raise DomainError(path, f"[cues] {name}: must be {{ add = [...], remove = [...] }}, got {entry!r}")
        words = {side: entry.get(side, []) for side in ("add", "remove")}
        for side, values in words.items():
            if not isinstance(values, list) or not all(isinstance(v, str) and v.strip() for v in values):
                raise DomainError(path, f"[cues] {name}.{side}: must be a list of words, got {values!r}")
        cues[key] = Cues(add=tuple(w.lower() for w in words["add"]), remove=tuple(w.lower() for w in words["remove"]))
    return MappingProxyType(cues)


def _section(
    path: Path, data: Mapping[str, object], section: str, arities: Mapping[str, int], *, complete: bool = True
) -> Mapping[str, str]:
    """A table of templates: one for every name (``complete``), or for some of them."""
    raw = data.get(section, {})
    if not isinstance(raw, dict):
        raise DomainError(path, f'[{section}] must be a table of name = "template"')
    templates = {str(k).lower(): v for k, v in raw.items()}
    missing = sorted(set(arities) - set(templates))
    if missing and complete:
        raise DomainError(path, f"[{section}] has no template for {', '.join(missing)}")
    extra = sorted(set(templates) - set(arities))
    if extra:
        raise DomainError(path, f"[{section}] has templates for unknown names: {', '.join(extra)}")
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
