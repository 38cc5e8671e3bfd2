"""Group commit: ``WorldMemory.apply_group`` and ``GraphStore.commit_group`` on every backend."""

from __future__ import annotations

import contextlib
import itertools
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import pytest
from conftest import unique_name
from faults_common import ROOT, assert_history_consistent, replay, survey

from kg_memory import (
    Delta,
    DomainRegistry,
    Entity,
    Fact,
    GraphStore,
    InvalidValue,
    Issue,
    IssueCode,
    NotApplicable,
    UnknownMemory,
    Update,
    UpdateSource,
    UpdateStatus,
    VersionConflict,
    WorldMemory,
)
from kg_memory import memory as memory_module
from kg_memory._overlay import Overlay
from kg_memory.memory import Proposal, Propose
from kg_memory.stores import SQLiteStore
from kg_memory.verifier import StateView
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS

F = Fact.parse


def _move(item: str, to: str, **fields: object) -> Propose:
    """A proposer that moves ``item`` from wherever the view has it onto ``to``."""

    def propose(view: StateView) -> Proposal:
        (where,) = [f for f in view.facts_about([item]) if f.predicate == "on" and f.args[0] == item]
        delta = Delta(remove={where}, add={F(f"(on {item} {to})")})
        return Proposal(delta=delta, source=UpdateSource.SENSOR, input=f"{item} to {to}", **fields)  # type: ignore[arg-type]

    return propose


def _fixed(delta: Delta, **fields: object) -> Propose:
    return lambda view: Proposal(delta=delta, source=UpdateSource.API, input="fixed", **fields)  # type: ignore[arg-type]


def _updates(outcomes: list[Update | BaseException]) -> list[Update]:
    assert all(isinstance(o, Update) for o in outcomes), outcomes
    return [o for o in outcomes if isinstance(o, Update)]


def test_a_rejected_delta_between_two_accepted_ones_takes_neither_down(home: WorldMemory) -> None:
    v, seq = home.version, home.history()[-1].seq
    bad = Delta(add={F("(on book_1 nowhere)")})
    first, middle, last = _updates(
        home.apply_group([_move("mug_1", "shelf_1"), _fixed(bad), _move("book_1", "table_1")])
    )
    applied, rejected = UpdateStatus.APPLIED, UpdateStatus.REJECTED
    assert [u.status for u in (first, middle, last)] == [applied, rejected, applied]
    assert [u.version for u in (first, middle, last)] == [v + 1, v + 1, v + 2]
    assert [u.seq for u in (first, middle, last)] == [seq + 1, seq + 2, seq + 3]
    assert {i.code for i in middle.issues} == {IssueCode.UNKNOWN_ENTITY}
    assert home.history(since_seq=seq) == [first, middle, last]
    assert assert_history_consistent(home)[-2:] == [first, last]
    assert {F("(on mug_1 shelf_1)"), F("(on book_1 table_1)")} <= home.facts()


def test_later_proposals_see_the_earlier_ones(home: WorldMemory) -> None:
    before = home.facts()
    there, back = _updates(home.apply_group([_move("mug_1", "shelf_1"), _move("mug_1", "table_1")]))
    assert there.delta.add == {F("(on mug_1 shelf_1)")}
    assert back.delta.remove == {F("(on mug_1 shelf_1)")}  # what the first left, not what the store held
    assert (there.status, back.status) == (UpdateStatus.APPLIED, UpdateStatus.APPLIED)
    applied = assert_history_consistent(home)
    assert home.facts() == replay(frozenset(), applied) == before


def test_an_item_with_a_stale_expected_version_conflicts_alone(home: WorldMemory) -> None:
    v, seq = home.version, home.history()[-1].seq
    first, stale, last = home.apply_group(
        [_move("mug_1", "shelf_1"), _move("book_1", "table_1", expected_version=v), _move("book_1", "sink_1")]
    )
    assert isinstance(stale, VersionConflict)
    assert (stale.expected, stale.actual) == (v, v + 1)
    assert isinstance(first, Update) and isinstance(last, Update)
    assert (first.version, last.version) == (v + 1, v + 2)
    assert [u.id for u in home.history(since_seq=seq)] == [first.id, last.id]
    assert F("(on book_1 sink_1)") in home.facts()


