"""The verifier: every issue kind, all returned at once, never raising for bad content."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from conftest import SURVEY_ENTITIES, SURVEY_FACTS, SetView
from fuzz_deltas import DeltaFuzz, households, thor_kitchen

from experiments.household import Mover, build_household
from kg_memory import Delta, DomainRegistry, Entity, Fact, Issue, IssueCode, UpdateSource, Verifier
from kg_memory import verifier as verifier_module
from kg_memory._replay import _State

F = Fact.parse
NL, SENSOR, REVERT = UpdateSource.NL, UpdateSource.SENSOR, UpdateSource.REVERT


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    return Verifier(DomainRegistry().get("example_home"))


@pytest.fixture
def view() -> SetView:
    return SetView(SURVEY_ENTITIES, SURVEY_FACTS)


def codes(issues: Iterable[Issue]) -> list[str]:
    return [i.code.value for i in issues]


def test_a_valid_delta_has_no_issues(verifier: Verifier, view: SetView) -> None:
    delta = Delta(remove={F("(on mug_1 table_1)"), F("(hand_empty robot_1)")}, add={F("(held mug_1 robot_1)")})
    assert verifier.verify(delta, view, UpdateSource.EXECUTION) == ()


def test_unknown_predicate_suggests_close_names(verifier: Verifier, view: SetView) -> None:
    (issue,) = verifier.verify(Delta(add={F("(light_onn lamp_1)")}), view, NL)
    assert issue.code is IssueCode.UNKNOWN_PREDICATE and issue.fact == F("(light_onn lamp_1)")
    assert issue.message.startswith("(light_onn lamp_1) uses unknown predicate light_onn; use one of: light_on")


def test_wrong_arity_shows_the_signature(verifier: Verifier, view: SetView) -> None:
    (issue,) = verifier.verify(Delta(add={F("(on mug_1)")}), view, NL)
    assert issue.code is IssueCode.WRONG_ARITY
    assert "takes 2: (on ?i - item ?f - furniture)" in issue.message


def test_unknown_entity(verifier: Verifier, view: SetView) -> None:
    (issue,) = verifier.verify(Delta(add={F("(light_on lamp_9)")}), view, NL)
    assert issue.code is IssueCode.UNKNOWN_ENTITY and "lamp_9" in issue.message


def test_type_mismatch_respects_the_hierarchy(verifier: Verifier, view: SetView) -> None:
    # a dish is an item and a sink is furniture, so this is well typed
    ok = Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 sink_1)")})
    assert verifier.verify(ok, view, NL) == ()
    # a book is an item but not a dish
    (issue,) = verifier.verify(Delta(add={F("(dirty book_1)")}), view, NL)
    assert issue.code is IssueCode.TYPE_MISMATCH
    assert issue.message == "(dirty book_1): book_1 is of type item, but argument 1 of dirty must be of type dish"


def test_presence_checks(verifier: Verifier, view: SetView) -> None:
    issues = verifier.verify(
        Delta(remove={F("(light_on lamp_1)")}, add={F("(robot_at robot_1 hall)")}), view, UpdateSource.EXECUTION
    )
    assert codes(issues) == ["remove_absent", "add_present"]
    assert "(light_on lamp_1) (lamp_1 is on) does not hold now" in issues[0].message


def test_same_fact_removed_and_added(verifier: Verifier, view: SetView) -> None:
    fact = F("(on mug_1 table_1)")
    issues = verifier.verify(Delta(remove={fact}, add={fact}), view, NL)
    assert codes(issues) == ["remove_and_add"] and issues[0].fact == fact


def test_a_malformed_fact_removed_and_added_is_refused_in_words(verifier: Verifier, view: SetView) -> None:
    # a forged import can carry this: its rendering must not be attempted with too few arguments
    bad = F("(on mug_1)")
    issues = verifier.verify(Delta(remove={bad}, add={bad}), view, NL)
    assert codes(issues) == ["wrong_arity", "remove_and_add"]
    assert issues[1].message.startswith("(on mug_1) ((on mug_1)) is both removed and added")


def test_functional_rule(verifier: Verifier, view: SetView) -> None:
    (issue,) = verifier.verify(Delta(add={F("(held mug_1 robot_1)")}, remove={F("(hand_empty robot_1)")}), view, NL)
    assert issue.code is IssueCode.FUNCTIONAL and issue.fact == F("(held mug_1 robot_1)")
    assert issue.message == (
        "mug_1 can be in only one place, but after this update mug_1 is held by robot_1 and "
        "mug_1 is on table_1; remove one"
    )


def test_exclusive_rule(verifier: Verifier, view: SetView) -> None:
    delta = Delta(remove={F("(on mug_1 table_1)")}, add={F("(held mug_1 robot_1)")})  # hand_empty stays
    (issue,) = verifier.verify(delta, view, NL)
    assert issue.code is IssueCode.EXCLUSIVE
    assert issue.message.startswith("robot_1 cannot both hold something and have an empty hand")


def test_static_predicates_change_only_by_perception_or_revert(verifier: Verifier, view: SetView) -> None:
    delta = Delta(remove={F("(in_room table_1 kitchen)")}, add={F("(in_room table_1 hall)")})
    issues = verifier.verify(delta, view, NL)
    assert codes(issues) == ["static_predicate", "static_predicate"]
    assert "only perception may change it" in issues[0].message
    assert verifier.verify(delta, view, SENSOR) == ()
    assert verifier.verify(delta, view, REVERT) == ()


def test_at_least_one_invariant_on_the_state_after(verifier: Verifier, view: SetView) -> None:
    (issue,) = verifier.verify(Delta(remove={F("(on book_1 shelf_1)")}), view, NL)
    assert issue.code is IssueCode.INVARIANT and issue.fact == F("(on book_1 shelf_1)")
    assert issue.message.startswith("book_1 must be somewhere")


def test_requires_invariant(verifier: Verifier) -> None:
    view = SetView(SURVEY_ENTITIES, {*SURVEY_FACTS, F("(in_hand book_1 alex)")} - {F("(on book_1 shelf_1)")})
    (issue,) = verifier.verify(Delta(remove={F("(person_in alex hall)")}), view, NL)
    assert issue.code is IssueCode.INVARIANT
    assert issue.message == "alex holds book_1 but is in no room: add (person_in alex <room>)"


def test_older_violations_are_not_blamed_on_a_new_update(verifier: Verifier) -> None:
    broken = SetView(SURVEY_ENTITIES, {*SURVEY_FACTS, F("(on mug_1 shelf_1)")} - {F("(on book_1 shelf_1)")})
    # mug_1 is already in two places and book_1 nowhere; switching a light on is still fine
    assert verifier.verify(Delta(add={F("(light_on lamp_1)")}), broken, NL) == ()


def test_entity_creation_is_perception_only(verifier: Verifier, view: SetView) -> None:
    spoon = Entity("spoon_1", "dish", "spoon")
    delta = Delta(new_entities=(spoon,), add={F("(on spoon_1 table_1)")})
    assert verifier.verify(delta, view, SENSOR) == ()
    (issue,) = verifier.verify(delta, view, NL)
    assert issue.code is IssueCode.ENTITY_NOT_ALLOWED and "only perception adds entities" in issue.message


def test_new_entities_need_a_known_type_a_fresh_name_and_a_place(verifier: Verifier, view: SetView) -> None:
    delta = Delta(
        new_entities=(
            Entity("gizmo_1", "gizmo"),
            Entity("mug_1", "dish"),
            Entity("robot_1", "robot"),
            Entity("cup_1", "dish"),
        )
    )
    issues = verifier.verify(delta, view, SENSOR)
    assert codes(issues) == ["unknown_type", "entity_exists", "entity_exists", "invariant"]
    assert issues[-1].message.startswith("cup_1 must be somewhere")


def test_every_issue_is_returned_at_once(verifier: Verifier, view: SetView) -> None:
    delta = Delta(
        remove={F("(light_on lamp_1)"), F("(connected kitchen hall)")},
        add={F("(fly robot_1)"), F("(on ghost table_1)"), F("(on mug_1 shelf_1)")},
    )
    assert sorted(codes(verifier.verify(delta, view, NL))) == sorted(
        ["remove_absent", "static_predicate", "unknown_predicate", "unknown_entity", "functional"]
    )


def test_constants_are_known_entities(verifier: Verifier) -> None:
    empty = SetView([Entity("hall", "room")], [])
    delta = Delta(add={F("(robot_at robot_1 hall)"), F("(hand_empty robot_1)")})
    assert verifier.verify(delta, empty, UpdateSource.EXECUTION) == ()


def test_perception_may_lose_track_of_an_item_but_language_may_not(verifier: Verifier, view: SetView) -> None:
    # the book was expected on the shelf but not seen: its whereabouts are unknown, not false
    delta = Delta(remove={F("(on book_1 shelf_1)")})
    assert verifier.verify(delta, view, SENSOR) == ()
    (issue,) = verifier.verify(delta, view, NL)
    assert issue.code is IssueCode.INVARIANT and issue.message.startswith("book_1 must be somewhere")


def test_perception_may_lose_track_of_a_person_holding_something(verifier: Verifier) -> None:
    view = SetView(SURVEY_ENTITIES, {*SURVEY_FACTS, F("(in_hand book_1 alex)")} - {F("(on book_1 shelf_1)")})
    delta = Delta(remove={F("(person_in alex hall)")})
    assert verifier.verify(delta, view, SENSOR) == ()
    assert codes(verifier.verify(delta, view, NL)) == ["invariant"]


def test_perception_still_may_not_break_invariants_by_adding(verifier: Verifier) -> None:
    nowhere = SetView(SURVEY_ENTITIES, set(SURVEY_FACTS) - {F("(person_in alex hall)")})
    # handing the mug to a person in no room breaks `requires` by an addition
    delta = Delta(remove={F("(on mug_1 table_1)")}, add={F("(in_hand mug_1 alex)")})
    (issue,) = verifier.verify(delta, nowhere, SENSOR)
    assert issue.code is IssueCode.INVARIANT and issue.message.startswith("alex holds mug_1 but is in no room")
    # and a new item must come with its place
    (issue,) = verifier.verify(Delta(new_entities=(Entity("cup_1", "dish"),)), nowhere, SENSOR)
    assert issue.code is IssueCode.INVARIANT and issue.message.startswith("cup_1 must be somewhere")


def test_a_large_delta_is_judged_as_a_small_one_would_be(monkeypatch: pytest.MonkeyPatch) -> None:
    # a delta naming many entities indexes the state's facts by argument instead of scanning per name
    household = build_household(600, 2_400, seed=3)
    view = SetView(household.entities, household.facts)
    verifier = Verifier(DomainRegistry().get("example_home"))
    moves, _ = Mover(random.Random(5), household).propose(120)
    item, place = next(iter(sorted(household.on.items())))
    elsewhere = next(f for f in household.furniture if f != place)
    broken = Delta(remove=moves.remove, add=moves.add | {F(f"(on {item} {elsewhere})")})
    indexed = [verifier.verify(d, view, SENSOR) for d in (moves, broken)]
    monkeypatch.setattr(verifier_module, "_SCANS_BEFORE_INDEXING", 10**9)  # scan per name, as before
    scanned = [verifier.verify(d, view, SENSOR) for d in (moves, broken)]
    assert indexed == scanned
    assert indexed[0] == () and IssueCode.FUNCTIONAL in {i.code for i in indexed[1]}


class _Reading:
    """A state that records which entities the verifier asks about and can answer more than
    asked: every fact about every entity the delta mentions, or every fact there is."""

    def __init__(self, state: _State, *, widen_to: Iterable[str] | None = None, everything: bool = False) -> None:
        self.state, self.widen_to, self.everything = state, widen_to, everything
        self.asked: set[str] = set()

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        return self.state.entities_of(names)

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        self.asked.update(names)
        if self.everything:
            return frozenset(self.state.all)
        return self.state.facts_about(self.asked if self.widen_to is None else self.widen_to)


def _judged_both_ways(domain_name: str, entities: tuple[Entity, ...], facts: frozenset[Fact]) -> None:
    """The verifier reads the facts of fewer entities than a delta mentions; given every mentioned
    entity's facts, or the whole state, it words every verdict the same."""
    domain = DomainRegistry().get(domain_name)
    verifier, state = Verifier(domain), _State(domain.constant_entities())
    state.apply(Delta(add=facts, new_entities=tuple(e for e in entities if e.name not in state.entities)))
    rng, fuzz = random.Random(3), DeltaFuzz(random.Random(13), domain, state)
    refused, narrowed = 0, 0
    for _ in range(2_000):
        delta, source = fuzz.delta(), rng.choice(list(UpdateSource))
        reading = _Reading(state)
        issues = verifier.verify(delta, reading, source)
        assert issues == verifier.verify(delta, _Reading(state, widen_to=delta.mentioned()), source), delta
        assert issues == verifier.verify(delta, _Reading(state, everything=True), source), delta
        refused += bool(issues)
        narrowed += reading.asked < delta.mentioned()
        if not issues:
            state.apply(delta)
    assert refused > 300 and 2_000 - refused > 300, refused
    assert narrowed > 300, narrowed


@pytest.mark.parametrize("domain_name, entities, facts", households(), ids=lambda v: v if isinstance(v, str) else "")
def test_reading_only_what_the_rules_look_at_changes_no_verdict(
    domain_name: str, entities: tuple[Entity, ...], facts: frozenset[Fact]
) -> None:
    _judged_both_ways(domain_name, entities, facts)


def test_reading_only_what_the_rules_look_at_changes_no_verdict_in_a_thor_kitchen(tmp_path: Path) -> None:
    # its rules key on an item held by the robot: the second argument of the fact that holds it
    _judged_both_ways("thor", *thor_kitchen(tmp_path))


def test_moving_items_reads_the_items_not_what_else_stands_on_the_furniture() -> None:
    household = build_household(600, 2_400, seed=3)
    domain = DomainRegistry().get("example_home")
    state = _State(domain.constant_entities())
    state.apply(Delta(add=household.facts, new_entities=household.entities))
    moves, _ = Mover(random.Random(5), household).propose(120)
    reading = _Reading(state)
    assert Verifier(domain).verify(moves, reading, UpdateSource.EXECUTION) == ()
    assert reading.asked == {f.args[0] for f in moves.add}
