"""Answer schemas built per request from the domain and the context.

The static ``SCHEMA`` of each prompt says only the answer's shape (predicates and arguments as free
strings). The schemas here also say its words: a state change's edits are one object per predicate of
the domain, its name a one-item enum and its arguments exactly its arity, each an enum of the context's
names (and the domain's constants) of the parameter's type; a goal is a pattern over the same atoms.
A server that compiles the schema into a grammar (OpenAI strict mode, vLLM, llama.cpp) then cannot
write a predicate the domain lacks or an argument of the wrong type. The answer's shape is unchanged,
so the parsers read it as before, and it is still verified exactly as before.

Two dialects, because servers accept different JSON schema: ``portable`` (every server: OpenAI's
strict mode refuses ``prefixItems``) types each argument by the union of the predicate's parameter
types; ``tuples`` (llama-cpp-python's JSON mode, which compiles ``prefixItems``) types each argument by
its own position. Enums are bounded (``MAX_NAMES``, ``MAX_TOTAL_NAMES``: past them a type's parameters
take any name) and arrays have a most length, so a large context never makes a schema a server chokes on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from kg_memory.domain import ROOT_TYPE, Domain, PredicateSchema
from kg_memory.model import Entity
from l3mp.prompts._common import strict_object

Dialect = Literal["portable", "tuples"]
DIALECTS: Final = ("portable", "tuples")
# Names in one enum, and in all of a schema's: past them the largest types are left free strings.
# A grammar's cost grows with its alternatives (a few hundred names cost little, thousands cost
# seconds a request), and OpenAI's strict mode takes at most 1000 enum values in a schema.
MAX_NAMES: Final = 500
MAX_TOTAL_NAMES: Final = 900
MAX_EDITS: Final = 16  # facts per side of a state change
MAX_SELECTED: Final = 24  # entities an entity selection may name
MAX_NODES: Final = 12  # query-graph nodes (and ids n1..n12)
MAX_EDGES: Final = 16  # query-graph edges
MAX_CONJUNCTS: Final = 8  # items of a goal's and/or
_RULE_CHARS = re.compile(r"[^a-zA-Z0-9-]")
_EDIT: Final = "edit"
_ANY_NAME: Final = "[a-z][a-z0-9_-]*"


def dialect_for(model: object) -> Dialect:
    """``tuples`` for a client that sends the schema in llama-cpp-python's JSON mode (its ``mode``
    attribute says so), whose own converter compiles ``prefixItems``; ``portable`` for any other model."""
    return "tuples" if getattr(model, "mode", None) == "json_object_schema" else "portable"


def typed_names(domain: Domain, entities: Iterable[Entity]) -> dict[str, tuple[str, ...]]:
    """For each parameter type of the domain's predicates, the sorted names that may fill it: the
    entities given and the domain's constants whose type is that type or descends from it."""
    pool = {e.name: e.type for e in entities} | dict(domain.constants)
    lineages = {t: frozenset(domain.lineage(t)) for t in set(pool.values())}
    wanted = sorted({p.type for schema in domain.predicates.values() for p in schema.parameters})
    return {t: tuple(sorted(n for n, nt in pool.items() if t in lineages[nt])) for t in wanted}


def fact_predicates(domain: Domain) -> list[PredicateSchema]:
    """The predicates a fact in an answer can use: all but the numeric functions (action costs)."""
    return [domain.predicates[n] for n in sorted(domain.predicates) if not domain.predicates[n].numeric]


def usable_predicates(domain: Domain, names: Mapping[str, Sequence[str]]) -> list[PredicateSchema]:
    """The fact predicates every parameter of which some name of ``names`` can fill."""
    return [s for s in fact_predicates(domain) if all(names.get(p.type) for p in s.parameters)]


