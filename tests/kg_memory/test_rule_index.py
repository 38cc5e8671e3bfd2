"""The import's fast check (rule counters kept with the replayed state) against the verifier:
it never passes a delta the verifier would refuse, and it decides alone exactly the deltas it
claims to (so refusals are always the verifier's, word for word)."""

from __future__ import annotations

import io
import json
import random
from collections import Counter
from typing import Any

import pytest
from fuzz_deltas import DeltaFuzz, households

from kg_memory import (
    Delta,
    DomainRegistry,
    Entity,
    Fact,
    ImportMismatch,
    IssueCode,
    UpdateSource,
    Verifier,
    WorldMemory,
)
from kg_memory._replay import _STORABLE_ANYWAY as STORABLE_ANYWAY
from kg_memory._replay import _State, _View
from kg_memory._rule_index import RuleIndex
from kg_memory.domain import Domain
from kg_memory.rules import InvariantKind
from kg_memory.stores import SQLiteStore
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS

F = Fact.parse
SOURCES = list(UpdateSource)


def _decided_alone(delta: Delta, domain: Domain) -> bool:
    """The deltas the counters decide without the verifier: no new entity, no numeric fact, no
    predicate of a ``requires`` invariant."""
    required = {p for i in domain.rules.invariants if i.kind is InvariantKind.REQUIRES for p in i.predicates()}
    facts = delta.remove | delta.add
    return not delta.new_entities and all(f.value is None and f.predicate not in required for f in facts)


@pytest.mark.parametrize("domain_name, entities, facts", households(), ids=lambda v: v if isinstance(v, str) else "")
def test_fast_rule_check_agrees_with_the_verifier(
    domain_name: str, entities: tuple[Entity, ...], facts: frozenset[Fact]
) -> None:
    domain = DomainRegistry().get(domain_name)
    verifier = Verifier(domain)
    state, rules = _State(domain.constant_entities()), RuleIndex(domain)
    survey = Delta(add=facts, new_entities=tuple(e for e in entities if e.name not in state.entities))
    assert verifier.verify(survey, _View(state), UpdateSource.SENSOR) == ()
    state.apply(survey)
    rules.apply(survey)
    rng, fuzz = random.Random(7), DeltaFuzz(random.Random(11), domain, state)
    verdicts: Counter[str] = Counter()
    codes: set[IssueCode] = set()
    for _ in range(3_000):
        delta, source = fuzz.delta(), rng.choice(SOURCES)
        issues = verifier.verify(delta, _View(state), source)
        clean = rules.clean(delta, state.entities, state.all, source)
        assert not (clean and issues), (delta, source, issues)
        if _decided_alone(delta, domain):
            assert clean == (not issues), (delta, source, issues)
            codes.update(i.code for i in issues)
        verdicts["clean" if clean else "verifier"] += 1
        # accepted deltas move the state on; now and then one refused only by the rules, as an
        # unverified update may be, so the counters also follow states that already break a rule
        storable = {i.code for i in issues} <= STORABLE_ANYWAY and not delta.new_entities
        if not issues or (storable and rng.random() < 0.1):
            state.apply(delta)
            rules.apply(delta)
    assert verdicts["clean"] > 300 and verdicts["verifier"] > 300, verdicts
    expected = {
        IssueCode.FUNCTIONAL,
        IssueCode.INVARIANT,
        IssueCode.TYPE_MISMATCH,
        IssueCode.UNKNOWN_ENTITY,
        IssueCode.UNKNOWN_PREDICATE,
        IssueCode.WRONG_ARITY,
        IssueCode.STATIC_PREDICATE,
        IssueCode.REMOVE_ABSENT,
        IssueCode.ADD_PRESENT,
        IssueCode.REMOVE_AND_ADD,
    }
    assert expected <= codes, expected - codes
    if any(g.kind.value == "exclusive" for g in domain.rules.groups):
        assert IssueCode.EXCLUSIVE in codes


