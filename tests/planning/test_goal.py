"""Goal checking: the s-expression reader, every kind of issue a model can act on, quantified
goals over types, and agreement with the goals the simulator builds (text and truth value)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Mapping

import pytest

from kg_memory import And, Atom, Delta, Domain, DomainRegistry, Entity, Equals, Fact, Not, Or, Parameter, Quantified
from kg_memory.formula import Truth
from planning import ActionEvaluator, GoalCheck, GoalSyntaxError, PlanningError, World, check_goal, parse_goal
from planning.deadline import CLOCK_EVERY, BindingWatch, EvaluationDeadlinePassed
from planning.goal_checker import MAX_GOAL_BINDINGS, binding_checks
from planning.goal_reader import MAX_GOAL_DEPTH
from sim.household import HomeSpec, generate_home
from sim.simulator import Simulator

ENTITIES = {
    e.name: e
    for e in (
        Entity("kitchen", "room", "kitchen"),
        Entity("hall", "room", "hall"),
        Entity("table_1", "surface", "kitchen table"),
        Entity("fridge_1", "container", "fridge"),
        Entity("mug_1", "dish", "blue mug"),
        Entity("cup_1", "cup", "red cup"),
        Entity("cup_2", "cup", "green cup"),
        Entity("cup_10", "cup", "tall cup"),
        Entity("lamp_1", "light", "ceiling lamp"),
        Entity("alex", "person", "Alex"),
    )
}


@pytest.fixture(scope="module")
def household() -> Domain:
    return DomainRegistry().get("household")


def issues(text: str, domain: Domain) -> tuple[str, ...]:
    result = check_goal(text, domain, ENTITIES)
    assert not result.ok and result.goal is None, result
    return result.issues


def ok(text: str, domain: Domain) -> GoalCheck:
    result = check_goal(text, domain, ENTITIES)
    assert result.ok and result.goal is not None, result.issues
    return result


# -- issues ---------------------------------------------------------------------------------


def test_an_unknown_predicate_lists_the_predicates_closest_first(household: Domain) -> None:
    (issue,) = issues("(holding robot_1 mug_1)", household)
    assert issue.startswith("unknown predicate 'holding' in (holding robot_1 mug_1); use one of: held, ")
    listed = issue.split("use one of: ")[1].split(", ")
    assert sorted(listed) == sorted(household.predicates)


def test_an_unknown_entity_suggests_close_names_of_the_type_it_must_have(household: Domain) -> None:
    assert issues("(on cup_9 table_1)", household) == (
        "unknown entity 'cup_9' in (on cup_9 table_1); did you mean cup_1, cup_2, cup_10?",
    )
    # table_1 is close to table_2 but a surface, and on's first parameter is an item
    assert issues("(on table_2 table_1)", household) == (
        "unknown entity 'table_2' in (on table_2 table_1); no known item has a similar name",
    )


def test_a_wrong_number_of_arguments_shows_the_signature(household: Domain) -> None:
    assert issues("(on mug_1)", household) == ("(on mug_1) has 1 argument; on takes 2: (on ?i - item ?r - receptacle)",)
    assert issues("(dirty mug_1 cup_1)", household) == (
        "(dirty mug_1 cup_1) has 2 arguments; dirty takes 1: (dirty ?i - item)",
    )


def test_a_type_mismatch_names_the_argument_and_the_parameter(household: Domain) -> None:
    assert issues("(on kitchen table_1)", household) == (
        "in (on kitchen table_1), kitchen is a room but on's first parameter ?i must be an item",
    )
    assert issues("(exists (?x - room) (on mug_1 ?x))", household) == (
        "in (on mug_1 ?x), ?x is a room but on's second parameter ?r must be a receptacle",
    )


def test_subtypes_fit_their_ancestors_parameters(household: Domain) -> None:
    ok("(and (on cup_1 table_1) (inside mug_1 fridge_1) (dirty cup_1))", household)  # cup < dish < item


def test_an_unknown_type_lists_the_types_closest_first(household: Domain) -> None:
    (issue,) = issues("(forall (?d - dishes) (not (dirty ?d)))", household)
    assert issue.startswith("unknown type 'dishes' in (forall (?d - dishes) ...); use one of: dish, ")


def test_an_unbound_variable_is_named(household: Domain) -> None:
    assert issues("(on ?x table_1)", household) == (
        "unbound variable ?x in (on ?x table_1); declare it with forall or exists",
    )
    # bound by an outer quantifier is bound; a sibling's variable is not
    ok("(forall (?x - cup) (exists (?p - person) (in_hand ?x ?p)))", household)
    assert issues("(and (exists (?x - cup) (dirty ?x)) (dirty ?x))", household) == (
        "unbound variable ?x in (dirty ?x); declare it with forall or exists",
    )


SYNTAX = [
    ("(on mug_1 table_1", "unbalanced parentheses: 1 '(' never closed in (on mug_1 table_1"),
    ("(on mug_1 table_1))", "unbalanced parentheses: an extra ')' after (on mug_1 table_1)"),
    ("The goal is (on mug_1 table_1)", "expected a formula in parentheses, got 'The goal is (on mug_1 table_1)'"),
    ("```pddl\n(on mug_1 table_1)\n```\nThis puts the mug away.", "unexpected text after the goal: ```"),
    ("(on mug_1 table_1) (dirty cup_1)", "unexpected text after the goal: (dirty cup_1); write one formula"),
    ("()", "expected a formula, got ()"),
    ("((on mug_1 table_1))", "expected a predicate or connective, got (on mug_1 table_1)"),
    ("(not (dirty cup_1) (dirty mug_1))", "not takes 1 argument, got 2 in (not (dirty cup_1) (dirty mug_1))"),
    ("(and cup_1)", "expected a formula in parentheses, got cup_1"),
    ("(on (mug_1) table_1)", "expected an entity or ?variable, got (mug_1) in (on (mug_1) table_1)"),
    ("(forall ?x (dirty ?x))", "forall needs a variable list like (?x - type), got ?x"),
    ("(forall (?x -) (dirty ?x))", "expected ?variables - type in (forall (?x -) (dirty ?x))"),
    ("(exists (x - cup) (dirty x))", "expected a variable like ?x, got x in (exists (x - cup) (dirty x))"),
    ("(forall () (dirty cup_1))", "forall declares no variables"),
    ("(when (open fridge_1) (dirty cup_1))", "when is not supported in goals"),
    ("(?x cup_1)", "expected a formula, got (?x cup_1): it starts with ?x, not a predicate"),
    ("(:goal (dirty cup_1) (dirty mug_1))", "(:goal ...) holds one formula"),
]


@pytest.mark.parametrize(("text", "problem"), SYNTAX, ids=[s[0][:30] for s in SYNTAX])
def test_syntax_errors_are_one_issue_and_raise_from_parse_goal(household: Domain, text: str, problem: str) -> None:
    (issue,) = issues(text, household)
    assert issue.startswith(problem), issue
    with pytest.raises(GoalSyntaxError) as raised:
        parse_goal(text)
    assert raised.value.text == text and raised.value.problem == issue
    assert isinstance(raised.value, PlanningError)


@pytest.mark.parametrize("text", ["", "  \n ", "```pddl\n```", "(:goal)", "; nothing but a comment"])
def test_an_empty_goal_is_an_issue(household: Domain, text: str) -> None:
    assert issues(text, household) == ("empty goal",)


def test_every_issue_is_reported_in_order(household: Domain) -> None:
    text = "(and (on cup_9 kitchen) (holding mug_1) (forall (?d - dishes) (dirty ?d)) (dirty ?y) (on mug_1))"
    found = issues(text, household)
    assert [i.split(" ")[0:2] for i in found] == [
        ["unknown", "entity"],
        ["in", "(on"],  # kitchen is not a receptacle
        ["unknown", "predicate"],
        ["unknown", "type"],
        ["unbound", "variable"],
        ["(on", "mug_1)"],
    ]
    assert found[1] == "in (on cup_9 kitchen), kitchen is a room but on's second parameter ?r must be a receptacle"


def test_one_mistake_repeated_is_one_issue(household: Domain) -> None:
    assert len(issues("(and (dirty cup_9) (dirty cup_9))", household)) == 1


# -- what parses ----------------------------------------------------------------------------


def test_quantified_goals_over_types_parse_and_type_check(household: Domain) -> None:
    body = Or((Equals("?x", "?y"), Not(Atom("in_hand", ("?x", "?z")))))
    cups = (Parameter("x", "cup"), Parameter("y", "cup"))
    goal = ok("(forall (?x ?y - cup ?z - person) (or (= ?x ?y) (not (in_hand ?x ?z))))", household).goal
    assert goal == Quantified(True, (*cups, Parameter("z", "person")), body)
    # a variable without a type is an object, as in PDDL
    assert parse_goal("(forall (?x ?y - cup ?z) (or (= ?x ?y) (not (in_hand ?x ?z))))") == Quantified(
        True, (*cups, Parameter("z", "object")), body
    )
    # ?z is any object, but in_hand's second parameter wants a person
    assert issues("(forall (?x - cup ?z) (in_hand ?x ?z))", household) == (
        "in (in_hand ?x ?z), ?z is an object but in_hand's second parameter ?p must be a person",
    )


def test_constants_need_not_be_among_the_entities(household: Domain) -> None:
    goal = ok("(and (held cup_1 robot_1) (filled cup_1 water))", household).goal
    assert goal == And((Atom("held", ("cup_1", "robot_1")), Atom("filled", ("cup_1", "water"))))
    assert "robot_1" not in ENTITIES and "water" not in ENTITIES


def test_fences_goal_wrappers_case_comments_and_newlines_are_tolerated(household: Domain) -> None:
    text = "```pddl\n(:GOAL\n  (AND (On Mug_1 TABLE_1) ; the mug\n       (not (dirty cup_1))))\n```"
    expected = And((Atom("on", ("mug_1", "table_1")), Not(Atom("dirty", ("cup_1",)))))
    assert ok(text, household).goal == expected
    assert ok("```(on mug_1 table_1)```", household).goal == Atom("on", ("mug_1", "table_1"))


def test_imply_equality_and_empty_junctions(household: Domain) -> None:
    goal = ok("(imply (dirty mug_1) (on mug_1 table_1))", household).goal
    assert goal == Or((Not(Atom("dirty", ("mug_1",))), Atom("on", ("mug_1", "table_1"))))
    assert parse_goal("(and)") == Truth(True) and parse_goal("(or)") == Truth(False)
    assert parse_goal("(not (= cup_1 cup_2))") == Not(Equals("cup_1", "cup_2"))
    assert issues("(= cup_1 cup_9)", household)[0].startswith("unknown entity 'cup_9' in (= cup_1 cup_9)")


def test_a_goal_check_has_a_goal_or_issues() -> None:
    with pytest.raises(PlanningError):
        GoalCheck(None, ())
    with pytest.raises(PlanningError):
        GoalCheck(Truth(True), ("an issue",))
    assert GoalCheck(None, ["a list"]).issues == ("a list",)  # type: ignore[arg-type]


# -- against the simulator ------------------------------------------------------------------


@pytest.fixture(scope="module")
def simulators() -> list[Simulator]:
    return [Simulator(generate_home(HomeSpec(seed=seed, rooms=6, items=24, people=3)), seed=seed) for seed in range(5)]


def test_simulator_goals_round_trip(simulators: list[Simulator]) -> None:
    kinds = set()
    for sim in simulators:
        for _ in range(10):
            task = sim.tasks.propose(sim.world)
            result = check_goal(str(task.goal), sim.domain, sim.world.entities)
            assert result.ok, (task, result.issues)
            assert str(result.goal) == str(task.goal) and result.goal == task.goal
            kinds.add(task.kind)
            sim.next_event()
    assert {"lights_off", "water_for_person"} & kinds, kinds  # quantified goals were among them


def test_parsed_goals_evaluate_like_the_simulators(simulators: list[Simulator]) -> None:
    evaluator = ActionEvaluator(simulators[0].domain)
    for sim in simulators:
        for _ in range(10):
            task = sim.tasks.propose(sim.world)
            parsed = parse_goal(f"```pddl\n(:goal {task.goal})\n```".upper())
            assert evaluator.evaluate(parsed, sim.world) == evaluator.evaluate(task.goal, sim.world)
            sim.next_event()


def test_a_parsed_household_goal_evaluates_against_a_world(household: Domain) -> None:
    world = World(household, ENTITIES.values(), [Fact("switched_on", ("lamp_1",)), Fact("in_hand", ("cup_1", "alex"))])
    evaluator = ActionEvaluator(household)
    lights_off = parse_goal("(forall (?x - light) (not (switched_on ?x)))")
    water = parse_goal("(exists (?c - cup) (and (filled ?c water) (in_hand ?c alex)))")
    assert not evaluator.evaluate(lights_off, world) and not evaluator.evaluate(water, world)
    world.apply(Delta(remove={Fact("switched_on", ("lamp_1",))}, add={Fact("filled", ("cup_1", "water"))}))
    assert evaluator.evaluate(lights_off, world) and evaluator.evaluate(water, world)


# -- nesting --------------------------------------------------------------------------------

ATOM = "(on mug_1 table_1)"
NESTED: dict[str, Callable[[int], str]] = {  # a goal whose formulas nest ``depth`` deep
    "not": lambda depth: "(not " * (depth - 1) + ATOM + ")" * (depth - 1),
    "and": lambda depth: "(and (dirty cup_1) " * (depth - 1) + ATOM + ")" * (depth - 1),
    # (imply a b) reads as (or (not a) b): the last premise is two below its implication
    "imply": lambda depth: "(imply (dirty cup_1) " * (depth - 2) + ATOM + ")" * (depth - 2),
    # over the one light: nested over the three cups, it would take more tests than a goal may
    "exists": lambda depth: "(exists (?l - light) " * (depth - 1) + "(switched_on ?l)" + ")" * (depth - 1),
    "wrapped": lambda depth: "(:goal " + "(or " * (depth - 1) + ATOM + ")" * depth,
}
TOO_DEEP = f"the goal is nested too deeply: at most {MAX_GOAL_DEPTH} formulas may nest inside one another"


def _depth(formula: object) -> int:
    if isinstance(formula, Not):
        return 1 + _depth(formula.arg)
    if isinstance(formula, And | Or):
        return 1 + max(map(_depth, formula.args))
    if isinstance(formula, Quantified):
        return 1 + _depth(formula.body)
    return 1


def _frames() -> int:
    frame, count = sys._getframe(), 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


@pytest.mark.parametrize("shape", NESTED)
def test_a_goal_nested_to_the_limit_reads_prints_checks_and_evaluates_with_room_to_spare(
    household: Domain, shape: str
) -> None:
    text = NESTED[shape](MAX_GOAL_DEPTH)
    facts = [Fact("on", ("mug_1", "table_1")), Fact("dirty", ("cup_1",))]  # true at the first try, so quick
    world = World(household, ENTITIES.values(), facts)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_frames() + limit // 2)  # whoever hands it on may already be deep in a stack
    try:
        goal = ok(text, household).goal
        assert goal is not None and _depth(goal) == MAX_GOAL_DEPTH
        assert parse_goal(str(goal)) == goal
        ActionEvaluator(household).evaluate(goal, world)
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("shape", NESTED)
def test_a_goal_nested_past_the_limit_is_one_issue_naming_it(household: Domain, shape: str) -> None:
    assert issues(NESTED[shape](MAX_GOAL_DEPTH + 1), household) == (TOO_DEEP,)


def test_an_implication_counts_twice_as_its_premise_is_read_under_a_not(household: Domain) -> None:
    def premises(count: int) -> str:
        return "(imply " * count + ATOM + " (dirty cup_1))" * count

    ok(premises(MAX_GOAL_DEPTH // 2 - 1), household)
    assert issues(premises(MAX_GOAL_DEPTH // 2), household) == (TOO_DEEP,)


@pytest.mark.parametrize(
    "text",
    [
        "(" * 350 + ")" * 350,
        "(not " * 400 + ATOM + ")" * 400,
        "(" * 5000 + ")" * 5000,
        "(" * 5000,  # never closed
        "(" * 5000 + ")" * 5001,  # an extra ')' after a deep form
        ATOM + " " + "(" * 5000 + ")" * 5000,  # a deep form after the goal
        "(not " + ATOM + " " + "(" * 5000 + ")" * 5000 + ")",  # a deep argument too many
    ],
    ids=["empty-lists", "nots", "deep-lists", "unclosed", "extra-close", "after-the-goal", "extra-argument"],
)
def test_text_nested_too_deeply_is_refused_before_anything_walks_it(household: Domain, text: str) -> None:
    assert issues(text, household) == (TOO_DEEP,)
    with pytest.raises(GoalSyntaxError) as raised:
        parse_goal(text)
    assert raised.value.problem == TOO_DEEP


# -- cost -----------------------------------------------------------------------------------


class _NoScan(Mapping[str, Entity]):
    """Entities that may be looked up by name but not listed: a valid goal must not scan them."""

    def __init__(self, entities: Mapping[str, Entity]) -> None:
        self._entities = entities

    def __getitem__(self, name: str) -> Entity:
        return self._entities[name]

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("the entities were scanned")

    def __len__(self) -> int:
        raise AssertionError("the entities were counted")


def test_checking_a_goal_without_quantifiers_does_not_scan_the_entities(household: Domain) -> None:
    text = "(and (filled cup_1 water) (in_hand cup_1 alex) (on mug_1 table_1))"
    assert check_goal(text, household, _NoScan(ENTITIES)).ok


class _Scans(dict[str, Entity]):
    """Entities that count how often they are listed."""

    scans = 0

    def __iter__(self) -> Iterator[str]:
        self.scans += 1
        return super().__iter__()

    def items(self) -> Iterator[tuple[str, Entity]]:  # type: ignore[override]
        self.scans += 1
        return iter(list(super().items()))


def test_a_quantified_goal_scans_the_entities_once_per_type_it_ranges_over(household: Domain) -> None:
    text = (
        "(and (exists (?c - cup) (and (filled ?c water) (in_hand ?c alex))) (forall (?c - cup) (not (dirty ?c)))"
        " (exists (?l - light) (switched_on ?l)))"
    )
    entities = _Scans(ENTITIES)
    assert check_goal(text, household, entities).ok
    assert entities.scans == 2


# -- how many bindings ----------------------------------------------------------------------

OBJECTS = len(ENTITIES) + len(DomainRegistry().get("household").constants)  # what ``- object`` ranges over


def _cups(count: int) -> dict[str, Entity]:
    return {f"cup_{i}": Entity(f"cup_{i}", "cup", f"cup {i}") for i in range(count)}


def _checks(text: str, domain: Domain, entities: Mapping[str, Entity] = ENTITIES) -> int:
    counts = {t: sum(1 for e in entities.values() if domain.is_subtype(e.type, t)) for t in domain.types}
    constants = {t: sum(1 for c in domain.constants.values() if domain.is_subtype(c, t)) for t in domain.types}
    return binding_checks(parse_goal(text), lambda t: counts[t] + constants[t])


def _forall(count: int, body: str = "(= ?v0 ?v0)", type_: str = "object") -> str:
    variables = " ".join(f"?v{i}" for i in range(count))
    return f"(forall ({variables} - {type_}) {body})"


def _nested(count: int, body: str = "(= ?v0 ?v0)", word: str = "forall") -> str:
    return "".join(f"({word} (?v{i} - object) " for i in range(count)) + body + ")" * count


def _too_many(checks: int) -> str:
    return (
        f"the goal's quantifiers range over too many objects: checking it against the memory takes {checks:,} "
        "tests (the bindings of its variables to objects, times the conditions under them), more than the limit "
        f"of {MAX_GOAL_BINDINGS:,}; name the objects, or quantify over fewer variables"
    )


def test_the_bindings_multiply_along_a_nesting_and_add_up_over_siblings(household: Domain) -> None:
    # three cups, one light; the domain's five constants are objects too
    assert _checks("(dirty cup_1)", household) == 1
    assert _checks("(exists (?c - cup) (dirty ?c))", household) == 3
    assert _checks("(exists (?d - dish) (dirty ?d))", household) == 4  # subtypes count: mug_1 and the cups
    assert _checks("(forall (?c ?d - cup) (dirty ?c))", household) == 9
    assert _checks("(forall (?c - cup) (exists (?l - light) (switched_on ?l)))", household) == 3
    siblings = "(and (dirty cup_1) (forall (?c - cup) (or (dirty ?c) (not (dirty ?c)))) (exists (?x) (= ?x ?x)))"
    assert _checks(siblings, household) == 1 + 3 * 2 + OBJECTS
    assert _checks(_nested(3), household) == _checks(_forall(3), household) == OBJECTS**3
    assert _checks(_nested(3, word="exists"), household) == OBJECTS**3


@pytest.mark.parametrize("word", ["forall", "exists"])
@pytest.mark.parametrize("shape", ["nested", "one-list"])
def test_eight_variables_over_a_small_home_are_one_issue_naming_the_count_and_the_limit(
    household: Domain, word: str, shape: str
) -> None:
    body = "(or (= ?v0 ?v1) (not (= ?v0 ?v1)))"
    text = _nested(8, body, word) if shape == "nested" else _forall(8, body).replace("forall", word)
    assert issues(text, household) == (_too_many(2 * OBJECTS**8),)


def test_a_count_past_any_use_is_said_as_more_than_a_cap(household: Domain) -> None:
    nested = _nested(MAX_GOAL_DEPTH - 1, word="exists")
    (issue,) = issues(nested, household)
    assert issue.startswith("the goal's quantifiers range over too many objects: checking it against the memory ")
    assert f"takes more than {MAX_GOAL_BINDINGS**2:,} tests" in issue
    assert issues(_forall(5_000), household) == (issue,)  # a long variable list is counted, not multiplied out


def test_the_bound_is_checked_only_once_the_types_are_known(household: Domain) -> None:
    assert issues(_forall(8, type_="gadget"), household)[0].startswith("unknown type 'gadget'")


def test_a_goal_at_the_bound_is_accepted_and_evaluated(household: Domain) -> None:
    cups = _cups(100)  # 100 ** 3 bindings, one test each: exactly the bound
    world = World(household, cups.values(), [Fact("dirty", ("cup_0",))])
    goal = check_goal("(exists (?a ?b ?c - cup) (and (dirty ?a) (= ?a ?b)))", household, cups).goal
    assert goal is None  # two tests per binding are twice too many
    text = "(exists (?a ?b ?c - cup) (dirty ?a))"
    assert _checks(text, household, cups) == MAX_GOAL_BINDINGS
    checked = check_goal(text, household, cups)
    assert checked.ok and checked.goal is not None
    assert ActionEvaluator(household).evaluate(checked.goal, world)
    assert not ActionEvaluator(household).evaluate(parse_goal("(forall (?a ?b - cup) (dirty ?a))"), world)
    over = _cups(101)
    assert check_goal(text, household, over).issues == (_too_many(101**3),)


# -- evaluating within a request's deadline -----------------------------------------------------


class _Clock:
    """A clock that reads ``start`` first and ``step`` more at each read after, counting its reads."""

    def __init__(self, start: float = 0.0, step: float = 0.0) -> None:
        self.start, self.step, self.reads = start, step, 0

    def __call__(self) -> float:
        read = self.start + self.step * self.reads
        self.reads += 1
        return read


EVERY_CUP_PAIR = "(forall (?a ?b - cup) (not (dirty ?a)))"  # 100 cups: 10,000 bindings, all tried


def test_an_evaluation_reads_the_clock_at_its_first_binding_and_then_once_every_so_many(household: Domain) -> None:
    world = World(household, _cups(100).values(), [])
    clock = _Clock()
    watch = BindingWatch(1.0, clock=clock)
    assert ActionEvaluator(household).evaluate(parse_goal(EVERY_CUP_PAIR), world, watch=watch)
    assert watch.tried == 100 * 100
    assert clock.reads == math.ceil(watch.tried / CLOCK_EVERY)  # at 0, CLOCK_EVERY, 2 * CLOCK_EVERY, ...


def test_an_evaluation_ends_at_the_first_clock_read_past_the_deadline(household: Domain) -> None:
    world = World(household, _cups(100).values(), [])
    watch = BindingWatch(2.0, clock=_Clock(step=1.0))  # reads 0, 1, 2: the third read ends it
    with pytest.raises(EvaluationDeadlinePassed) as raised:
        ActionEvaluator(household).evaluate(parse_goal(EVERY_CUP_PAIR), world, watch=watch)
    assert raised.value.deadline == 2.0 and raised.value.tried == 2 * CLOCK_EVERY
    assert str(raised.value).endswith(f"after {2 * CLOCK_EVERY:,} bindings")


def test_a_watch_reads_the_clock_at_least_once_every_binding() -> None:
    with pytest.raises(PlanningError, match="every 1 or more bindings, not 0"):
        BindingWatch(1.0, every=0)


def _crowded_table(household: Domain, *facts: str) -> World:
    """50 rooms, three cups and a table with 3,000 books on it."""
    books = [Entity(f"book_{i}", "book") for i in range(3_000)]
    rooms = [Entity(f"room_{i}", "room") for i in range(50)]
    entities = [*rooms, *books, *_cups(3).values(), Entity("table_1", "surface")]
    on_table = [Fact("on", (b.name, "table_1")) for b in books]
    return World(household, entities, [*on_table, *map(Fact.parse, facts)])


def test_an_exists_anchored_on_a_crowded_table_tries_no_more_bindings_than_the_bound_counts(
    household: Domain,
) -> None:
    world = _crowded_table(household)
    goal = parse_goal("(forall (?r - room) (not (exists (?c - cup) (on ?c table_1))))")
    assert binding_checks(goal, lambda t: len(world.objects_of(t))) == 50 * 3
    watch = BindingWatch(float("inf"))
    assert ActionEvaluator(household).evaluate(goal, world, watch=watch)
    assert watch.tried == 50 + 50 * 3  # each room, and each cup under it: not the table's 3,000 facts per room


def test_an_exists_reads_its_anchors_facts_when_they_are_fewer_than_its_objects(household: Domain) -> None:
    goal = parse_goal("(exists (?c - cup) (on ?c table_1))")
    crowded = _crowded_table(household, "(on cup_2 table_1)")
    assert ActionEvaluator(household).evaluate(goal, crowded)  # the cups tried one by one still find it
    sparse = World(household, [*_cups(3).values(), Entity("table_1", "surface")], [Fact.parse("(on cup_2 table_1)")])
    watch = BindingWatch(float("inf"))
    assert ActionEvaluator(household).evaluate(goal, sparse, watch=watch)
    assert watch.tried == 1  # the table's one fact, not the three cups
