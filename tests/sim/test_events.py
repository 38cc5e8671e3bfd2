"""Human events: applicable to the true state, valid under the rules, in the paper's mix, varied in wording."""

from __future__ import annotations

import itertools
import json
import string
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from kg_memory import Delta, DomainRegistry, Entity, Fact, UpdateSource, Verifier
from sim import events
from sim._phrases import COMPOUND, PHRASES
from sim.events import CATEGORY_MIX, COMPOUND_KIND, KIND_CATEGORY, Event, EventGenerator
from sim.household import Home, HomeSpec, generate_home

STEPS = 1000
STATIC = {"connected", "in_room", "appliance_in", "faucet_at"}
PLACEHOLDERS = {
    "actor",
    "other",
    "item",
    "item_kind",
    "source",
    "source_prep",
    "target",
    "prep",
    "room",
    "source_room",
    "target_room",
    "appliance",
    "appliance_label",
    "container",
    "container_label",
    "liquid",
    "where",
    "clothes",
    "first_clothes",
    "things",
    "first_thing",
}


class IndexedView:
    """An in-memory state for the verifier, indexed by argument so a long run stays fast."""

    def __init__(self, entities: Mapping[str, Entity], facts: Iterable[Fact]) -> None:
        self._entities = entities
        self._by_arg: dict[str, set[Fact]] = {}
        for fact in facts:
            for arg in fact.args:
                self._by_arg.setdefault(arg, set()).add(fact)

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        return {n: self._entities[n] for n in names if n in self._entities}

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        return frozenset(f for n in names for f in self._by_arg.get(n, ()))


@dataclass(frozen=True)
class Step:
    before: frozenset[Fact]
    event: Event


def run(
    home: Home,
    seed: int,
    steps: int,
    state: frozenset[Fact] | None = None,
    *,
    rates: tuple[float, float, float] = (0.2, 0.1, 0.1),
) -> list[Step]:
    """Events applied one after another to the true state, as the simulator does; ``rates`` are the
    vague, partial and compound rates."""
    vague, partial, compound = rates
    generator = EventGenerator(home, seed, vague_rate=vague, partial_rate=partial, compound_rate=compound)
    state = home.facts if state is None else state
    trace = []
    for _ in range(steps):
        event = generator.next(state)
        trace.append(Step(state, event))
        state = (state - event.delta.remove) | event.delta.add
    return trace


@pytest.fixture(scope="module")
def home() -> Home:
    return generate_home(HomeSpec(seed=3))


@pytest.fixture(scope="module")
def trace(home: Home) -> list[Step]:
    return run(home, seed=3, steps=STEPS)


def test_each_delta_removes_only_true_facts_and_adds_only_false_ones(trace: list[Step]) -> None:
    for step in trace:
        delta = step.event.delta
        assert delta.remove <= step.before, step.event
        assert not delta.add & step.before, step.event
        assert not delta.remove & delta.add
        assert not delta.is_empty and delta.new_entities == ()


def test_each_event_passes_the_verifier_as_language(home: Home, trace: list[Step]) -> None:
    verifier = Verifier(DomainRegistry().get("household"))
    for step in trace:
        issues = verifier.verify(step.event.delta, IndexedView(home.by_name, step.before), UpdateSource.NL)
        assert issues == (), (step.event.text, [i.message for i in issues])


@pytest.mark.slow
def test_the_whole_true_state_satisfies_every_rule_after_every_step(home: Home, trace: list[Step]) -> None:
    """Not just each delta in isolation: the entire state, rebuilt from nothing, after each step."""
    verifier = Verifier(DomainRegistry().get("household"))
    empty = IndexedView({}, frozenset())
    for step in trace:
        after = (step.before - step.event.delta.remove) | step.event.delta.add
        whole = Delta(add=after, new_entities=home.entities)
        issues = verifier.verify(whole, empty, UpdateSource.SENSOR)
        assert issues == (), (step.event.text, [i.message for i in issues])