@pytest.fixture
def every_second(store: GraphStore) -> Iterator[GraphStore]:
    before = store.checkpoint_every
    store.checkpoint_every = 2
    yield store
    store.checkpoint_every = before


def test_a_group_crossing_checkpoints_writes_each_exact_state(every_second: GraphStore, home: WorldMemory) -> None:
    v = home.version
    places = ("shelf_1", "sink_1", "table_1", "shelf_1", "sink_1")
    updates = _updates(home.apply_group([_move("mug_1", p) for p in places]))
    assert [u.version for u in updates] == list(range(v + 1, v + 6))
    applied = assert_history_consistent(home)
    for version in range(v + 1, v + 6):
        checkpoint = every_second.nearest_checkpoint(home.name, version)
        assert checkpoint is not None
        assert checkpoint.version == version - version % 2
        assert checkpoint.facts == replay(frozenset(), applied[: checkpoint.version])


def test_store_commit_group_is_all_or_nothing(store: GraphStore, home: WorldMemory) -> None:
    v, facts, history = home.version, home.facts(), home.history()

    def update(delta: Delta) -> Update:
        return Update(memory=home.name, source=UpdateSource.API, delta=delta, status=UpdateStatus.APPLIED, version=v)

    good = update(Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")}))
    absent = update(Delta(remove={F("(on book_1 table_1)")}))
    noted = Update(memory=home.name, source=UpdateSource.API, delta=Delta(), status=UpdateStatus.NOOP, version=v)
    with pytest.raises(NotApplicable, match="on book_1 table_1"):
        store.commit_group(home.name, [good, noted, absent], expected_version=v)
    with pytest.raises(VersionConflict):
        store.commit_group(home.name, [good, noted], expected_version=v - 1)
    assert (home.version, home.facts(), home.history()) == (v, facts, history)
    stored = store.commit_group(home.name, [good, noted], expected_version=v)
    assert [(u.seq, u.version) for u in stored] == [(history[-1].seq + 1, v + 1), (history[-1].seq + 2, v + 1)]
    assert home.history(since_seq=history[-1].seq) == stored


def _applied(home: WorldMemory, delta: Delta, version: int) -> Update:
    return Update(memory=home.name, source=UpdateSource.API, delta=delta, status=UpdateStatus.APPLIED, version=version)


def _step(item: str, frm: str, to: str) -> Delta:
    return Delta(remove={F(f"(on {item} {frm})")}, add={F(f"(on {item} {to})")})


def test_a_group_writes_each_step_of_a_fact_that_comes_and_goes(store: GraphStore, home: WorldMemory) -> None:
    v = home.version
    places = ("table_1", "shelf_1", "table_1", "sink_1")
    steps = [_step("mug_1", frm, to) for frm, to in itertools.pairwise(places)]
    stored = store.commit_group(home.name, [_applied(home, d, v) for d in steps], expected_version=v)
    assert [u.version for u in stored] == [v + 1, v + 2, v + 3]
    # what each entity is indexed under holds the net result too
    mug_on = {place: F(f"(on mug_1 {place})") in home.facts(entity=place) for place in set(places)}
    assert mug_on == {"table_1": False, "shelf_1": False, "sink_1": True}
    assert home.facts(entity="mug_1") == {f for f in home.facts() if "mug_1" in f.args}
    assert_history_consistent(home)


@pytest.mark.parametrize(
    ("second", "named"),
    [
        (Delta(remove={F("(on mug_1 table_1)")}), "(on mug_1 table_1)"),  # removed by the first already
        (Delta(add={F("(on mug_1 shelf_1)")}), "(on mug_1 shelf_1)"),  # added by the first already
        (Delta(add={F("(on book_1 shelf_1)")}), "(on book_1 shelf_1)"),  # held before the group
        (Delta(remove={F("(on book_1 table_1)")}), "(on book_1 table_1)"),  # never held
    ],
)
def test_a_group_item_that_does_not_apply_after_the_earlier_ones_is_named(
    store: GraphStore, home: WorldMemory, second: Delta, named: str
) -> None:
    v, facts, history = home.version, home.facts(), home.history()
    group = [_applied(home, _step("mug_1", "table_1", "shelf_1"), v), _applied(home, second, v)]
    with pytest.raises(NotApplicable, match=re.escape(named)):
        store.commit_group(home.name, group, expected_version=v)
    assert (home.version, home.facts(), home.history()) == (v, facts, history)


@pytest.mark.parametrize(
    ("steps", "named"),
    [
        # a fact the group removes and adds back must have held before it
        ([Delta(remove={F("(on book_1 table_1)")}), Delta(add={F("(on book_1 table_1)")})], "(on book_1 table_1)"),
        # a fact the group adds and removes again must not have held before it
        ([Delta(add={F("(on book_1 shelf_1)")}), Delta(remove={F("(on book_1 shelf_1)")})], "(on book_1 shelf_1)"),
    ],
)
def test_a_fact_a_group_leaves_as_it_found_it_is_still_checked(
    store: GraphStore, home: WorldMemory, steps: list[Delta], named: str
) -> None:
    v, facts, history = home.version, home.facts(), home.history()
    with pytest.raises(NotApplicable, match=re.escape(named)):
        store.commit_group(home.name, [_applied(home, d, v) for d in steps], expected_version=v)
    assert (home.version, home.facts(), home.history()) == (v, facts, history)
    back = [_step("mug_1", "table_1", "shelf_1"), _step("mug_1", "shelf_1", "table_1")]  # as it was, and fine
    stored = store.commit_group(home.name, [_applied(home, d, v) for d in back], expected_version=v)
    assert [u.version for u in stored] == [v + 1, v + 2]
    assert home.facts() == facts
    assert_history_consistent(home)


def test_a_fact_naming_an_entity_a_later_item_creates_is_refused(store: GraphStore, home: WorldMemory) -> None:
    v, facts = home.version, home.facts()
    early = _applied(home, Delta(add={F("(on cup_9 shelf_1)")}), v)
    creates = Update(
        memory=home.name,
        source=UpdateSource.SENSOR,
        delta=Delta(new_entities=(Entity("cup_9", "dish", "a cup"),)),
        status=UpdateStatus.APPLIED,
        version=v,
    )
    with pytest.raises(NotApplicable, match="cup_9"):
        store.commit_group(home.name, [early, creates], expected_version=v)
    assert (home.version, home.facts(), home.entities(["cup_9"])) == (v, facts, {})
    stored = store.commit_group(home.name, [creates, early], expected_version=v)
    assert [u.version for u in stored] == [v + 1, v + 2]
    assert F("(on cup_9 shelf_1)") in home.facts(entity="cup_9")


def test_a_broken_item_is_split_off_and_the_rest_commit(store: GraphStore, home: WorldMemory) -> None:
    # the lamp's state is written behind the version's back after the group read it, so the item
    # that switches it on passes verification and the store then refuses it
    lamp_on = F("(light_on lamp_1)")
    seq = home.history()[-1].seq
    calls = 0
    seen_on: list[bool] = []

    def read_the_lamp(view: StateView) -> Proposal:
        seen_on.append(lamp_on in view.facts_about(["lamp_1"]))
        return _move("mug_1", "shelf_1")(view)

    def switch_on(view: StateView) -> Proposal:
        nonlocal calls
        calls += 1
        if calls == 1:
            store.load_state(home.name, [], [lamp_on])
        return Proposal(delta=Delta(add={lamp_on}), source=UpdateSource.API, input="lamp on")

    first, broken, last = home.apply_group([read_the_lamp, switch_on, _move("book_1", "table_1")])
    assert isinstance(first, Update) and isinstance(last, Update) and isinstance(broken, Update)
    assert (first.status, last.status) == (UpdateStatus.APPLIED, UpdateStatus.APPLIED)
    # alone, it is proposed again and verified against the state as it is
    assert broken.status is UpdateStatus.REJECTED
    assert {i.code for i in broken.issues} == {IssueCode.ADD_PRESENT}
    assert [u.id for u in home.history(since_seq=seq)] == [first.id, broken.id, last.id]
    assert calls == 2 and seen_on == [False, True]


def test_a_group_raced_by_another_writer_is_reproposed(store: GraphStore, home: WorldMemory) -> None:
    other = WorldMemory.open(store, home.name)
    v = home.version
    calls = {"race": 0, "after": 0}

    def race(view: StateView) -> Proposal:
        calls["race"] += 1
        if calls["race"] == 1:
            other.apply(Delta(add={F("(light_on lamp_1)")}), source=UpdateSource.API, input="the other writer")
        return _move("mug_1", "shelf_1")(view)

    def after(view: StateView) -> Proposal:
        calls["after"] += 1
        return _move("book_1", "table_1")(view)

    moved, later = _updates(home.apply_group([race, after]))
    assert calls == {"race": 2, "after": 2}
    assert (moved.version, later.version) == (v + 2, v + 3)
    assert [u.input for u in home.history()[-3:]] == ["the other writer", "mug_1 to shelf_1", "book_1 to table_1"]
    assert_history_consistent(home)


def test_an_exception_in_one_proposer_is_that_items_only(home: WorldMemory) -> None:
    v = home.version
    boom = RuntimeError("the camera fell off")

    def fails(view: StateView) -> Proposal:
        raise boom

    first, failed, last = home.apply_group([_move("mug_1", "shelf_1"), fails, _move("book_1", "table_1")])
    assert failed is boom
    assert isinstance(first, Update) and isinstance(last, Update)
    assert (first.version, last.version) == (v + 1, v + 2)
    assert_history_consistent(home)


def test_an_empty_group_writes_nothing(store: GraphStore, home: WorldMemory) -> None:
    history = home.history()
    assert home.apply_group([]) == []
    assert store.commit_group(home.name, [], expected_version=home.version) == []
    assert home.history() == history


def test_an_update_of_another_memory_is_refused_in_a_group(store: GraphStore, home: WorldMemory) -> None:
    other = WorldMemory.create(store, unique_name("other"), "example_home")
    stray = Update(memory=other.name, source=UpdateSource.API, delta=Delta(), status=UpdateStatus.NOOP)
    with pytest.raises(InvalidValue, match=other.name):
        store.commit_group(home.name, [stray], expected_version=home.version)


def test_an_entity_created_early_in_a_group_is_there_for_the_later_items(home: WorldMemory) -> None:
    cup = Entity("cup_9", "dish", "green cup")
    create = Proposal(
        delta=Delta(add={F("(on cup_9 table_1)")}, new_entities=(cup,)), source=UpdateSource.SENSOR, input="cup seen"
    )
    made, moved = _updates(home.apply_group([lambda view: create, _move("cup_9", "shelf_1")]))
    assert (made.status, moved.status) == (UpdateStatus.APPLIED, UpdateStatus.APPLIED)
    assert moved.delta.remove == {F("(on cup_9 table_1)")}
    assert home.entities(["cup_9"]) == {"cup_9": cup}
    assert_history_consistent(home)


class _CountingView:
    """A real store's view that counts the reads that reach the store."""

    def __init__(self, memory: WorldMemory) -> None:
        self._view = memory.view()
        self.reads = 0

    def entities(self, names: Iterable[str]) -> Mapping[str, Entity]:
        self.reads += 1
        return self._view.entities(names)

    def facts_about(self, names: Iterable[str]) -> frozenset[Fact]:
        self.reads += 1
        return self._view.facts_about(names)


def test_a_prefetched_overlay_answers_from_what_it_read(home: WorldMemory) -> None:
    base = _CountingView(home)
    overlay = Overlay(base)
    overlay.prefetch(["mug_1", "book_1", "nowhere"])
    assert base.reads == 2
    assert overlay.facts_about(["mug_1"]) == home.store.facts_about(home.name, ["mug_1"])
    assert overlay.facts_about(["mug_1", "book_1"]) == home.store.facts_about(home.name, ["mug_1", "book_1"])
    assert set(overlay.entities(["mug_1", "nowhere"])) == {"mug_1"}
    assert base.reads == 2
    overlay.apply(Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")}))
    assert F("(on mug_1 shelf_1)") in overlay.facts_about(["shelf_1"])  # a name not read before
    assert F("(on mug_1 table_1)") not in overlay.facts_about(["table_1"])
    assert base.reads == 4
    assert overlay.facts_about(["table_1", "shelf_1", "mug_1"]) == home.store.facts_about(
        home.name, ["table_1", "shelf_1", "mug_1"]
    ) - {F("(on mug_1 table_1)")} | {F("(on mug_1 shelf_1)")}
    assert base.reads == 4


def test_a_settled_overlay_is_the_committed_state_without_reading_it_again(home: WorldMemory) -> None:
    base = _CountingView(home)
    overlay = Overlay(base)
    overlay.prefetch(["mug_1", "table_1", "shelf_1"])
    moved = Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")})
    overlay.apply(moved)
    home.apply(moved, source=UpdateSource.API)
    overlay.settle()
    reads = base.reads
    for names in (["mug_1"], ["table_1"], ["shelf_1"], ["mug_1", "table_1", "shelf_1"]):
        assert overlay.facts_about(names) == home.store.facts_about(home.name, names)
    assert base.reads == reads


class _StoreReads:
    """Counts the reads of the state a memory's write groups make through its store."""

    def __init__(self, store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        for method in ("entities", "facts_about"):
            monkeypatch.setattr(store, method, self._counted(getattr(store, method)))

    def _counted(self, read: Callable[..., object]) -> Callable[..., object]:
        def counted(*args: object, **kwargs: object) -> object:
            self.count += 1
            return read(*args, **kwargs)

        return counted


def test_a_group_starts_from_the_view_the_last_one_left(
    store: GraphStore, home: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = _StoreReads(store, monkeypatch)
    names = ["mug_1", "book_1", "table_1", "shelf_1", "sink_1"]
    _updates(home.apply_group([_move("mug_1", "shelf_1"), _move("book_1", "sink_1")], prefetch=names))
    assert reads.count > 0
    reads.count = 0
    later = _updates(home.apply_group([_move("mug_1", "sink_1"), _move("book_1", "table_1")], prefetch=names))
    assert reads.count == 0
    assert [sorted(map(str, u.delta.remove)) for u in later] == [["(on mug_1 shelf_1)"], ["(on book_1 sink_1)"]]
    assert_history_consistent(home)


def test_a_view_holding_too_much_is_not_carried_to_the_next_group(
    store: GraphStore, home: WorldMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_module, "_WARM_HELD", 3)
    reads = _StoreReads(store, monkeypatch)
    names = ["mug_1", "table_1", "shelf_1", "sink_1"]
    _updates(home.apply_group([_move("mug_1", "shelf_1")], prefetch=names))
    reads.count = 0
    (later,) = _updates(home.apply_group([_move("mug_1", "sink_1")], prefetch=names))
    assert reads.count > 0
    assert later.delta.remove == {F("(on mug_1 shelf_1)")}


def test_a_write_from_elsewhere_between_groups_is_read_afresh(store: GraphStore, home: WorldMemory) -> None:
    other = WorldMemory.open(store, home.name)  # another process on the same database, say
    _updates(home.apply_group([_move("mug_1", "shelf_1")], prefetch=["mug_1"]))
    other.apply(Delta(remove={F("(on mug_1 shelf_1)")}, add={F("(on mug_1 table_1)")}), source=UpdateSource.API)
    # verified against the view the first group left, this would be refused: the mug is not on the table there
    moved = Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 sink_1)")})
    (update,) = _updates(home.apply_group([_fixed(moved)], prefetch=["mug_1"]))
    assert update.status is UpdateStatus.APPLIED, update.issues
    assert_history_consistent(home)


def test_a_memory_made_again_at_the_same_version_is_read_afresh(store: GraphStore, home: WorldMemory) -> None:
    by_name = WorldMemory(store, home.name, home.domain)  # whichever memory holds the name
    _updates(by_name.apply_group([_move("mug_1", "shelf_1")], prefetch=["mug_1"]))  # its view is warm
    version = home.version
    store.delete_memory(home.name)
    again = WorldMemory.create(store, home.name, "example_home")
    again.add_entities(SURVEY_ENTITIES, facts=SURVEY_FACTS, input="survey")
    again.apply(Delta(remove={F("(on book_1 shelf_1)")}, add={F("(on book_1 sink_1)")}), source=UpdateSource.API)
    assert again.version == version  # where the first memory was, with the mug back on the table
    back = Delta(remove={F("(on mug_1 table_1)")}, add={F("(on mug_1 shelf_1)")})
    with pytest.raises(UnknownMemory, match=home.name):  # the handle made for the deleted one
        home.apply_group([_fixed(back)])
    (moved,) = _updates(by_name.apply_group([_fixed(back)]))
    assert moved.status is UpdateStatus.APPLIED, moved.issues


def test_prefetching_changes_no_outcome(store: GraphStore, home: WorldMemory) -> None:
    moves = [_move("mug_1", "shelf_1"), _move("book_1", "table_1"), _move("mug_1", "sink_1")]
    updates = _updates(home.apply_group(moves, prefetch=["mug_1", "book_1", "table_1", "shelf_1"]))
    assert [u.delta.add for u in updates] == [
        {F("(on mug_1 shelf_1)")},
        {F("(on book_1 table_1)")},
        {F("(on mug_1 sink_1)")},
    ]
    assert_history_consistent(home)


def test_a_refusal_made_up_front_and_an_unverified_write_are_recorded_as_apply_would(home: WorldMemory) -> None:
    v = home.version
    lamp_on, nowhere = F("(light_on lamp_1)"), F("(on book_1 nowhere)")
    refusal = Issue(code=IssueCode.OBSERVED_ELSEWHERE, message="seen elsewhere", fact=lamp_on)
    refused, unverified = _updates(
        home.apply_group(
            [
                _fixed(Delta(add={lamp_on}), issues=(refusal,), meta={"why": "checked by perception"}),
                _fixed(Delta(add={lamp_on, nowhere}), verify=False),
            ]
        )
    )
    assert (refused.status, refused.issues, refused.version) == (UpdateStatus.REJECTED, (refusal,), v)
    assert refused.delta.add == {lamp_on} and refused.meta["why"] == "checked by perception"
    assert (unverified.status, unverified.version) == (UpdateStatus.APPLIED, v + 1)
    assert unverified.delta.add == {lamp_on}
    assert unverified.meta["verified"] is False and unverified.meta["dropped"] == [str(nowhere)]
    assert lamp_on in home.facts() and nowhere not in home.facts()
    assert_history_consistent(home)


# -- several writers, and a writer killed mid-group --------------------------------------------

GROUPS_PER_WRITER = 10
ITEMS = ("mug_1", "book_1")
PLACES = ("table_1", "shelf_1", "sink_1")


def _next_place(item: str) -> Propose:
    def propose(view: StateView) -> Proposal:
        (here,) = [f for f in view.facts_about([item]) if f.predicate == "on" and f.args[0] == item]
        there = PLACES[(PLACES.index(here.args[1]) + 1) % len(PLACES)]
        return Proposal(delta=Delta(remove={here}, add={F(f"(on {item} {there})")}), source=UpdateSource.API)

    return propose


def _toggle(lamp: str) -> Propose:
    def propose(view: StateView) -> Proposal:
        fact = F(f"(light_on {lamp})")
        on = fact in view.facts_about([lamp])
        return Proposal(delta=Delta(remove={fact}) if on else Delta(add={fact}), source=UpdateSource.API, input=lamp)

    return propose


@pytest.mark.slow
def test_concurrent_groups_lose_no_update(store: GraphStore, home: WorldMemory) -> None:
    update = home.add_entities([Entity("lamp_2", "light")], facts=[F("(light_in lamp_2 hall)")])
    assert update.status is UpdateStatus.APPLIED
    start, surveyed = home.version, home.facts()
    outcomes: list[Update | BaseException] = []
    lock, barrier = threading.Lock(), threading.Barrier(2)

    def write(lamp: str) -> None:
        memory = WorldMemory.open(store, home.name)  # each thread has its own SQLite connection
        barrier.wait(30)
        for _ in range(GROUPS_PER_WRITER):
            group = memory.apply_group([_toggle(lamp), _next_place(ITEMS[0]), _next_place(ITEMS[1])])
            with lock:
                outcomes.extend(group)

    threads = [threading.Thread(target=write, args=(lamp,)) for lamp in ("lamp_1", "lamp_2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not any(t.is_alive() for t in threads), "a writer hung"
    errors = [o for o in outcomes if not isinstance(o, Update)]
    assert all(isinstance(e, VersionConflict) for e in errors), errors
    applied = sorted((o for o in outcomes if isinstance(o, Update)), key=lambda u: u.version)
    assert all(u.status is UpdateStatus.APPLIED for u in applied)
    assert len(applied) + len(errors) == 2 * 3 * GROUPS_PER_WRITER
    assert [u.version for u in applied] == list(range(start + 1, start + 1 + len(applied)))
    assert [u.id for u in home.history() if u.version > start] == [u.id for u in applied]
    assert replay(surveyed, applied) == home.facts()
    assert_history_consistent(home)


BULBS = 64
GROUP = 8
ACKS_BEFORE_KILL = 12

_GROUP_WRITER = textwrap.dedent(
    """
    import sys
    import warnings

    warnings.simplefilter("ignore")
    from kg_memory import Delta, Fact, UpdateSource, WorldMemory
    from kg_memory.memory import Proposal
    from kg_memory.stores import SQLiteStore

    path, name, bulbs, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    memory = WorldMemory.open(SQLiteStore(path), name)

    def toggle(block):
        facts = frozenset(Fact("light_on", (f"bulb_{i}",)) for i in range(block, bulbs, size))

        def propose(view):
            on = facts <= view.facts_about(sorted(f.args[0] for f in facts))
            delta = Delta(remove=facts) if on else Delta(add=facts)
            return Proposal(delta=delta, source=UpdateSource.API, input=f"block {block}")

        return propose

    while True:
        outcomes = memory.apply_group([toggle(block) for block in range(size)])
        if any(getattr(o, "status", None) is None or o.status.value != "applied" for o in outcomes):
            print("FAILED", outcomes, flush=True)
            sys.exit(2)
        print(outcomes[-1].version, flush=True)
    """
)


@pytest.mark.slow
def test_a_group_writer_killed_leaves_whole_groups(tmp_path: Path, domains: DomainRegistry) -> None:
    path = tmp_path / "killed.db"
    store = SQLiteStore(path, domains)
    memory = survey(store, "kill_me")
    bulbs = [Entity(f"bulb_{i}", "light") for i in range(BULBS)]
    update = memory.add_entities(bulbs, facts=[F(f"(light_in bulb_{i} hall)") for i in range(BULBS)])
    assert update.status is UpdateStatus.APPLIED, update.issues
    surveyed_version = memory.version
    store.close()

    command = [sys.executable, "-c", _GROUP_WRITER, str(path), "kill_me", str(BULBS), str(GROUP)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, text=True)
    acked: list[int] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            acked.append(int(line))  # a non-number (FAILED ...) fails the test here
            if len(acked) >= ACKS_BEFORE_KILL:
                break
        child.send_signal(signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        _, stderr = child.communicate(timeout=30)
    assert len(acked) == ACKS_BEFORE_KILL, f"writer stopped early: {stderr}"
    assert acked == [surveyed_version + GROUP * k for k in range(1, ACKS_BEFORE_KILL + 1)]

    with contextlib.closing(sqlite3.connect(path)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    reopened = SQLiteStore(path, domains)
    try:
        after = WorldMemory.open(reopened, "kill_me")
        # every acknowledged group is there, and a group is all there or not at all (the writer may
        # have committed more groups than were read from its pipe before the kill)
        assert after.version >= acked[-1] and (after.version - surveyed_version) % GROUP == 0
        lit = after.facts(predicate="light_on")
        groups = (after.version - surveyed_version) // GROUP
        assert len(lit) == (BULBS if groups % 2 else 0)
        assert_history_consistent(after)
    finally:
        reopened.close()
