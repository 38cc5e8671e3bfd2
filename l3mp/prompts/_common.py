"""Shared pieces of the prompts: input checks, the domain's vocabulary, entities and facts as text.

Every list is sorted so the rendered text depends only on the inputs, never on their order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kg_memory.domain import ROOT_TYPE, Domain, PredicateSchema
from kg_memory.errors import L3mpError
from kg_memory.model import Entity, Fact
from kg_memory.rules import GroupKind
from l3mp.llm.base import Message

ISSUES_HEADER = "Your previous answer had these problems:"
TRIPLE_NOTE = (
    "Facts are written one per line as (subject, predicate, object); "
    "a one-argument fact is written (subject, predicate, true)."
)


class InvalidPromptInput(L3mpError):
    """A prompt was asked to render from bad inputs (misuse or an empty request); carries the value."""

    def __init__(self, what: str, value: object, problem: str) -> None:
        self.what = what
        self.value = value
        self.problem = problem
        super().__init__(f"invalid {what} {value!r}: {problem}")


def check_domain(value: object) -> Domain:
    if not isinstance(value, Domain):
        raise InvalidPromptInput("domain", value, "must be a Domain")
    return value


def check_text(what: str, value: object) -> str:
    """A non-empty string, with its whitespace runs collapsed."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidPromptInput(what, value, "must be a non-empty string")
    return " ".join(value.split())