def test_events_change_no_static_fact_and_never_the_robot(trace: list[Step]) -> None:
    for step in trace:
        delta = step.event.delta
        assert not {f.predicate for f in delta.remove | delta.add} & STATIC
        assert "robot_1" not in delta.mentioned()


def test_the_category_mix_follows_the_paper(trace: list[Step]) -> None:
    counts = Counter(step.event.category for step in trace)
    for category, share in CATEGORY_MIX.items():
        assert abs(counts[category] / STEPS - share) <= 0.08, counts


def test_every_kind_occurs_in_a_long_run(trace: list[Step]) -> None:
    kinds = {step.event.kind for step in trace}
    parts = {p.kind for step in trace for p in step.event.parts}
    assert (kinds | parts) - {COMPOUND_KIND} == set(KIND_CATEGORY)
    for step in trace:
        event = step.event
        if event.kind != COMPOUND_KIND:
            assert event.category == KIND_CATEGORY[event.kind]


def test_every_kind_has_at_least_three_paraphrases() -> None:
    assert set(PHRASES) == set(KIND_CATEGORY)
    for kind, templates in PHRASES.items():
        assert len(templates["exact"]) >= 3, kind
        assert set(templates) <= {"exact", "vague", "partial"}, kind
        assert templates.get("vague"), f"{kind} has no vague wording"
    assert len(COMPOUND) >= 3


def test_templates_use_only_known_placeholders() -> None:
    for kind, templates in PHRASES.items():
        for template in (t for group in templates.values() for t in group):
            fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
            assert fields <= PLACEHOLDERS, (kind, template)
            assert not template.endswith("."), (kind, template)  # clauses: the sentence is made later
            assert template[0] in "{I" or template[0].islower(), (kind, template)


def test_vague_partial_and_compound_reports_occur(trace: list[Step]) -> None:
    vagueness = Counter(step.event.vagueness for step in trace)
    assert vagueness["exact"] > STEPS / 2
    assert vagueness["vague"] > 50 and vagueness["partial"] > 20 and vagueness["compound"] > 50
    texts = [step.event.text for step in trace]
    assert any(t.startswith("Someone") for t in texts)
    assert all(t[0].isupper() and t.endswith(".") for t in texts)


def test_a_compound_event_joins_two_independent_events(trace: list[Step]) -> None:
    compounds = [step.event for step in trace if step.event.kind == COMPOUND_KIND]
    assert compounds
    for event in compounds:
        first, second = event.parts
        assert event.vagueness == "compound" and event.category == first.category
        assert event.delta.remove == first.delta.remove | second.delta.remove
        assert event.delta.add == first.delta.add | second.delta.add
        assert not (first.delta.remove | first.delta.add) & (second.delta.remove | second.delta.add)
        assert set(first.entities) | set(second.entities) == set(event.entities)


def test_next_compound_always_joins_when_it_can(home: Home) -> None:
    generator = EventGenerator(home, seed=8)
    state = home.facts
    for _ in range(50):
        event = generator.next_compound(state)
        assert event.kind == COMPOUND_KIND and len(event.parts) == 2
        assert event.delta.remove <= state and not event.delta.add & state
        state = (state - event.delta.remove) | event.delta.add


def test_reports_name_people_and_things_by_label(home: Home, trace: list[Step]) -> None:
    exact = [s.event for s in trace if s.event.vagueness == "exact"]
    named = 0
    for event in exact:
        people = [n for n in event.entities if n in home.people]
        named += any(home.label(p) in event.text for p in people)
        items = [n for n in event.entities if n in home.items]
        assert all(home.label(i) in event.text for i in items), event.text
    assert named > len(exact) / 4


def test_the_same_seed_gives_the_same_events(home: Home) -> None:
    first, second = run(home, seed=21, steps=200), run(home, seed=21, steps=200)
    assert [s.event for s in first] == [s.event for s in second]
    other = run(home, seed=22, steps=200)
    assert [s.event.text for s in first] != [s.event.text for s in other]