def one_of(values: Sequence[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def name_schema(names: Sequence[str]) -> dict[str, Any]:
    """An enum of ``names``, or a free string past ``MAX_NAMES`` (or for none)."""
    return one_of(names) if 0 < len(names) <= MAX_NAMES else {"type": "string"}


def enumerable(names: Mapping[str, Sequence[str]]) -> frozenset[str]:
    """The types of ``names`` whose names a schema lists: the smallest first, while each has at most
    ``MAX_NAMES`` and all together at most ``MAX_TOTAL_NAMES``; the others take any name."""
    kept: set[str] = set()
    total = 0
    for type_ in sorted(names, key=lambda t: (len(names[t]), t)):
        size = len(names[type_])
        if size > MAX_NAMES or total + size > MAX_TOTAL_NAMES:
            break
        kept.add(type_)
        total += size
    return frozenset(kept)


def bounded_array(items: Mapping[str, Any], most: int) -> dict[str, Any]:
    return {"type": "array", "items": dict(items), "maxItems": most}


# -- the state change ------------------------------------------------------------------------------


def state_change_schema(domain: Domain, entities: Iterable[Entity], *, dialect: Dialect = "portable") -> dict[str, Any]:
    """``{"remove": [edit], "add": [edit]}`` with each edit one of the usable predicates, typed.

    With no usable predicate (a context without well-typed arguments for any), an edit is any fact
    predicate's name with free arguments: the verifier says what is wrong, as it always does."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown schema dialect {dialect!r}: use one of {', '.join(DIALECTS)}")
    names = typed_names(domain, entities)
    usable = usable_predicates(domain, names)
    if not usable:
        edit = strict_object(
            {
                "predicate": one_of([s.name for s in fact_predicates(domain)]),
                "args": {"type": "array", "items": {"type": "string"}},
            }
        )
        return _edits(edit, {})
    keys = _def_keys(sorted({p.type for s in usable for p in s.parameters}))
    listed = enumerable({t: names[t] for t in keys})
    branches = [_edit(s, keys, dialect) for s in usable]
    edit = branches[0] if len(branches) == 1 else {"anyOf": branches}
    defs = {keys[t]: one_of(names[t]) if t in listed else {"type": "string"} for t in sorted(keys)}
    return _edits(edit, defs)


def _edits(edit: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """Both sides refer to one definition of an edit: the schema (and its grammar) holds it once."""
    ref = {"$ref": f"#/$defs/{_EDIT}"}
    schema = strict_object({"remove": bounded_array(ref, MAX_EDITS), "add": bounded_array(ref, MAX_EDITS)})
    schema["$defs"] = {_EDIT: dict(edit), **defs}
    return schema


def _def_keys(types: Sequence[str]) -> dict[str, str]:
    """A ``$defs`` key per type: indexed, so types that differ only in ``_``/``-`` stay apart, and made
    of the characters grammar rule names allow (llama.cpp names a rule after the key)."""
    return {t: f"names{i}-{_RULE_CHARS.sub('-', t)}" for i, t in enumerate(types)}


def _edit(schema: PredicateSchema, keys: Mapping[str, str], dialect: Dialect) -> dict[str, Any]:
    refs = [{"$ref": f"#/$defs/{keys[p.type]}"} for p in schema.parameters]
    args: dict[str, Any] = {"type": "array"}
    if dialect == "tuples":
        args["prefixItems"] = refs
    elif refs:
        distinct = list({r["$ref"]: r for r in refs}.values())
        args["items"] = distinct[0] if len(distinct) == 1 else {"anyOf": distinct}
    else:
        args["items"] = {"type": "string"}
    args |= {"minItems": schema.arity, "maxItems": schema.arity}
    return strict_object({"predicate": one_of([schema.name]), "args": args})


# -- the goal --------------------------------------------------------------------------------------


def goal_schema(domain: Domain, entities: Iterable[Entity]) -> dict[str, Any]:
    """``{"goal": "<formula>"}``, the formula a pattern: an atom of a usable predicate with arguments of
    its types, negated or not, alone or in one ``and`` or ``or`` of up to ``MAX_CONJUNCTS`` of them. A
    type past the caps (:func:`enumerable`) takes any name there; with no usable predicate, an atom is
    any fact predicate with any names (the goal checker says what is wrong, as it always does)."""
    names = typed_names(domain, entities)
    usable = usable_predicates(domain, names)
    if usable:
        listed = enumerable({p.type: names[p.type] for s in usable for p in s.parameters})
        arguments = {t: _alternatives(names[t]) if t in listed else _ANY_NAME for t in names}
        pattern = goal_pattern([(s.name, [arguments[p.type] for p in s.parameters]) for s in usable])
    else:
        pattern = goal_pattern([(s.name, [rf"{_ANY_NAME}( {_ANY_NAME})*"]) for s in fact_predicates(domain)])
    return strict_object({"goal": {"type": "string", "pattern": pattern}})


def goal_pattern(atoms: Sequence[tuple[str, Sequence[str]]]) -> str:
    """The regular expression of a goal whose atoms are ``(predicate, [pattern of each argument])``
    (plain groups only: llama.cpp's converter reads no ``(?:``). Predicates whose arguments have the
    same patterns share one alternative, which keeps the pattern short."""
    signatures: dict[tuple[str, ...], list[str]] = {}
    for predicate, arguments in atoms:
        signatures.setdefault(tuple(arguments), []).append(predicate)
    alternatives = [
        "".join([_alternatives(predicates), *(f" {a}" for a in key)]) for key, predicates in signatures.items()
    ]
    atom = rf"\({_alternatives(alternatives)}\)"
    literal = rf"({atom}|\(not {atom}\))"
    return rf"^({literal}|\((and|or)( {literal}){{1,{MAX_CONJUNCTS}}}\))$"


def _alternatives(options: Sequence[str]) -> str:
    # PDDL names ([a-z][a-z0-9_-]*) need no escaping in a pattern
    return options[0] if len(options) == 1 else f"({'|'.join(options)})"


# -- entity selection and the query graph --------------------------------------------------------


def entity_selection_schema(entities: Iterable[Entity]) -> dict[str, Any]:
    """``{"entities": [name, ...]}`` with the names those listed (a free string past ``MAX_NAMES``)."""
    names = sorted({e.name for e in entities})
    return strict_object({"entities": bounded_array(name_schema(names), MAX_SELECTED)})


def query_graph_schema(domain: Domain) -> dict[str, Any]:
    """``{"nodes": [...], "edges": [...]}`` with node ids ``n1``.. (edges name them), and a node's type
    one of the domain's types or null. Mentions and relation phrases stay free: they are the request's
    own words, matched to entities and predicates by meaning later."""
    ids = one_of([f"n{i}" for i in range(1, MAX_NODES + 1)])
    types = sorted(t for t in domain.types if t != ROOT_TYPE)
    node_type = {"anyOf": [one_of(types), {"type": "null"}]} if types else {"type": "null"}
    node = strict_object({"id": ids, "mention": {"type": "string"}, "type": node_type})
    edge = strict_object({"source": ids, "target": ids, "relation": {"type": "string"}})
    return strict_object({"nodes": bounded_array(node, MAX_NODES), "edges": bounded_array(edge, MAX_EDGES)})