# -- forged histories, refused by the verifier's own words through the fast path ------------------


def _forged(tmp_path: Any, change: Delta, source: UpdateSource, match: str) -> None:
    store = SQLiteStore(tmp_path / "forged.db", DomainRegistry())
    home = WorldMemory.create(store, "home", "example_home")
    home.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    harmless = home.apply(Delta(add={F("(light_on lamp_1)")}), source=source)
    assert harmless.status.value == "applied", harmless.issues
    lines = [json.loads(line) for line in home.export_lines()]
    forged = next(line["update"] for line in lines if line.get("update", {}).get("id") == harmless.id)
    forged["delta"] = change.to_json()
    text = io.StringIO("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ImportMismatch, match=match) as caught:
        WorldMemory.import_lines(store, text, name="copy")
    assert harmless.id in str(caught.value)
    assert "copy" not in {m.name for m in store.list_memories()}


def test_a_forged_history_breaking_an_exclusive_rule_is_refused(tmp_path: Any) -> None:
    held = Delta(add={F("(held book_1 robot_1)")}, remove={F("(on book_1 shelf_1)")})
    _forged(tmp_path, held, UpdateSource.EXECUTION, "cannot both hold something and have an empty hand")


def test_a_forged_history_losing_an_item_is_refused(tmp_path: Any) -> None:
    lost = Delta(remove={F("(on mug_1 table_1)")})
    _forged(tmp_path, lost, UpdateSource.NL, "mug_1 must be somewhere")


def test_a_forged_history_with_a_wrongly_typed_fact_is_refused(tmp_path: Any) -> None:
    _forged(tmp_path, Delta(add={F("(on kitchen table_1)")}), UpdateSource.NL, "kitchen is of type room")


def test_a_household_history_moving_people_and_items_round_trips(
    surveyed: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Updates the counters decide (items moved between receptacles) and ones they leave to the
    verifier (people moved, items handed over and put back: a ``requires`` invariant's
    predicates) in one import."""
    world, rng = surveyed, random.Random(5)
    rooms = sorted(n for n, e in world.entities().items() if e.type == "room")
    people = sorted(f.args[0] for f in world.facts("person_in"))
    receptacles = sorted({f.args[1] for f in world.facts("on")})
    for step in range(60):
        placed = sorted(world.facts("on"), key=str)
        if step % 4 == 0:
            person = rng.choice(people)
            (now,) = world.facts("person_in", person)
            there = rng.choice([r for r in rooms if r != now.args[1]])
            delta = Delta(remove={now}, add={Fact("person_in", (person, there))})
        elif step % 4 == 1:
            here = rng.choice(placed)
            delta = Delta(remove={here}, add={Fact("in_hand", (here.args[0], rng.choice(people)))})
        elif step % 4 == 2:
            held = rng.choice(sorted(world.facts("in_hand"), key=str))
            delta = Delta(remove={held}, add={Fact("on", (held.args[0], rng.choice(receptacles)))})
        else:
            here = rng.choice(placed)
            there = rng.choice([r for r in receptacles if r != here.args[1]])
            delta = Delta(remove={here}, add={Fact("on", (here.args[0], there))})
        update = world.apply(delta, source=UpdateSource.SENSOR)
        assert update.status.value == "applied", update.issues
    asked: list[Delta] = []
    verify = Verifier.verify

    def counted(self: Verifier, delta: Delta, *rest: Any) -> Any:
        asked.append(delta)
        return verify(self, delta, *rest)

    monkeypatch.setattr(Verifier, "verify", counted)
    copy = WorldMemory.import_lines(world.store, world.export_lines(), name="copy")
    assert copy.facts() == world.facts()
    assert [u.id for u in copy.history()] == [u.id for u in world.history()]
    assert len(asked) == 1 + 45  # the survey (new entities) and three kinds of update in four