def test_recent_entities_are_left_alone(home: Home) -> None:
    trace = run(home, seed=5, steps=300, rates=(0.2, 0.1, 0.0))
    for earlier, later in itertools.pairwise(trace):
        changed = {f.args[0] for f in earlier.event.delta.remove | earlier.event.delta.add}
        again = {f.args[0] for f in later.event.delta.remove | later.event.delta.add}
        assert not changed & again, (earlier.event.text, later.event.text)


def test_people_never_touch_what_the_robot_holds(home: Home) -> None:
    mug = next(i for i in home.of_type("cup") if any(f.args[0] == i and f.predicate == "on" for f in home.facts))
    where = next(f for f in home.facts if f.predicate == "on" and f.args[0] == mug)
    holding = (home.facts - {where, Fact("hand_empty", ("robot_1",))}) | {Fact("held", (mug, "robot_1"))}
    for step in run(home, seed=9, steps=400, state=holding):
        assert mug not in step.event.delta.mentioned()
        assert Fact("held", (mug, "robot_1")) in step.before


@pytest.mark.parametrize(
    ("rates", "expected"),
    [
        ((0.0, 0.0, 0.0), {"exact"}),
        ((1.0, 0.0, 0.0), {"vague"}),
        ((0.0, 1.0, 0.0), {"partial", "exact"}),
        ((0.0, 0.0, 1.0), {"compound"}),
    ],
)
def test_the_wording_rates(home: Home, rates: tuple[float, float, float], expected: set[str]) -> None:
    trace = run(home, seed=13, steps=600, rates=rates)
    assert {s.event.vagueness for s in trace} == expected


class _Recorded(str):
    """A template that notes when it is filled in."""

    used: ClassVar[set[str]] = set()

    def format_map(self, mapping: Any, /) -> str:
        _Recorded.used.add(str(self))
        return str(self).format_map(mapping)


def test_nearly_every_template_is_filled_in_without_a_missing_placeholder(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs in each wording mode use the templates; a placeholder a builder does not provide would raise."""
    recording = {k: {m: tuple(_Recorded(t) for t in ts) for m, ts in v.items()} for k, v in PHRASES.items()}
    monkeypatch.setattr(events, "PHRASES", recording)
    _Recorded.used.clear()
    for rates in ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)):
        run(home, seed=13, steps=1000, rates=rates)
    every = {t for v in PHRASES.values() for ts in v.values() for t in ts}
    assert len(_Recorded.used) >= 0.97 * len(every), sorted(every - _Recorded.used)


def test_a_bare_home_still_has_events() -> None:
    """One room with nothing but its furniture and appliances: events open, close and toggle them."""
    home = generate_home(HomeSpec(seed=1, rooms=1, items=0, people=0))
    trace = run(home, seed=1, steps=50, rates=(0.2, 0.1, 0.5))
    assert {s.event.category for s in trace} == {"room"}
    for step in trace:
        assert step.event.delta.remove <= step.before and not step.event.delta.add & step.before


def test_events_serialise_to_json(trace: list[Step]) -> None:
    for step in trace[:100]:
        data = json.loads(json.dumps(step.event.to_json()))
        assert Delta.from_json(data["delta"]) == step.event.delta
        assert data["text"] == step.event.text and len(data["parts"]) == len(step.event.parts)


@pytest.mark.slow
def test_events_stay_valid_in_a_ten_thousand_entity_home() -> None:
    home = generate_home(HomeSpec.scaled(10_000, seed=2, undescriptive_names=True))
    verifier = Verifier(DomainRegistry().get("household"))
    for step in run(home, seed=2, steps=150):
        assert verifier.verify(step.event.delta, IndexedView(home.by_name, step.before), UpdateSource.NL) == ()
