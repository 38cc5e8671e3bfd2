"""Core value types of the world-state memory: immutable, validated on construction.

The world is closed: a fact that is not stored is false.
"""

from __future__ import annotations

import enum
import functools
import json
import math
import re
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, TypeAlias

from uuid6 import uuid7

from kg_memory.errors import InvalidName, InvalidValue

# PDDL names: a letter, then letters, digits, '_' or '-'. Nothing else is ever interpolated
# into a query, so a quote, brace or backtick can never reach Cypher or SQL as code.
_NAME = re.compile(r"^[a-z][a-z0-9_\-]*$")
_NAME_RULE = "use a letter followed by letters, digits, '_' or '-' (a PDDL name)"
AttrValue: TypeAlias = str | int | float | bool
Triple: TypeAlias = tuple[str, str, str]


# One length for every name, whichever door it comes through (REST, CLI, PDDL files, imports): a
# domain's name also names its folder, and 200 stays well under a file system's 255 bytes.
MAX_NAME_LENGTH = 200


def normalise_name(value: str) -> str:
    """The one spelling of a name, used to create it and by every lookup of it.

    Strips and lower-cases; ``str.lower`` also folds the Kelvin sign U+212A to ``k``, so a name
    typed with one is found under the name it was created as."""
    return value.strip().lower()


def pddl_name(value: object, kind: str = "entity") -> str:
    """Return ``value`` as a lower-case PDDL name (:func:`normalise_name`), or raise :class:`InvalidName`."""
    if not isinstance(value, str):
        raise InvalidName(kind, value, "must be a string")
    known = _VALID_NAMES.get(value)
    if known is None:
        known = _checked_name(value, kind)
        if len(value) > MAX_NAME_LENGTH:  # a valid name padded with much space: checked, not held
            return known
        if len(_VALID_NAMES) >= _VALID_NAMES_HELD:  # a stream of ever new names must not grow it for ever
            _VALID_NAMES.clear()
        _VALID_NAMES[value] = known
    return known


# Names already checked, as given -> as spelled: a robot names the same few entities in every
# observation, and a request checks each of its names. Checking is a pure function of the text.
_VALID_NAMES: dict[str, str] = {}
_VALID_NAMES_HELD = 1 << 15


def _checked_name(value: str, kind: str) -> str:
    name = normalise_name(value)
    if len(name) > MAX_NAME_LENGTH:
        shown = f"{name[:40]}... ({len(name)} characters)"
        raise InvalidName(kind, shown, f"names have at most {MAX_NAME_LENGTH} characters")
    if not _NAME.match(name):
        raise InvalidName(kind, value, _NAME_RULE)
    return name


def is_pddl_name(value: object) -> bool:
    """Whether ``value`` already is a PDDL name in its one spelling (safe to interpolate as it is)."""
    return isinstance(value, str) and len(value) <= MAX_NAME_LENGTH and _NAME.fullmatch(value) is not None


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


_SURROGATE = "it holds a lone surrogate (such as \\ud800 in JSON), which is not Unicode text"


