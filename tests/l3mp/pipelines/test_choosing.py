"""Reading reports by choosing among the changes the domain allows: linking, readings, the choice
and the reader that records it. The home is the household domain's surveyed home (seed 31); no
model runs here except the recording ranker, which stands in for one where a tie must be broken."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kg_memory import Fact, IssueCode, UpdateStatus, WorldMemory
from kg_memory.domain import Domain, load_domain
from kg_memory.errors import DomainError
from kg_memory.language import load_language
from kg_memory.model import Entity
from l3mp.llm.base import Deadline, DeadlinePassed
from l3mp.pipelines.candidates import candidate_changes
from l3mp.pipelines.choosing import (
    NOTHING_CHANGED,
    Choice,
    Mentions,
    Ranker,
    Ranking,
    Verdict,
    choose,
    judge,
    labels_of,
)
from l3mp.pipelines.linking import link
from l3mp.pipelines.nl_choose import ChoosingReader, choose_goal, read_choice
from sim.survey import surveyed_home

DOMAIN_FOLDER = Path(__file__).parents[3] / "kg_memory" / "domains" / "household"
Survey = tuple[dict[str, Entity], frozenset[Fact]]


@pytest.fixture(scope="module")
def domain() -> Domain:
    return load_domain(DOMAIN_FOLDER)


@pytest.fixture(scope="module")
def survey(domain: Domain) -> Survey:
    entities, facts = surveyed_home(31, domain)
    return {e.name: e for e in entities} | {e.name: e for e in domain.constant_entities()}, facts


@dataclass
class RecordingRanker:
    """A ranker with fixed preferences: it prefers readings containing ``prefer`` by ``by``."""

    prefer: str
    by: float = 5.0
    margin: float = 1.0
    asked: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    def rank(self, *, report: str, readings: Sequence[str], deadline: Deadline) -> Ranking:
        self.asked.append((report, tuple(readings)))
        return Ranking(scores=tuple(self.by if self.prefer in r else 0.0 for r in readings))


def read(domain: Domain, survey: Survey, text: str, ranker: Ranker | None = None) -> Choice:
    entities, facts = survey
    labels = labels_of(entities)
    links = link(text, entities, domain)
    named = [k.entity for k in links if k.part_of is None]
    changes = candidate_changes(domain, facts, entities, named)
    judged = judge(domain, text, changes, Mentions.of(links), labels=labels)
    return choose(domain, text, judged, labels=labels, ranker=ranker, deadline=Deadline.after(10))


# -- linking -----------------------------------------------------------------------------------


def test_a_label_said_whole_links_its_entity_and_a_name_inside_it_is_part_of_it(domain: Domain, survey: Survey) -> None:
    links = {k.entity: k for k in link("I put the purple mug on the upstairs kitchen table", survey[0], domain)}
    assert {"mug_1", "table_2"} <= set(links)
    assert links["kitchen_2"].part_of == "table_2"  # "upstairs kitchen" only inside the table's name
    assert links["table_2"].part_of is None and links["mug_1"].strength == 1.0


def test_entities_said_alike_are_all_kept_for_the_state_or_a_question_to_decide(domain: Domain, survey: Survey) -> None:
    kitchens = {k.entity for k in link("Tariq is in the kitchen", survey[0], domain) if k.head == "kitchen"}
    assert kitchens == {"kitchen_1", "kitchen_2", "kitchen_3"}
    phones = {k.entity for k in link("Somebody answered the phone", survey[0], domain)}
    assert {"phone_1", "smartphone_1", "cell_phone_2", "cordless_phone_1"} <= phones  # by type too


def test_a_phrase_owns_its_words_against_an_entity_whose_words_lie_scattered(domain: Domain, survey: Survey) -> None:
    text = "Jack is out of the bathroom and sitting in the guest living room."
    bathrooms = {k.entity for k in link(text, survey[0], domain) if k.head == "bathroom"}
    assert len(bathrooms) == 6  # "guest" is the living room's: it does not single out the guest bathroom


# -- readings ----------------------------------------------------------------------------------


def test_a_new_place_retires_the_old_one_and_a_place_never_just_stops(domain: Domain, survey: Survey) -> None:
    entities, facts = survey
    changes = candidate_changes(domain, facts, entities, ["mug_1", "table_2"])
    moved = [c for c in changes if c.fact == Fact("on", ("mug_1", "table_2"))]
    assert len(moved) == 1 and moved[0].becomes and moved[0].retired == {Fact("on", ("mug_1", "desk_2"))}
    assert not [c for c in changes if c.fact == Fact("on", ("mug_1", "desk_2")) and not c.becomes]
    assert [c for c in changes if c.fact == Fact("dirty", ("mug_1",)) and not c.becomes and not c.already]


def test_a_liquid_fills_the_value_slot_and_the_old_liquid_goes(domain: Domain, survey: Survey) -> None:
    entities, facts = survey
    changes = candidate_changes(domain, facts, entities, ["glass_5"])  # holds water
    milk = [c for c in changes if c.fact == Fact("filled", ("glass_5", "milk"))]
    assert milk and milk[0].retired == {Fact("filled", ("glass_5", "water"))}


# -- the choice --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("report", "removed", "added"),
    [
        ("I switched off the bedside lamp in the west bedroom.", {"(switched_on lamp_12)"}, set()),
        ("I opened the washer in the main laundry room.", set(), {"(open washer_1)"}),
        ("Tariq went up to the upstairs kitchen.", {"(person_in tariq office_2)"}, {"(person_in tariq kitchen_2)"}),
        (
            "I took the purple mug off the upstairs office desk and put it on the upstairs kitchen counter.",
            {"(on mug_1 desk_2)"},
            {"(on mug_1 counter_2)"},
        ),
        (
            "I put the small tomato from the downstairs kitchen counter into the downstairs kitchen fridge.",
            {"(on tomato_3 counter_3)"},
            {"(inside tomato_3 fridge_3)"},
        ),
        (
            "I turned off both the bedside lamp and the overhead light in the east bedroom.",
            {"(switched_on lamp_11)", "(switched_on light_14)"},
            set(),
        ),
        ("Frank says his brown jacket isn't dirty.", {"(dirty jacket_1)"}, set()),
        (
            "I drank the juice from the blue cup on the downstairs kitchen table, so that cup is empty and dirty now.",
            {"(filled cup_1 juice)"},
            {"(dirty cup_1)"},
        ),
    ],
)
def test_the_report_s_own_words_choose_the_change(
    domain: Domain, survey: Survey, report: str, removed: set[str], added: set[str]
) -> None:
    choice = read(domain, survey, report)
    assert choice.verdict is Verdict.CHANGE, choice.reason
    assert {str(f) for f in choice.delta.remove} == removed
    assert {str(f) for f in choice.delta.add} == added


def test_words_that_say_the_other_way_drop_a_reading(domain: Domain, survey: Survey) -> None:
    # the lamp is on already: "on" cannot mean it stops, and a report of what holds needs "still"
    choice = read(domain, survey, "It was too dark, so I turned on the floor lamp in the upstairs living room.")
    assert choice.verdict is Verdict.NOT_SURE and not choice.chosen


def test_a_report_of_what_still_holds_changes_nothing(domain: Domain, survey: Survey) -> None:
    choice = read(domain, survey, "Priya is still in the north bathroom.")
    assert choice.verdict is Verdict.NO_CHANGE and choice.delta.is_empty


# "to the wardrobe": on it or inside it? Nothing in the words tells, so the ranker does.
TIE = "I moved the pink sweater from the east bedroom bed to the east bedroom wardrobe."


def test_a_close_tie_goes_to_the_ranker_and_its_clear_winner_is_taken(domain: Domain, survey: Survey) -> None:
    assert read(domain, survey, TIE).verdict is Verdict.NOT_SURE  # no ranker: no guess
    report = TIE
    ranker = RecordingRanker(prefer="inside")
    choice = read(domain, survey, report, ranker)
    assert len(ranker.asked) == 1 and len(ranker.asked[0][1]) == 2
    assert {str(f) for f in choice.delta.add} == {"(inside sweater_2 wardrobe_7)"}


def test_without_a_clear_margin_the_answer_is_not_sure_with_the_readings(domain: Domain, survey: Survey) -> None:
    choice = read(domain, survey, TIE, RecordingRanker(prefer="nothing of the kind"))
    assert choice.verdict is Verdict.NOT_SURE and len(choice.undecided) == 2
    assert "east bedroom wardrobe" in choice.reason and len(choice.rankings) == 1


def test_many_things_alike_are_a_question_not_a_nuance_for_the_ranker(domain: Domain, survey: Survey) -> None:
    ranker = RecordingRanker(prefer="guest")
    choice = read(domain, survey, "I tossed a towel into the hamper.", ranker)
    assert choice.verdict is Verdict.NOT_SURE and ranker.asked == []


def test_of_places_alike_the_one_where_the_thing_is_goes(surveyed: WorldMemory) -> None:
    # the towel is on the east bedroom's bed: "the hamper" is that room's, of nine hampers
    choice = read_choice(surveyed, "I tossed the pink towel into the hamper.", ranker=None, deadline=Deadline.after(10))
    assert {str(f) for f in choice.delta.add} == {"(on towel_1 hamper_7)"}
    # rooms next door are not the same place: which kitchen Tariq went to stays a question
    tariq = read_choice(surveyed, "Tariq is in the kitchen now.", ranker=None, deadline=Deadline.after(10))
    assert tariq.verdict is Verdict.NOT_SURE


# -- the reader and the goals -------------------------------------------------------------------


def test_the_reader_applies_the_chosen_delta_with_what_it_chose(surveyed: WorldMemory) -> None:
    reader = ChoosingReader(surveyed, None)
    update, choice, _ = reader.read("I opened the washer in the main laundry room.", deadline=Deadline.after(10))
    assert update.status is UpdateStatus.APPLIED and choice is not None
    assert surveyed.state().holds(Fact("open", ("washer_1",)))
    assert update.meta["reader"] == "choose" and update.meta["choice"]["verdict"] == "change"


def test_a_report_it_is_not_sure_of_is_recorded_as_rejected_and_changes_nothing(surveyed: WorldMemory) -> None:
    version = surveyed.version
    update, _, _ = ChoosingReader(surveyed, None).read("Tariq is in the kitchen now.", deadline=Deadline.after(10))
    assert update.status is UpdateStatus.REJECTED and surveyed.version == version
    assert [i.code for i in update.issues] == [IssueCode.NOT_SURE] and "upstairs kitchen" in update.issues[0].message


def test_a_ranker_past_the_deadline_ends_the_update_as_rejected_with_why(surveyed: WorldMemory) -> None:
    class Late:
        margin = 1.0

        def rank(self, *, report: str, readings: Sequence[str], deadline: Deadline) -> Ranking:
            raise DeadlinePassed(1.0, "update")

    version = surveyed.version
    update, _, _ = ChoosingReader(surveyed, Late()).read(TIE, deadline=Deadline.after(10))
    assert update.status is UpdateStatus.REJECTED and surveyed.version == version
    assert update.issues[0].code is IssueCode.DEADLINE


def test_a_request_s_goal_is_what_its_chosen_readings_make_true(surveyed: WorldMemory) -> None:
    goal = choose_goal(
        surveyed, "Please turn off the TV in the guest living room.", ranker=None, deadline=Deadline.after(10)
    )
    assert goal.literals == ("(not (switched_on tv_4))",) and goal.goal == "(not (switched_on tv_4))"
    both = choose_goal(
        surveyed,
        "Benjamin's thirsty: fill the brown glass with water and give it to him.",
        ranker=None,
        deadline=Deadline.after(10),
    )
    assert set(both.literals) == {"(filled glass_4 water)", "(in_hand glass_4 benjamin)"}
    unsure = choose_goal(surveyed, "Put it away.", ranker=None, deadline=Deadline.after(10))
    assert unsure.goal is None and unsure.reason
    assert read_choice(surveyed, "Put it away.", ranker=None, deadline=Deadline.after(10)).verdict is Verdict.NOT_SURE


# -- the language file ---------------------------------------------------------------------------


def test_cue_words_markers_and_examples_are_checked_when_the_domain_loads(tmp_path: Path) -> None:
    arities, actions = {"on": 2, "lit": 1}, {}
    path = tmp_path / "language.toml"
    path.write_text('[predicates]\non = "{0} on {1}"\nlit = "{0} lit"\n[cues]\nlit = { add = ["lit"], up = ["x"] }\n')
    with pytest.raises(DomainError, match="cues"):
        load_language(path, arities, actions)
    path.write_text('[predicates]\non = "{0} on {1}"\nlit = "{0} lit"\n[markers]\nlit = ["in"]\n')
    with pytest.raises(DomainError, match="two or more"):
        load_language(path, arities, actions)
    path.write_text('[predicates]\non = "{0} on {1}"\nlit = "{0} lit"\n[[examples]]\nreport = "x"\n')
    with pytest.raises(DomainError, match="examples"):
        load_language(path, arities, actions)
    path.write_text(
        '[predicates]\non = "{0} on {1}"\nlit = "{0} lit"\n[negations]\nlit = "{0} dark"\n'
        '[cues]\nlit = { add = ["Lit"], remove = ["dark"] }\n[markers]\non = ["onto"]\n'
    )
    language = load_language(path, arities, actions)
    assert language.cues["lit"].add == ("lit",) and language.markers["on"] == ("onto",)
    assert language.no_longer(Fact("lit", ("lamp",))) == "lamp dark"


def test_where_no_word_names_the_change_the_model_may_pick_one_or_none(domain: Domain, survey: Survey) -> None:
    report = "Anna wandered off to the downstairs office."  # "wandered" is none of the domain's words
    assert read(domain, survey, report).verdict is Verdict.NOT_SURE
    ranker = RecordingRanker(prefer="downstairs office")
    choice = read(domain, survey, report, ranker)
    assert {str(f) for f in choice.delta.add} == {"(person_in anna office_3)"}
    assert NOTHING_CHANGED in ranker.asked[0][1]  # "none of these" is always offered
    declined = read(domain, survey, report, RecordingRanker(prefer=NOTHING_CHANGED))
    assert declined.verdict is Verdict.NOT_SURE and declined.undecided
