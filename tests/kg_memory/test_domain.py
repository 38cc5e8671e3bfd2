"""Loading domains: the shipped example, real IPC files, and every kind of malformed input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES

from kg_memory import DomainError, DomainRegistry, Fact, UnknownDomain, load_domain
from kg_memory._pddl import parse_pddl_domain

EXAMPLE = Path(__file__).resolve().parents[2] / "kg_memory" / "domains" / "example_home"
IPC = sorted((FIXTURES / "ipc").glob("*.pddl"))


def _copy_example(tmp_path: Path) -> Path:
    folder = tmp_path / "domain"
    shutil.copytree(EXAMPLE, folder)
    return folder


def test_example_domain_schema() -> None:
    domain = DomainRegistry().get("example_home")
    assert domain.name == "example_home"
    assert domain.lineage("dish") == ("dish", "item", "object")
    assert domain.is_subtype("sink", "furniture") and not domain.is_subtype("furniture", "sink")
    on = domain.predicates["on"]
    assert [(p.name, p.type) for p in on.parameters] == [("i", "item"), ("f", "furniture")]
    assert dict(domain.constants) == {"robot_1": "robot"}
    assert domain.actions["pick"].changes == {"on", "hand_empty", "held"}
    # forall + when effects load, and count as changing their predicate
    assert domain.actions["switch_off_all"].changes == {"light_on"}


def test_actions_keep_preconditions_and_effects() -> None:
    domain = DomainRegistry().get("example_home")
    pick = domain.actions["pick"]
    assert [str(p) for p in pick.parameters] == ["?a - robot", "?i - item", "?f - furniture", "?r - room"]
    assert str(pick.precondition) == "(and (robot_at ?a ?r) (in_room ?f ?r) (on ?i ?f) (hand_empty ?a))"
    assert {str(e) for e in pick.effects} == {"(not (on ?i ?f))", "(not (hand_empty ?a))", "(held ?i ?a)"}
    switch_on = domain.actions["switch_on"]
    assert str(switch_on.precondition) == "(and (robot_at ?a ?r) (light_in ?l ?r) (not (light_on ?l)))"
    (off,) = domain.actions["switch_off_all"].effects
    assert str(off) == "(forall (?l - light) (when (light_in ?l ?r) (not (light_on ?l))))"


def test_ipc_miconic_conditional_forall_effects() -> None:
    parsed = parse_pddl_domain(
        FIXTURES / "ipc" / "miconic_adl.pddl", (FIXTURES / "ipc" / "miconic_adl.pddl").read_text()
    )
    stop = parsed.actions["stop"]
    assert {str(e) for e in stop.effects} == {
        "(forall (?p - passenger) (when (and (origin ?p ?f) (not (served ?p))) (boarded ?p)))",
        "(forall (?p - passenger) (when (and (boarded ?p) (destin ?p ?f)) (not (boarded ?p))))",
        "(forall (?p - passenger) (when (and (boarded ?p) (destin ?p ?f)) (served ?p)))",
    }


def test_static_predicates_are_inferred_from_actions_and_rules() -> None:
    domain = DomainRegistry().get("example_home")
    # no action changes these; person_in is not changed by actions either, but the rules
    # declare it dynamic because people move
    assert domain.static_predicates == {"connected", "in_room", "light_in"}


def test_language_templates_render_facts_and_actions() -> None:
    domain = DomainRegistry().get("example_home")
    assert domain.language.fact(Fact.parse("(light_on lamp_1)")) == "lamp_1 is on"
    labels = {"mug_1": "the blue mug", "table_1": "the kitchen table"}
    assert domain.language.fact(Fact.parse("(on mug_1 table_1)"), labels) == "the blue mug is on the kitchen table"
    assert domain.language.action("move", ["robot_1", "hall", "kitchen"]) == "robot_1 moves from hall to kitchen"


@pytest.mark.parametrize("path", IPC, ids=[p.stem for p in IPC])
def test_real_ipc_domains_parse(path: Path) -> None:
    parsed = parse_pddl_domain(path, path.read_text())
    assert parsed.predicates and parsed.actions
    assert all(action.changes for action in parsed.actions.values())
    for action in parsed.actions.values():  # every term is a declared parameter, a variable or a constant
        names = {f"?{p.name}" for p in action.parameters}
        for effect in action.effects:
            scope = names | {f"?{v.name}" for v in effect.forall}
            assert set(effect.atom.terms) <= scope | set(parsed.constants), effect


def test_ipc_schedule_has_conditional_effects_forall_and_shared_names() -> None:
    parsed = parse_pddl_domain(
        FIXTURES / "ipc" / "schedule_adl.pddl", (FIXTURES / "ipc" / "schedule_adl.pddl").read_text()
    )
    assert "temperature" in parsed.types and "temperature" in parsed.predicates
    assert "temperature" in parsed.actions["do-roll"].changes  # changed only inside forall/when


def test_ipc_domain_loads_as_a_domain_with_a_language_file(tmp_path: Path) -> None:
    folder = tmp_path / "gripper"
    folder.mkdir()
    shutil.copy(FIXTURES / "ipc" / "gripper_typed.pddl", folder / "domain.pddl")
    (folder / "language.toml").write_text(
        '[predicates]\n"at-robby" = "the robot is in {0}"\nat = "{0} is in {1}"\nfree = "{0} is free"\n'
        'carry = "{1} carries {0}"\n[actions]\nmove = "move from {0} to {1}"\npick = "pick {0} in {1} with {2}"\n'
        'drop = "drop {0} in {1} from {2}"\n'
    )
    domain = load_domain(folder)
    assert domain.name == "gripper-typed" and set(domain.constants) == {"left", "right"}
    assert domain.language.fact(Fact.parse("(at-robby rooma)")) == "the robot is in rooma"


def test_registry_names_unknown_domains() -> None:
    registry = DomainRegistry()
    assert "example_home" in registry
    with pytest.raises(UnknownDomain, match=r"'kitchen_world'.*example_home"):
        registry.get("kitchen_world")


def test_missing_domain_file(tmp_path: Path) -> None:
    with pytest.raises(DomainError, match=r"domain\.pddl: no such file"):
        load_domain(tmp_path)


def test_malformed_pddl_names_the_file_and_the_problem(tmp_path: Path) -> None:
    folder = _copy_example(tmp_path)
    pddl = folder / "domain.pddl"
    pddl.write_text(pddl.read_text().replace("(connected ?from ?to)", "(connected ?from ?nowhere)"))
    with pytest.raises(DomainError) as caught:
        load_domain(folder)
    assert caught.value.path == pddl and "nowhere" in str(caught.value)


def test_unbalanced_pddl(tmp_path: Path) -> None:
    folder = _copy_example(tmp_path)
    (folder / "domain.pddl").write_text("(define (domain broken) (:predicates (p ?x)")
    with pytest.raises(DomainError, match="not a valid PDDL domain"):
        load_domain(folder)


def test_missing_language_template(tmp_path: Path) -> None:
    folder = _copy_example(tmp_path)
    language = folder / "language.toml"
    language.write_text(language.read_text().replace('dirty = "{0} is dirty"\n', ""))
    with pytest.raises(DomainError, match=r"language\.toml: \[predicates\] has no template for dirty"):
        load_domain(folder)


def test_template_placeholder_beyond_arity(tmp_path: Path) -> None:
    folder = _copy_example(tmp_path)
    language = folder / "language.toml"
    language.write_text(language.read_text().replace('"{0} is dirty"', '"{0} is dirty on {1}"'))
    with pytest.raises(DomainError, match=r"dirty: placeholder \{1\}"):
        load_domain(folder)


@pytest.mark.parametrize(
    ("rules", "problem"),
    [
        ('[[functional]]\nfacts = ["(nothing ?x ?y)"]\nkey = ["?x"]\n', "nothing"),
        ('[[functional]]\nfacts = ["(on ?i ?f)"]\n', "needs a key"),
        ('[[exclusive]]\nfacts = ["(held ?i ?a)"]\n', "two or more patterns"),
        ('[[functional]]\nfacts = ["(on ?i ?f)", "(light_on ?l)"]\n', "no variable shared"),
        ('[[invariant]]\nkind = "at_least_one"\ntype = "gizmo"\nvar = "?i"\nfacts = ["(on ?i ?f)"]\n', "gizmo"),
        ('[[invariant]]\nkind = "sometimes"\nfacts = ["(on ?i ?f)"]\n', "sometimes"),
        ("[[functional]\n", "bad rules"),
        ('colour = "blue"\n', "unknown sections"),
        (
            '[[invariant]]\nkind = "at_least_one"\ntype = "robot"\nvar = "?a"\nfacts = ["(robot_at ?a)"]\n',
            "wrong number",
        ),
        ('[[invariant]]\nkind = "requires"\nif = "(in_hand ?i)"\nthen = ["(person_in ?i ?r)"]\n', "wrong number"),
    ],
)
def test_malformed_rules_name_the_file(tmp_path: Path, rules: str, problem: str) -> None:
    folder = _copy_example(tmp_path)
    (folder / "rules.toml").write_text(rules)
    with pytest.raises(DomainError, match=r"rules\.toml") as caught:
        load_domain(folder)
    assert problem in str(caught.value)


def test_numeric_fluents_are_refused(tmp_path: Path) -> None:
    folder = _copy_example(tmp_path)
    pddl = folder / "domain.pddl"
    text = pddl.read_text().replace("(:requirements :strips", "(:requirements :strips :numeric-fluents")
    pddl.write_text(text.replace("(dirty ?d - dish))", "(dirty ?d - dish))\n  (:functions (battery ?a - robot))"))
    with pytest.raises(DomainError, match="battery"):
        load_domain(folder)


def test_subtypes_are_answered_alike_when_asked_again_and_names_from_outside_are_not_kept() -> None:
    domain = DomainRegistry().get("example_home")
    child = next(t for t, parent in domain.types.items() if parent not in (None, "object"))
    parent = domain.types[child]
    assert parent is not None
    for _ in range(2):
        assert domain.is_subtype(child, parent) and domain.is_subtype(child, child)
        assert domain.is_subtype(child, "object") and not domain.is_subtype(parent, child)
        assert not domain.is_subtype("no_such_type", parent)
        assert domain.is_subtype("no_such_type", "no_such_type") == ("no_such_type" in domain.lineage("no_such_type"))
    held = len(domain._subtype)
    for i in range(100):
        domain.is_subtype(f"made_up_{i}", parent)
    assert len(domain._subtype) == held