def is_unicode(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8, which every store and export does: JSON's
    ``"\\ud800"`` decodes to a lone surrogate, a ``str`` that has no UTF-8 form. ``isascii``
    costs nothing (CPython knows it of every string), so only other text is encoded."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidValue(what, value, "must be a string")
    if not is_unicode(value):
        raise InvalidValue(what, value, _SURROGATE)
    return value


# What the export writes: compact JSON without NaN or Infinity, which a reader of JSON need not
# accept. Stores keep meta in this form too, so an export copies it as it is.
strict_json = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
# Deeper meta would be stored, then fail every reader that writes it back out (pydantic's
# serializer stops at a depth of 255): a history page or an export would fail for good.
MAX_META_DEPTH = 64


def meta_json(meta: Mapping[str, Any]) -> str:
    """``meta`` as the export writes it; :class:`ValueError` for NaN, Infinity or nesting deeper
    than :data:`MAX_META_DEPTH` (each ``{`` or ``[`` in the text bounds the depth: most meta is
    never walked)."""
    text = strict_json(dict(meta))
    if text.count("{") + text.count("[") > MAX_META_DEPTH and _nesting(meta) > MAX_META_DEPTH:
        raise _TooDeep(f"it nests deeper than {MAX_META_DEPTH} levels")
    return text


class _TooDeep(ValueError):
    """Meta nested too deeply to write back out (or to print in an error)."""


def _nesting(value: Any) -> int:
    """How deep JSON objects and arrays nest in ``value`` (1: a flat object)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, Mapping) else item if isinstance(item, list | tuple) else None
        if children is not None:
            deepest = max(deepest, depth)
            pending.extend((child, depth + 1) for child in children)
    return deepest


@dataclass(frozen=True, slots=True)
class Fact:
    """An instance of a PDDL predicate, e.g. ``(on mug_1 table_2)``, or the value of a static
    numeric function (an action cost), e.g. ``(= (distance kitchen hall) 4.5)``: ``value`` is
    ``None`` for a predicate. A function has one value per arguments (the verifier sees to it), so
    changing a distance removes the old fact and adds the new one."""

    predicate: str
    args: tuple[str, ...] = ()
    value: float | None = None
    # Facts live in sets and are hashed over and over by every state, delta and view: hashed once.
    # Never pickled: a string's hash differs from process to process.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "predicate", pddl_name(self.predicate, "predicate"))
        if isinstance(self.args, str):
            raise InvalidValue("fact arguments", self.args, "pass a sequence of names, not one string")
        object.__setattr__(self, "args", tuple(pddl_name(a) for a in self.args))
        if self.value is not None:
            object.__setattr__(self, "value", _number(self.value, self))
        object.__setattr__(self, "_hash", hash((self.predicate, self.args, self.value)))

    def __hash__(self) -> int:
        return self._hash

    def __getstate__(self) -> tuple[str, tuple[str, ...], float | None]:
        return (self.predicate, self.args, self.value)

    def __setstate__(self, state: tuple[str, tuple[str, ...], float | None]) -> None:
        predicate, args, value = state
        _set_fact(self, predicate, args, value)

    @property
    def numeric(self) -> bool:
        return self.value is not None

    @classmethod
    def unchecked(cls, predicate: str, args: tuple[str, ...], value: float | None = None) -> Fact:
        """A fact from names that were validated when they were written (store rows).

        Reads are the hot path of retrieval and verification; re-validating every name of
        every row there costs more than the query itself.
        """
        fact = object.__new__(cls)
        _set_fact(fact, predicate, args, value)
        return fact

    @classmethod
    def from_stored(cls, text: str) -> Fact:
        """:meth:`parse` for text a store wrote from a validated fact: reading history back
        (replay, history pages) must not re-validate every name of every update. Facts are
        immutable and a home's recur in every checkpoint and update, so they are shared."""
        return _stored_fact(text)

    @classmethod
    def parse(cls, text: str) -> Fact:
        """Parse ``(predicate arg ...)``, or ``(= (function arg ...) number)`` for a numeric fact."""
        if not isinstance(text, str):
            raise InvalidValue("fact", text, "must be a string, such as (on mug_1 table_1)")
        body = text.strip()
        if not (body.startswith("(") and body.endswith(")")):
            raise InvalidValue("fact", text, "write it as (predicate arg1 arg2 ...)")
        numeric = _NUMERIC.match(body)
        if numeric:
            inner = cls.parse(numeric.group(1))
            return cls(inner.predicate, inner.args, _number(numeric.group(2), text))
        parts = body[1:-1].split()
        if not parts:
            raise InvalidValue("fact", text, "it names no predicate")
        return cls(parts[0], tuple(parts[1:]))

    @classmethod
    def from_triple(cls, subject: str, predicate: str, obj: str | bool) -> Fact:
        """Inverse of :meth:`triple`: ``(s, p, true)`` is unary, ``(s, p, o)`` binary."""
        if obj is True or (isinstance(obj, str) and obj.strip().lower() == "true"):
            return cls(predicate, (subject,))
        if obj is False or not isinstance(obj, str):
            raise InvalidValue("triple", (subject, predicate, obj), "the object must be an entity or true")
        return cls(predicate, (subject, obj))

    @property
    def arity(self) -> int:
        return len(self.args)

    def triple(self) -> Triple | None:
        """``(s, p, o)`` for binary facts, ``(s, p, 'true')`` for unary ones, else ``None``
        (also for numeric facts, which are no triple)."""
        if self.value is not None:
            return None
        if self.arity == 2:
            return (self.args[0], self.predicate, self.args[1])
        if self.arity == 1:
            return (self.args[0], self.predicate, "true")
        return None

    def display(self) -> str:
        """The triple view where there is one; ``(p a b c)`` for n-ary and nullary facts."""
        triple = self.triple()
        return f"({', '.join(triple)})" if triple else str(self)

    def __str__(self) -> str:
        atom = f"({' '.join((self.predicate, *self.args))})"
        return atom if self.value is None else f"(= {atom} {_show_number(self.value)})"


_NUMERIC = re.compile(r"^\(\s*=\s*(\([^()]*\))\s*([^\s()]+)\s*\)$")


def _set_fact(fact: Fact, predicate: str, args: tuple[str, ...], value: float | None) -> None:
    object.__setattr__(fact, "predicate", predicate)
    object.__setattr__(fact, "args", args)
    object.__setattr__(fact, "value", value)
    object.__setattr__(fact, "_hash", hash((predicate, args, value)))


def _number(value: object, where: object) -> float:
    """A finite number (an int stays exact in a float up to 2**53)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidValue("numeric fact", where, f"{value!r} is not a number") from None
    if isinstance(value, bool) or number != number or number in (float("inf"), float("-inf")):
        raise InvalidValue("numeric fact", where, f"{value!r} is not a finite number")
    return number


def _show_number(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def _parsed_fact(text: Any) -> Fact:
    """:meth:`Fact.parse`, validated as strictly, but each text only once: a long history (an
    import) names the same few thousand facts over and over, and facts are immutable."""
    return _parse_cached(text) if isinstance(text, str) else Fact.parse(text)


@functools.lru_cache(maxsize=1 << 16)
def _parse_cached(text: str) -> Fact:
    return Fact.parse(text)


@functools.lru_cache(maxsize=1 << 16)
def _stored_fact(text: str) -> Fact:
    if text.startswith("(= "):
        return Fact.parse(text)
    parts = text[1:-1].split()
    return Fact.unchecked(parts[0], tuple(parts[1:]))


@dataclass(frozen=True, slots=True)
class Entity:
    """Something in the world: ``name`` is its PDDL object name, ``label`` what people call it."""

    name: str
    type: str
    label: str = ""
    attrs: Mapping[str, AttrValue] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", pddl_name(self.name))
        object.__setattr__(self, "type", pddl_name(self.type, "type"))
        label = _text(self.label, "entity label").strip() or self.name.replace("_", " ")
        object.__setattr__(self, "label", label)
        for key, value in dict(self.attrs).items():
            if not isinstance(key, str) or not isinstance(value, str | int | float | bool):
                raise InvalidValue("entity attribute", {key: value}, "keys are strings, values str/int/float/bool")
            if isinstance(value, float) and not math.isfinite(value):
                raise InvalidValue("entity attribute", {key: value}, "numbers must be finite (no Infinity or NaN)")
            if not (is_unicode(key) and (not isinstance(value, str) or is_unicode(value))):
                raise InvalidValue("entity attribute", {key: value}, _SURROGATE)
        object.__setattr__(self, "attrs", _frozen_mapping(self.attrs))

    @classmethod
    def unchecked(cls, name: str, type_: str, label: str, attrs: Mapping[str, AttrValue]) -> Entity:
        """An entity from a store row, whose fields were validated when it was written."""
        entity = object.__new__(cls)
        for field_name, value in (
            ("name", name),
            ("type", type_),
            ("label", label),
            ("attrs", MappingProxyType(attrs)),
        ):
            object.__setattr__(entity, field_name, value)
        return entity

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "label": self.label, "attrs": dict(self.attrs)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Entity:
        return cls(data["name"], data["type"], data.get("label", ""), data.get("attrs") or {})


def _facts(value: Iterable[Fact | str], what: str) -> frozenset[Fact]:
    if isinstance(value, str | Fact):
        raise InvalidValue(what, value, "pass a collection of facts")
    facts = []
    for item in value:
        if isinstance(item, str):
            item = Fact.parse(item)
        if not isinstance(item, Fact):
            raise InvalidValue(what, item, "not a Fact")
        facts.append(item)
    return frozenset(facts)


@dataclass(frozen=True, slots=True)
class Delta:
    """Facts to remove and to add, and entities to create (perception only)."""

    remove: AbstractSet[Fact] = frozenset()  # any set in; always a frozenset once built
    add: AbstractSet[Fact] = frozenset()
    new_entities: tuple[Entity, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "remove", _facts(self.remove, "facts to remove"))
        object.__setattr__(self, "add", _facts(self.add, "facts to add"))
        entities = tuple(self.new_entities)
        if not all(isinstance(e, Entity) for e in entities):
            raise InvalidValue("new entities", entities, "every item must be an Entity")
        object.__setattr__(self, "new_entities", entities)

    @property
    def is_empty(self) -> bool:
        return not (self.remove or self.add or self.new_entities)

    @property
    def size(self) -> int:
        """Number of fact changes."""
        return len(self.remove) + len(self.add)

    def mentioned(self) -> frozenset[str]:
        """Every entity name the delta touches."""
        names = {a for facts in (self.remove, self.add) for f in facts for a in f.args}
        names.update(e.name for e in self.new_entities)
        return frozenset(names)

    def inverse(self) -> Delta:
        """The compensating delta (entities, once created, stay)."""
        return Delta(remove=self.add, add=self.remove)

    def to_json(self) -> dict[str, Any]:
        return {
            "remove": sorted(str(f) for f in self.remove),
            "add": sorted(str(f) for f in self.add),
            "new_entities": [e.to_json() for e in self.new_entities],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Delta:
        return cls(
            remove=frozenset(map(_parsed_fact, data.get("remove", ()))),
            add=frozenset(map(_parsed_fact, data.get("add", ()))),
            new_entities=tuple(Entity.from_json(e) for e in data.get("new_entities", ())),
        )

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> Delta:
        """:meth:`from_json` of a delta a store wrote (validated then), without re-validating."""
        delta = object.__new__(cls)
        object.__setattr__(delta, "remove", frozenset(map(_stored_fact, data["remove"])))
        object.__setattr__(delta, "add", frozenset(map(_stored_fact, data["add"])))
        made = data["new_entities"]
        entities = tuple(Entity.unchecked(e["name"], e["type"], e["label"], e["attrs"]) for e in made) if made else ()
        object.__setattr__(delta, "new_entities", entities)
        return delta


class IssueCode(enum.StrEnum):
    UNKNOWN_PREDICATE = "unknown_predicate"
    WRONG_ARITY = "wrong_arity"
    UNKNOWN_ENTITY = "unknown_entity"
    TYPE_MISMATCH = "type_mismatch"
    REMOVE_ABSENT = "remove_absent"
    ADD_PRESENT = "add_present"
    REMOVE_AND_ADD = "remove_and_add"
    FUNCTIONAL = "functional"
    EXCLUSIVE = "exclusive"
    STATIC_PREDICATE = "static_predicate"
    INVARIANT = "invariant"
    UNKNOWN_TYPE = "unknown_type"
    ENTITY_EXISTS = "entity_exists"
    ENTITY_NOT_ALLOWED = "entity_not_allowed"
    NUMERIC_VALUE = "numeric_value"  # a cost fact without a number, a predicate with one, a negative cost
    INVALID_INPUT = "invalid_input"  # the request itself is unusable (empty, too long, noise)
    MALFORMED_ANSWER = "malformed_answer"  # a language model's answer could not be read as edits
    DEADLINE = "deadline"  # the operation's time budget ran out before a usable answer
    PROMPT_TOO_LONG = "prompt_too_long"  # the model's server refused the prompt as over its context
    OBSERVED_ELSEWHERE = "observed_elsewhere"  # perception saw a static thing where the memory says it is not
    NOT_SURE = "not_sure"  # what was said could mean several changes, or none clearly: asked, not guessed


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem with a delta, in one sentence a person or a language model can act on."""

    code: IssueCode
    fact: Fact | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code.value, "fact": str(self.fact) if self.fact else None, "message": self.message}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Issue:
        fact = Fact.parse(data["fact"]) if data.get("fact") else None
        return cls(IssueCode(data["code"]), fact, data["message"])


