"""The fast action evaluator and its world: formula semantics, effects, reasons, plan validation,
and a cross-check against unified-planning's plan validator on hundreds of random plans."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from types import MappingProxyType

import pytest
from random_worlds import BUILDERS, groundings, mutate, random_walk, touchable
from up_oracle import UpOracle, UpVerdict

from kg_memory import (
    ActionSchema,
    And,
    Atom,
    Delta,
    Domain,
    DomainRegistry,
    Effect,
    Entity,
    Equals,
    Fact,
    Formula,
    InvalidValue,
    Not,
    Or,
    Parameter,
    Quantified,
    Truth,
)
from planning import ActionEvaluator, GroundAction, PlanRun, World, WorldError


def facts(*texts: str) -> set[Fact]:
    return {Fact.parse(t) for t in texts}


def act(text: str) -> GroundAction:
    return GroundAction.parse(text)


ENTITIES = (
    *(Entity(n, "room") for n in ("hall", "kitchen", "laundry")),
    Entity("table_1", "surface"),
    Entity("sink_1", "sink"),
    Entity("washer_1", "washer"),
    Entity("washer_2", "washer"),
    Entity("dryer_1", "dryer"),
    Entity("faucet_1", "faucet"),
    Entity("lamp_1", "light"),
    Entity("cup_1", "cup"),
    Entity("plate_1", "dish"),
    Entity("shirt_1", "clothes"),
    Entity("sock_1", "clothes"),
    Entity("jeans_1", "clothes"),
    Entity("towel_1", "clothes"),
    Entity("phone_1", "phone"),
    Entity("alex", "person"),
)
FACTS = facts(
    "(connected hall kitchen)",
    "(connected kitchen hall)",
    "(connected hall laundry)",
    "(connected laundry hall)",
    "(in_room table_1 kitchen)",
    "(in_room sink_1 kitchen)",
    "(in_room washer_1 laundry)",
    "(in_room washer_2 laundry)",
    "(in_room dryer_1 laundry)",
    "(faucet_at faucet_1 sink_1)",
    "(appliance_in faucet_1 kitchen)",
    "(switched_on faucet_1)",
    "(appliance_in lamp_1 hall)",
    "(robot_at robot_1 kitchen)",
    "(held cup_1 robot_1)",
    "(dirty cup_1)",
    "(filled cup_1 milk)",
    "(on plate_1 table_1)",
    "(dirty plate_1)",
    "(filled plate_1 juice)",
    "(inside shirt_1 washer_1)",
    "(dirty shirt_1)",
    "(inside sock_1 washer_1)",
    "(wet sock_1)",
    "(inside jeans_1 washer_2)",
    "(dirty jeans_1)",
    "(inside towel_1 dryer_1)",
    "(wet towel_1)",
    "(open washer_2)",
    "(on phone_1 table_1)",
    "(ringing phone_1)",
    "(person_in alex hall)",
)


@pytest.fixture(scope="module")
def household() -> Domain:
    return DomainRegistry().get("household")


@pytest.fixture(scope="module")
def evaluator(household: Domain) -> ActionEvaluator:
    return ActionEvaluator(household)


@pytest.fixture
def world(household: Domain) -> World:
    return World(household, ENTITIES, FACTS)


# -- formulas -------------------------------------------------------------------------------


def atom(text: str) -> Atom:
    fact = Fact.parse(text.replace("?", "q_"))
    return Atom(fact.predicate, tuple(a.replace("q_", "?") for a in fact.args))


FORMULAS: list[tuple[str, Formula, bool]] = [
    ("atom true", atom("(robot_at robot_1 kitchen)"), True),
    ("atom false", atom("(robot_at robot_1 hall)"), False),
    ("atom with variables", atom("(inside ?c ?w)"), True),
    ("truth", Truth(True), True),
    ("falsity", Truth(False), False),
    ("equals", Equals("?w", "washer_1"), True),
    ("not equals", Not(Equals("?c", "sock_1")), True),
    ("not", Not(atom("(open ?w)")), True),
    ("and", And((atom("(dirty ?c)"), atom("(inside ?c ?w)"))), True),
    ("and false", And((atom("(dirty ?c)"), atom("(wet ?c)"))), False),
    ("empty and", And(()), True),
    ("or", Or((atom("(wet ?c)"), atom("(dirty ?c)"))), True),
    ("empty or", Or(()), False),
    ("forall", Quantified(True, (Parameter("x", "clothes"),), Not(atom("(held ?x robot_1)"))), True),
    ("forall false", Quantified(True, (Parameter("x", "clothes"),), atom("(dirty ?x)")), False),
    ("exists", Quantified(False, (Parameter("x", "clothes"),), atom("(inside ?x washer_2)")), True),
    ("exists false", Quantified(False, (Parameter("x", "clothes"),), atom("(held ?x robot_1)")), False),
    # a cup is a dish: quantifiers range over subtypes too
    ("exists over subtypes", Quantified(False, (Parameter("d", "dish"),), atom("(filled ?d milk)")), True),
    (
        "two variables",
        Quantified(
            False,
            (Parameter("x", "clothes"), Parameter("y", "washer")),
            And((atom("(inside ?x ?y)"), atom("(open ?y)"))),
        ),
        True,
    ),
    (
        "nested, shadowing ?c",
        Quantified(True, (Parameter("c", "clothes"),), Or((Not(atom("(inside ?c ?w)")), Not(Equals("?c", "jeans_1"))))),
        True,
    ),
]


@pytest.mark.parametrize(("label", "formula", "expected"), FORMULAS, ids=[f[0] for f in FORMULAS])
def test_formula_semantics(
    evaluator: ActionEvaluator, world: World, label: str, formula: Formula, expected: bool
) -> None:
    assert evaluator.evaluate(formula, world, {"c": "shirt_1", "w": "washer_1"}) is expected


def test_binding_keys_may_carry_the_question_mark(evaluator: ActionEvaluator, world: World) -> None:
    assert evaluator.evaluate(atom("(open ?w)"), world, {"?w": "washer_2"})
    assert not evaluator.evaluate(atom("(open ?w)"), world, {"w": "washer_1"})


def test_an_unbound_variable_is_an_error(evaluator: ActionEvaluator, world: World) -> None:
    with pytest.raises(ValueError, match=r"\?w is not bound"):
        evaluator.evaluate(atom("(open ?w)"), world)


def test_an_unknown_object_just_makes_atoms_false(evaluator: ActionEvaluator, world: World) -> None:
    assert not evaluator.evaluate(atom("(open ?w)"), world, {"w": "garage_door"})


# -- effects --------------------------------------------------------------------------------


def test_move(evaluator: ActionEvaluator, world: World) -> None:
    outcome = evaluator.execute(act("(move robot_1 kitchen hall)"), world)
    assert outcome.applicable and outcome.reasons == ()
    assert outcome.delta == Delta(remove=facts("(robot_at robot_1 kitchen)"), add=facts("(robot_at robot_1 hall)"))
    assert world.holds(Fact.parse("(robot_at robot_1 hall)"))
    assert not world.holds(Fact.parse("(robot_at robot_1 kitchen)"))


def test_run_washer_cleans_and_wets_only_the_clothes_inside_that_washer(
    evaluator: ActionEvaluator, world: World
) -> None:
    world.apply(Delta(remove=facts("(robot_at robot_1 kitchen)"), add=facts("(robot_at robot_1 laundry)")))
    world.apply(Delta(remove=facts("(on plate_1 table_1)"), add=facts("(inside plate_1 washer_1)")))
    outcome = evaluator.check(act("(run_washer robot_1 washer_1 laundry)"), world)
    # sock_1 was clean and already wet: nothing to change there; jeans_1 is in washer_2;
    # the dirty plate is inside too, but the effect is for clothes only
    assert outcome.delta == Delta(remove=facts("(dirty shirt_1)"), add=facts("(wet shirt_1)"))


def test_run_washer_needs_the_washer_closed(evaluator: ActionEvaluator, world: World) -> None:
    world.apply(Delta(remove=facts("(robot_at robot_1 kitchen)"), add=facts("(robot_at robot_1 laundry)")))
    outcome = evaluator.check(act("(run_washer robot_1 washer_2 laundry)"), world)
    assert outcome.reasons == (
        "(run_washer robot_1 washer_2 laundry): washer_2 is open — precondition (not (open washer_2)) is false",
    )


def test_run_dryer_dries_what_is_inside(evaluator: ActionEvaluator, world: World) -> None:
    world.apply(Delta(remove=facts("(robot_at robot_1 kitchen)"), add=facts("(robot_at robot_1 laundry)")))
    outcome = evaluator.check(act("(run_dryer robot_1 dryer_1 laundry)"), world)
    assert outcome.delta == Delta(remove=facts("(wet towel_1)"))  # sock_1 is wet too, but in washer_1


def test_wash_cleans_and_empties_a_filled_dish(evaluator: ActionEvaluator, world: World) -> None:
    outcome = evaluator.check(act("(wash robot_1 cup_1 sink_1 faucet_1 kitchen)"), world)  # a cup is a dish
    assert outcome.delta == Delta(remove=facts("(dirty cup_1)", "(filled cup_1 milk)"))


def test_fill_needs_a_clean_empty_cup(evaluator: ActionEvaluator, world: World) -> None:
    fill = act("(fill robot_1 cup_1 sink_1 faucet_1 kitchen)")
    assert evaluator.check(fill, world).reasons == (
        f"{fill}: cup_1 is dirty — precondition (not (dirty cup_1)) is false",
        f"{fill}: cup_1 is filled with milk — precondition (forall (?l - liquid) (not (filled cup_1 ?l))) is false",
    )
    evaluator.execute(act("(wash robot_1 cup_1 sink_1 faucet_1 kitchen)"), world)
    assert evaluator.execute(fill, world).delta == Delta(add=facts("(filled cup_1 water)"))
    assert not evaluator.check(fill, world).applicable


def test_pour_out_needs_something_in_the_cup(evaluator: ActionEvaluator, world: World) -> None:
    pour = act("(pour_out robot_1 cup_1 sink_1 kitchen)")
    assert evaluator.check(pour, world).delta == Delta(remove=facts("(filled cup_1 milk)"))  # already dirty
    evaluator.execute(act("(wash robot_1 cup_1 sink_1 faucet_1 kitchen)"), world)
    assert evaluator.check(pour, world).reasons == (
        f"{pour}: there is no liquid ?l such that (filled cup_1 ?l) — "
        "precondition (exists (?l - liquid) (filled cup_1 ?l)) is false",
    )
    evaluator.execute(act("(fill robot_1 cup_1 sink_1 faucet_1 kitchen)"), world)
    assert evaluator.check(pour, world).delta == Delta(remove=facts("(filled cup_1 water)"), add=facts("(dirty cup_1)"))


def test_check_does_not_change_the_world(evaluator: ActionEvaluator, world: World) -> None:
    before = world.facts
    assert evaluator.check(act("(move robot_1 kitchen hall)"), world).applicable
    assert world.facts == before


def _with_actions(domain: Domain, *schemas: ActionSchema) -> Domain:
    return dataclasses.replace(domain, actions=MappingProxyType({**domain.actions, **{s.name: s for s in schemas}}))


C = (Parameter("c", "container"),)
OPEN = Atom("open", ("?c",))


def test_an_atom_deleted_and_added_ends_up_true(household: Domain, world: World) -> None:
    reopen = ActionSchema(name="reopen", parameters=C, effects=(Effect(OPEN, False), Effect(OPEN, True)))
    evaluator = ActionEvaluator(_with_actions(household, reopen))
    assert evaluator.check(act("(reopen washer_1)"), world).delta == Delta(add=facts("(open washer_1)"))
    assert evaluator.check(act("(reopen washer_2)"), world).delta.is_empty  # already open: no change


def test_effect_conditions_are_read_before_the_action(household: Domain, world: World) -> None:
    toggle = ActionSchema(
        name="toggle",
        parameters=C,
        effects=(Effect(OPEN, False, condition=OPEN), Effect(OPEN, True, condition=Not(OPEN))),
    )
    wet_if_open = Effect(Atom("wet", ("sock_1",)), False, condition=OPEN)
    open_and_dry = ActionSchema(name="open_and_dry", parameters=C, effects=(Effect(OPEN, True), wet_if_open))
    evaluator = ActionEvaluator(_with_actions(household, toggle, open_and_dry))
    assert evaluator.check(act("(toggle washer_1)"), world).delta == Delta(add=facts("(open washer_1)"))
    assert evaluator.check(act("(toggle washer_2)"), world).delta == Delta(remove=facts("(open washer_2)"))
    # washer_1 was closed before, so the sock stays wet although the washer is open after
    assert evaluator.check(act("(open_and_dry washer_1)"), world).delta == Delta(add=facts("(open washer_1)"))


def test_nullary_and_ternary_predicates(domains: DomainRegistry) -> None:
    workshop = domains.get("workshop")
    parts = [Entity(n, "part") for n in ("a", "b", "c")]
    world = World(
        workshop, [*parts, Entity("s1", "station")], facts("(at a s1)", "(at b s1)", "(ready a)", "(ready b)")
    )
    evaluator = ActionEvaluator(workshop)
    join = act("(join a b s1)")
    assert evaluator.check(join, world).reasons == (f"{join}: the power is not on — precondition (power_on) is false",)
    switch = act("(switch)")
    assert switch == GroundAction("switch") and str(switch) == "(switch)"
    assert evaluator.execute(switch, world).delta == Delta(add=facts("(power_on)"))
    assert evaluator.execute(join, world).delta == Delta(
        remove=facts("(ready a)", "(ready b)"), add=facts("(joined a b s1)")
    )
    # a repeated variable: the facts about s1 offer (joined a b s1), which does not match
    twice = Quantified(False, (Parameter("p", "part"),), atom("(joined ?p ?p s1)"))
    assert not evaluator.evaluate(twice, world)
    world.apply(Delta(add=facts("(joined c c s1)")))
    assert evaluator.evaluate(twice, world)


# -- reasons --------------------------------------------------------------------------------


def test_a_false_precondition_is_named_in_english(evaluator: ActionEvaluator, world: World) -> None:
    outcome = evaluator.check(act("(move robot_1 hall kitchen)"), world)
    assert not outcome.applicable and outcome.delta.is_empty
    assert outcome.reasons == (
        "(move robot_1 hall kitchen): robot_1 is not in hall — precondition (robot_at robot_1 hall) is false",
    )


def test_every_false_conjunct_is_named(evaluator: ActionEvaluator, world: World) -> None:
    outcome = evaluator.check(act("(move robot_1 laundry kitchen)"), world)
    assert outcome.reasons == (
        "(move robot_1 laundry kitchen): robot_1 is not in laundry — precondition (robot_at robot_1 laundry) is false",
        "(move robot_1 laundry kitchen): it is not the case that laundry connects to kitchen"
        " — precondition (connected laundry kitchen) is false",
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("(fly robot_1 hall)", "the domain has no action fly; it has move, pick,"),
        ("(move robot_1 hall)", "move takes 3 arguments (?a - robot ?from - room ?to - room), not 2"),
        ("(answer_phone robot_1 phone_1 alex)", "answer_phone takes 2 arguments (?a - robot ?ph - phone), not 3"),
        ("(move robot_1 kitchen attic)", "there is no object attic"),
        ("(move robot_1 kitchen cup_1)", "cup_1 is a cup, but ?to must be a room"),
        ("(pick robot_1 alex table_1 kitchen)", "alex is a person, but ?i must be an item"),
    ],
)
def test_bad_content_is_a_reason_not_an_exception(
    evaluator: ActionEvaluator, world: World, text: str, reason: str
) -> None:
    outcome = evaluator.check(act(text), world)
    assert not outcome.applicable and outcome.delta.is_empty
    assert len(outcome.reasons) == 1 and outcome.reasons[0].startswith(f"{text}: {reason}")


def test_a_world_of_another_domain_is_misuse(evaluator: ActionEvaluator, domains: DomainRegistry) -> None:
    other = World(domains.get("example_home"), [Entity("hall", "room")], [])
    with pytest.raises(ValueError, match="a world of domain example_home given to an evaluator of household"):
        evaluator.check(act("(move robot_1 hall hall)"), other)


def test_every_bad_argument_is_named(evaluator: ActionEvaluator, world: World) -> None:
    reasons = evaluator.check(act("(move alex attic hall)"), world).reasons
    assert reasons == (
        "(move alex attic hall): alex is a person, but ?a must be a robot",
        "(move alex attic hall): there is no object attic",
    )


# -- plans ----------------------------------------------------------------------------------


def test_validate_runs_on_a_copy(evaluator: ActionEvaluator, world: World) -> None:
    before = world.facts
    plan = [act("(move robot_1 kitchen hall)"), act("(give robot_1 cup_1 alex hall)")]
    outcome = evaluator.validate(plan, world)
    assert outcome.executable and outcome.failed_at is None and len(outcome.steps) == 2
    assert outcome.goal_reached is None and outcome.reasons == ()
    assert world.facts == before
    assert outcome.world.holds(Fact.parse("(in_hand cup_1 alex)"))
    assert outcome.world.facts == before - facts("(robot_at robot_1 kitchen)", "(held cup_1 robot_1)") | facts(
        "(robot_at robot_1 hall)", "(in_hand cup_1 alex)", "(hand_empty robot_1)"
    )


def test_validate_stops_at_the_first_failing_step(evaluator: ActionEvaluator, world: World) -> None:
    plan = [act("(move robot_1 kitchen hall)"), act("(move robot_1 kitchen hall)"), act("(move robot_1 hall kitchen)")]
    outcome = evaluator.validate(plan, world, goal=atom("(robot_at robot_1 kitchen)"))
    assert not outcome.executable and outcome.failed_at == 1 and len(outcome.steps) == 2
    assert outcome.goal_reached is False
    assert outcome.reasons == (
        "(move robot_1 kitchen hall): robot_1 is not in kitchen — precondition (robot_at robot_1 kitchen) is false",
    )
    assert outcome.world.holds(Fact.parse("(robot_at robot_1 hall)"))  # where the plan stopped


def test_validate_checks_the_goal(evaluator: ActionEvaluator, world: World) -> None:
    goal = And((atom("(robot_at robot_1 hall)"), Not(atom("(held cup_1 robot_1)"))))
    reached = evaluator.validate(
        [act("(move robot_1 kitchen hall)"), act("(give robot_1 cup_1 alex hall)")], world, goal
    )
    assert reached.executable and reached.goal_reached is True and reached.goal_reasons == ()
    missed = evaluator.validate([act("(move robot_1 kitchen hall)")], world, goal)
    assert missed.executable and missed.goal_reached is False
    assert missed.goal_reasons == ("goal: cup_1 is held by robot_1 — (not (held cup_1 robot_1)) is false",)
    assert evaluator.validate([], world, Truth(True)).goal_reached is True


# -- the world ------------------------------------------------------------------------------


def test_world_includes_the_domain_constants(world: World) -> None:
    assert world.type_of("robot_1") == "robot" and world.type_of("water") == "liquid"
    assert world.objects_of("liquid") == ("coffee", "juice", "milk", "water")
    assert world.entity("cup_1") == Entity("cup_1", "cup") and world.entity("attic") is None
    assert world.type_of("attic") is None and world.objects_of("no_such_type") == ()


def test_objects_of_follows_subtypes_and_new_entities(world: World) -> None:
    assert world.objects_of("dish") == ("cup_1", "plate_1")
    assert world.objects_of("container") == ("dryer_1", "washer_1", "washer_2")
    world.add_entities([Entity("mug_1", "cup")])
    assert world.objects_of("dish") == ("cup_1", "mug_1", "plate_1")
    world.apply(Delta(add=facts("(on bowl_1 table_1)"), new_entities=(Entity("bowl_1", "dish"),)))
    assert world.objects_of("dish") == ("bowl_1", "cup_1", "mug_1", "plate_1")


def test_apply_rejects_impossible_changes_whole(world: World) -> None:
    before = world.facts
    with pytest.raises(WorldError, match=r"cannot remove \(open washer_1\): it does not hold"):
        world.apply(Delta(remove=facts("(open washer_2)", "(open washer_1)")))
    with pytest.raises(ValueError, match=r"cannot add \(open washer_2\): it already holds"):
        world.apply(Delta(add=facts("(open washer_1)", "(open washer_2)")))
    with pytest.raises(WorldError, match="names attic, which is not an object"):
        world.apply(Delta(add=facts("(connected hall attic)")))
    with pytest.raises(WorldError, match="cup_1 is already a cup; it cannot also be a room"):
        world.apply(Delta(new_entities=(Entity("cup_1", "room"),)))
    with pytest.raises(WorldError, match="which domain household lacks"):
        world.add_entities([Entity("spaceship", "vehicle")])
    assert world.facts == before and world.entity("spaceship") is None


def test_indexes_follow_changes(world: World) -> None:
    assert world.facts_about("sock_1") == facts("(inside sock_1 washer_1)", "(wet sock_1)")
    assert world.facts_of("open") == facts("(open washer_2)")
    world.apply(Delta(remove=facts("(wet sock_1)", "(open washer_2)"), add=facts("(open washer_1)")))
    assert world.facts_about("sock_1") == facts("(inside sock_1 washer_1)")
    assert world.facts_of("open") == facts("(open washer_1)")
    assert world.facts_about("washer_2") == facts("(in_room washer_2 laundry)", "(inside jeans_1 washer_2)")
    assert world.facts_about("nobody") == frozenset() and world.facts_of("wet") == facts("(wet towel_1)")


def test_copies_are_independent(world: World) -> None:
    world.facts_about("hall")  # build an index, so it is copied too
    twin = world.copy()
    twin.apply(Delta(remove=facts("(person_in alex hall)"), add=facts("(person_in alex kitchen)")))
    twin.add_entities([Entity("mug_1", "cup")])
    assert world.holds(Fact.parse("(person_in alex hall)")) and not twin.holds(Fact.parse("(person_in alex hall)"))
    assert Fact.parse("(person_in alex hall)") in world.facts_about("hall")
    assert Fact.parse("(person_in alex hall)") not in twin.facts_about("hall")
    assert world.entity("mug_1") is None and "mug_1" in twin.objects_of("cup")


def test_a_fact_about_an_unknown_object_is_refused(household: Domain) -> None:
    with pytest.raises(WorldError, match="names attic"):
        World(household, ENTITIES, [Fact.parse("(connected hall attic)")])


# -- ground actions -------------------------------------------------------------------------


def test_ground_action_text() -> None:
    action = GroundAction.parse("  (Move robot_1 hall  kitchen) ")
    assert action == GroundAction("move", ("robot_1", "hall", "kitchen"))
    assert str(action) == "(move robot_1 hall kitchen)" and GroundAction.parse(str(action)) == action
    assert GroundAction.parse("move robot_1 hall kitchen") == action
    assert str(GroundAction("answer_phone", ["robot_1", "phone_1"])) == "(answer_phone robot_1 phone_1)"  # type: ignore[arg-type]
    for bad in ("", "()", "(move robot_1", "(move (robot_1))"):
        with pytest.raises(InvalidValue):
            GroundAction.parse(bad)


# -- cross-check against unified-planning ---------------------------------------------------

WORLDS_PER_DOMAIN, WALKS_PER_WORLD = 8, 10


def _goal(before: World, after: World, possible: set[Fact]) -> list[tuple[Fact, bool]]:
    """Our final state as a goal: every final fact holds, and every other atom that held at the start
    or that an effect of the plan could have set does not. Since a plan changes nothing else, the goal
    is reached iff unified-planning ends in exactly our final state."""
    final = after.facts
    return [(f, True) for f in final] + [(f, False) for f in (possible | before.facts) - final]


def _mismatch(where: str, plan: list[GroundAction], ours: PlanRun, theirs: UpVerdict) -> str:
    steps = " ".join(map(str, plan))
    return f"{where}: {steps}: ours executable={ours.executable} failed_at={ours.failed_at} {ours.reasons}; UP {theirs}"


@pytest.mark.slow
def test_verdicts_and_final_states_agree_with_unified_planning() -> None:
    """Random worlds in both domains, random walks of applicable actions (valid plans) and one mutation
    of each (mostly invalid): unified-planning's ``sequential_plan_validator`` must give the same
    verdict and the same failing step for each, and, for the valid ones, end in the same state.

    The goal given to unified-planning encodes our final state (see :func:`_goal`), so "valid" from it
    means "executable and ending where our evaluator ended"; an invalid plan gets an empty goal so its
    verdict is about executability alone.
    """
    registry = DomainRegistry()
    mismatches: list[str] = []
    verdicts: Counter[str] = Counter()
    kinds: dict[str, Counter[str]] = {name: Counter() for name in BUILDERS}
    for name, build in BUILDERS.items():
        domain = registry.get(name)
        evaluator = ActionEvaluator(domain)
        for seed in range(WORLDS_PER_DOMAIN):
            random_world = build(domain, seed)
            world, oracle, rng = random_world.world(), UpOracle(random_world), random.Random(seed)
            ground = groundings(domain, world)
            for _ in range(WALKS_PER_WORLD):
                walk = random_walk(evaluator, world, ground, rng, rng.randint(1, 12), kinds[name])
                for plan in (walk, mutate(walk, world, ground, rng)):
                    ours = evaluator.validate(plan, world)
                    goal = _goal(world, ours.world, touchable(evaluator, world, plan)) if ours.executable else []
                    theirs = oracle.verdict(plan, goal)
                    verdicts["valid" if ours.executable else "invalid"] += 1
                    if (theirs.valid, theirs.failed_at) != (ours.executable, ours.failed_at):
                        mismatches.append(_mismatch(f"{name} seed {seed}", plan, ours, theirs))
            assert world.facts == frozenset(random_world.facts)  # validate and the walks ran on copies
    assert not mismatches, "\n".join(mismatches[:5])
    assert verdicts.total() >= 200 and min(verdicts.values()) >= 60, verdicts
    for name, seen in kinds.items():  # every action, conditional and quantified ones included, was exercised
        assert set(seen) == set(registry.get(name).actions), (name, seen)


def test_ground_action_from_unified_planning(household: Domain) -> None:
    random_world = BUILDERS["household"](household, 0)
    oracle = UpOracle(random_world)
    step = GroundAction("move", ("robot_1", "room_0", "room_1"))
    assert GroundAction.from_up(oracle.instance(step)) == step