def check_items(what: str, values: object, kind: type[Any]) -> tuple[Any, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise InvalidPromptInput(what, values, f"must be a sequence of {kind.__name__}")
    items = tuple(values)
    bad = [v for v in items if not isinstance(v, kind)]
    if bad:
        raise InvalidPromptInput(what, bad[0], f"every item must be a {kind.__name__}")
    return items


def check_issues(values: object) -> tuple[str, ...]:
    issues = check_items("issues", values, str)
    return tuple(check_text("issue", issue) for issue in issues)


def predicate_line(schema: PredicateSchema, template: str | None) -> str:
    """``(on ?i - item ?f - furniture): ?i is on ?f``."""
    if template is None:
        return schema.signature()
    return f"{schema.signature()}: {template.format(*(f'?{p.name}' for p in schema.parameters))}"


def render_predicates(domain: Domain) -> str:
    templates = domain.language.predicates
    return "\n".join(predicate_line(domain.predicates[n], templates.get(n)) for n in sorted(domain.predicates))


def render_types(domain: Domain) -> str:
    """One line per type that has kinds, ``item: book, dish, pen``, sorted; the root ``object`` first."""
    kinds: dict[str, list[str]] = {}
    for name, parent in domain.types.items():
        if name != ROOT_TYPE:
            kinds.setdefault(parent or ROOT_TYPE, []).append(name)
    order = sorted(kinds, key=lambda t: (t != ROOT_TYPE, t))
    return "\n".join(f"{t}: {', '.join(sorted(kinds[t]))}" for t in order)


def render_entities(entities: Sequence[Entity]) -> str:
    """``mug_1 (dish): blue mug``, one per line, by name; ``(none)`` when empty."""
    unique = {e.name: e for e in entities}
    lines = [f"{e.name} ({e.type}): {e.label}" for _, e in sorted(unique.items())]
    return "\n".join(lines) or "(none)"


def render_facts(facts: Sequence[Fact]) -> str:
    """The triple view, one fact per line, sorted; ``(none)`` when empty."""
    return "\n".join(sorted({f.display() for f in facts})) or "(none)"


def domain_block(domain: Domain) -> str:
    """The text every context prompt of ``domain`` starts with, byte for byte: a server that caches
    prompt prefixes reuses it from one call of an update (or a plan request) to the next."""
    return (
        f'A household robot keeps a memory of a home: facts over the predicates of the PDDL domain "{domain.name}".\n\n'
        f"Predicates (parameters, then meaning):\n{render_predicates(domain)}\n\n"
        f"Entity types (a type: its kinds):\n{render_types(domain)}"
    )


def example_predicate(domain: Domain, arity: int) -> PredicateSchema | None:
    """The predicate of ``arity`` the static examples use: one people change, with an English template,
    whose parameters no constant fills, earliest in the functional rules (a location: the example of a
    move), then first by name."""
    functional = [p.predicate for g in domain.rules.groups if g.kind == GroupKind.FUNCTIONAL for p in g.patterns]
    templates = domain.language.predicates
    constant_types = {t for c in domain.constants.values() for t in domain.lineage(c)}

    def rank(schema: PredicateSchema) -> tuple[bool, bool, bool, int, str]:
        place = functional.index(schema.name) if schema.name in functional else len(functional)
        constant = any(p.type in constant_types for p in schema.parameters)
        return (schema.static, schema.name not in templates, constant, place, schema.name)

    candidates = [s for s in domain.predicates.values() if s.arity == arity and not s.numeric]
    return min(candidates, key=rank, default=None)


def example_args(domain: Domain, schema: PredicateSchema, number: int = 1) -> tuple[str, ...]:
    """Names for an example fact of ``schema``, made from the domain alone (never from a request, so the
    prompt's leading text stays the same): a constant of the parameter's type, else ``<type>_<n>``,
    numbered apart where two parameters share a type."""
    names: list[str] = []
    for parameter in schema.parameters:
        constants = sorted(c for c, t in domain.constants.items() if domain.is_subtype(t, parameter.type))
        name = constants[0] if constants else f"{parameter.type}_{number}".replace("-", "_")
        while name in names:
            name = f"{parameter.type}_{number + len(names)}".replace("-", "_")
        names.append(name)
    return tuple(names)


def render_example(domain: Domain, fact: Fact) -> str:
    """``"mug_1 is on table_1" is (mug_1, on, table_1), written {"predicate": "on", "args": ["mug_1", "table_1"]}``."""
    template = domain.language.predicates.get(fact.predicate)
    english = f'"{template.format(*fact.args)}" is ' if template else ""
    args = ", ".join(f'"{a}"' for a in fact.args)
    return f'{english}{fact.display()}, written {{"predicate": "{fact.predicate}", "args": [{args}]}}'


def follow_up(messages: Sequence[Message], previous_answer: str, issues: Sequence[str]) -> list[Message]:
    """The conversation for a re-prompt: the model's previous answer, then what was wrong with it.

    The context is not repeated; the model reads its own answer and the issues, which name facts.
    """
    problems = check_issues(issues)
    if not problems:
        raise InvalidPromptInput("issues", issues, "a re-prompt needs at least one issue")
    feedback = ISSUES_HEADER + "\n" + "\n".join(f"- {i}" for i in problems) + "\nAnswer again, fixing them."
    return [*messages, Message("assistant", previous_answer), Message("user", feedback)]


def strict_object(properties: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-schema object in OpenAI strict mode: every property required, nothing else allowed."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties),
        "additionalProperties": False,
    }


def string_array() -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}}


def render_context_request(entities: Sequence[Entity], facts: Sequence[Fact], label: str, text: str) -> str:
    """The user message of prompts that act on retrieved context: entities, facts, the request."""
    return (
        f"Entities (name (type): label):\n{render_entities(entities)}\n\n"
        f"Current facts:\n{render_facts(facts)}\n\n"
        f"{label}: {text}"
    )


def check_context(inputs: Any, text_field: str) -> None:
    """Validate and normalize, in place, the fields shared by the context prompts' inputs."""
    check_domain(inputs.domain)
    object.__setattr__(inputs, text_field, check_text(text_field, getattr(inputs, text_field)))
    object.__setattr__(inputs, "entities", check_items("entities", inputs.entities, Entity))
    object.__setattr__(inputs, "facts", check_items("facts", inputs.facts, Fact))