class UpdateSource(enum.StrEnum):
    NL = "nl"
    SENSOR = "sensor"
    EXECUTION = "execution"
    API = "api"
    REVERT = "revert"
    # The memory's first update, at its creation (version 0): the domain's constants. No write is
    # of this source after it; it is there so a reader replaying the history meets every entity.
    DOMAIN = "domain"


class UpdateStatus(enum.StrEnum):
    APPLIED = "applied"
    REJECTED = "rejected"
    NOOP = "noop"


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class Update:
    """A recorded write: every change of state is one, and so is every rejected attempt.

    ``seq`` orders the memory's history (0 until stored); ``version`` is the memory's
    version after an applied update, or the version a rejected/noop one was checked against.
    ``input`` is the utterance, or the observation as JSON text. ``meta`` carries provenance
    such as retrieval statistics, retries and token usage.
    """

    memory: str
    source: UpdateSource
    delta: Delta
    status: UpdateStatus
    input: str = ""
    issues: tuple[Issue, ...] = ()
    version: int = 0
    seq: int = 0
    id: str = field(default_factory=lambda: uuid7().hex)  # time-ordered: appended to the id index
    time: datetime = field(default_factory=_utc_now)
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # ``meta`` as the stores write it: the text its check below made, so what is written is what was
    # checked (meta is frozen at its top level; nested values are not to be changed once it is made)
    _meta_text: str = field(default="", init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.source, UpdateSource):  # an enum call costs more than the check
            object.__setattr__(self, "source", UpdateSource(self.source))
        if not isinstance(self.status, UpdateStatus):
            object.__setattr__(self, "status", UpdateStatus(self.status))
        object.__setattr__(self, "issues", tuple(self.issues))
        if not _text(self.id, "update id"):
            raise InvalidValue("update id", self.id, "must not be empty")
        _text(self.input, "update input")
        if self.status is UpdateStatus.REJECTED and not self.issues:
            raise InvalidValue("update", self.id, "a rejected update must carry its reasons")
        if self.time.tzinfo is None:
            raise InvalidValue("update time", self.time, "must be timezone-aware")
        try:
            object.__setattr__(self, "_meta_text", meta_json(self.meta))
        except (TypeError, ValueError) as exc:
            problem = f"must be JSON without NaN or Infinity, nested at most {MAX_META_DEPTH} deep ({exc})"
            shown = f"with keys {sorted(map(str, self.meta))[:8]}" if isinstance(exc, _TooDeep) else self.meta
            raise InvalidValue("update meta", shown, problem) from exc
        object.__setattr__(self, "meta", _frozen_mapping(self.meta))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "memory": self.memory,
            "seq": self.seq,
            "source": self.source.value,
            "input": self.input,
            "delta": self.delta.to_json(),
            "status": self.status.value,
            "issues": [i.to_json() for i in self.issues],
            "version": self.version,
            "time": self.time.isoformat(),
            "meta": dict(self.meta),
        }

    def meta_text(self) -> str:
        """``meta`` as compact JSON (:func:`meta_json`)."""
        return self._meta_text or meta_json(self.meta)

    def stamped(self, *, seq: int, version: int) -> Update:
        """This update at its place in a history: every other field as it is (and as it was validated)."""
        current = {name: getattr(self, name) for name in _UPDATE_FIELDS}
        return Update.unchecked(**{**current, "seq": seq, "version": version})

    @classmethod
    def unchecked(cls, **fields: Any) -> Update:
        """An update from a store row (every field given), validated when it was written."""
        update = object.__new__(cls)
        object.__setattr__(update, "_meta_text", "")  # unless given: encoded when first asked for
        for name, value in fields.items():
            object.__setattr__(update, name, value)
        return update

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Update:
        return cls(
            memory=data["memory"],
            source=UpdateSource(data["source"]),
            delta=Delta.from_json(data["delta"]),
            status=UpdateStatus(data["status"]),
            input=data.get("input", ""),
            issues=tuple(Issue.from_json(i) for i in data.get("issues", ())),
            version=int(data.get("version", 0)),
            seq=int(data.get("seq", 0)),
            id=data["id"],
            time=datetime.fromisoformat(data["time"]),
            meta=data.get("meta") or {},
        )


_UPDATE_FIELDS = tuple(f.name for f in fields(Update))


@dataclass(frozen=True, slots=True)
class Memory:
    """A named world state bound to a domain."""

    name: str
    domain: str
    version: int = 0
    created: datetime = field(default_factory=_utc_now)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", pddl_name(self.name, "memory"))


@dataclass(frozen=True, slots=True)
class State:
    """A whole world state: entities by name and the facts that hold."""

    entities: Mapping[str, Entity]
    facts: frozenset[Fact]
    version: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "entities", _frozen_mapping(self.entities))
        object.__setattr__(self, "facts", frozenset(self.facts))

    def holds(self, fact: Fact) -> bool:
        return fact in self.facts


@dataclass(frozen=True, slots=True, kw_only=True)
class Neighbourhood:
    """Facts within ``hops`` of seed entities, nearest first, capped at ``max_facts``."""

    seeds: tuple[str, ...]
    entities: Mapping[str, Entity]
    facts: tuple[Fact, ...]
    distance: Mapping[str, int]
    truncated: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "entities", _frozen_mapping(self.entities))
        object.__setattr__(self, "distance", _frozen_mapping(self.distance))
