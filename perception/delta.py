"""An observation as a delta against the memory: perception's closed world within the field of view.

* Observed entities the memory does not know are created (perception is the only source of entities).
* Each observed entity's dynamic facts (those it is the first argument of) are replaced by the observed
  ones. Observed facts are added whether static or not (a new table brings its ``in_room``), but static
  facts are never removed for being absent: a mis-segmented frame must not delete the house's layout.
* A measured value (a distance) replaces the stored value of the same function and arguments.
* A stored dynamic binary fact ``(p x y)`` with ``y`` in view, its contents visible, and ``x`` not in view
  is removed: the mug is no longer on the table, the person no longer in the room. Where ``x`` went is
  unknown, so the memory keeps no location for it rather than a false one.

Everything else in the memory is left as it was. The result is deterministic and never both removes and
adds a fact (removals are stored facts the observation lacks; additions are observed facts not stored).
"""

from __future__ import annotations

from kg_memory.domain import Domain
from kg_memory.model import Delta, Entity, Fact
from kg_memory.verifier import StateView
from perception.observation import Observation


def observation_delta(observation: Observation, state: StateView, domain: Domain) -> Delta:
    """The delta that makes ``state`` agree with ``observation`` about what is in view."""
    observed = observation.names()
    seen = frozenset(observed)
    stored = state.facts_about(observed)  # every fact mentioning an observed entity, in one read
    facts = observation.facts()
    static = domain.static_predicates
    replaced = {f for f in stored if _first(f) in seen and f.predicate not in static and f not in facts}
    visible = seen - frozenset(observation.opaque)
    vanished = {f for f in stored if _unseen_but_expected(f, seen, visible, static)}
    measured = {(f.predicate, f.args) for f in facts if f.numeric}
    revalued = {f for f in stored if f.numeric and (f.predicate, f.args) in measured and f not in facts}
    return Delta(
        remove=frozenset(replaced | vanished | revalued),
        add=facts - stored,
        new_entities=_new_entities(observation, state, domain),
    )


def unseen_entities(observation: Observation, delta: Delta) -> tuple[str, ...]:
    """Entities out of view whose facts ``delta`` removes (they were expected in view but not seen)."""
    seen = frozenset(observation.names())
    return tuple(sorted({a for f in delta.remove if (a := _first(f)) is not None and a not in seen}))


def _first(fact: Fact) -> str | None:
    return fact.args[0] if fact.args else None


def _unseen_but_expected(fact: Fact, seen: frozenset[str], visible: frozenset[str], static: frozenset[str]) -> bool:
    """``(p x y)``: ``x`` should be in view with ``y`` (``y`` observed and not opaque) but was not seen."""
    return fact.arity == 2 and fact.args[0] not in seen and fact.args[1] in visible and fact.predicate not in static


def _new_entities(observation: Observation, state: StateView, domain: Domain) -> tuple[Entity, ...]:
    """Observed entities neither stored nor domain constants (``robot_1`` is known to every memory)."""
    known = set(state.entities(observation.names())) | set(domain.constants)
    return tuple(e.entity() for e in observation.entities if e.name not in known)
