"""The Environment contract, run against every implementation (see environment_backends.py).

What the runtime relies on: an observation states only what is true, and looking changes nothing; an
executed action comes back as a StepOutcome for that action, done or refused with reasons (a refusal is
reported, never raised, and changes nothing); what an action did is perceived after it; reports and
tasks come once each, in order, then None; time passing with nobody about changes nothing; ``judge``
reads the world as it is now; ``truth`` is the lab's (a real robot answers None).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from environment_backends import BACKENDS, CLOSABLE, Backend

from kg_memory import Fact
from l3mp.runtime import Environment, TaskRequest
from perception.observation import Observation
from planning.evaluator import GroundAction, StepOutcome


def _backend(request: pytest.FixtureRequest, folder: Path) -> Iterator[Backend]:
    if request.param == "thor":
        request.getfixturevalue("thor_home")  # ai2thor writes under ~/.ai2thor: a temporary HOME
    made = BACKENDS[request.param](folder)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from _backend(request, tmp_path)


@pytest.fixture(params=CLOSABLE)
def closable(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from _backend(request, tmp_path)


def truth(env: Environment) -> frozenset[Fact]:
    known = env.truth()
    assert isinstance(known, frozenset), "the lab's environments know the truth"
    return known


def test_it_is_an_environment(backend: Backend) -> None:
    assert isinstance(backend.env, Environment)


def test_what_it_observes_holds_and_looking_changes_nothing(backend: Backend) -> None:
    env = backend.env
    before = truth(env)
    observation = env.observe()
    assert isinstance(observation, Observation)
    seen = set(observation.facts())
    assert seen and seen <= before
    assert set(env.observe().facts()) == seen and truth(env) == before


def test_an_action_it_does_is_reported_done_then_perceived(backend: Backend) -> None:
    env = backend.env
    action, effect = backend.doable()
    assert effect not in truth(env)
    outcome = env.execute(action)
    assert isinstance(outcome, StepOutcome)
    assert (outcome.action, outcome.applicable, outcome.reasons) == (action, True, ())
    assert effect in truth(env)
    env.advance()  # as the runtime does after each action
    perceived = set(env.observe().facts())
    assert effect in perceived and perceived <= truth(env)


def _not_doable(backend: Backend, kind: str) -> GroundAction:
    if kind == "refused":
        return backend.refused()
    action, _ = backend.doable()
    if kind == "unknown action":
        return GroundAction("teleport_everything", action.args)
    return GroundAction(action.name, (*action.args[:-1], "no_such_thing_1"))  # an object it does not have


@pytest.mark.parametrize("kind", ["refused", "unknown action", "unknown object"])
def test_an_action_it_will_not_do_is_reported_with_reasons_and_changes_nothing(backend: Backend, kind: str) -> None:
    env = backend.env
    before = truth(env)
    action = _not_doable(backend, kind)
    outcome = env.execute(action)  # reported, never raised: the runtime replans on it
    assert isinstance(outcome, StepOutcome) and outcome.action == action and not outcome.applicable
    assert outcome.reasons and all(isinstance(r, str) and r for r in outcome.reasons)
    assert truth(env) == before


def test_reports_come_once_each_in_order_then_none(backend: Backend) -> None:
    env = backend.env
    assert env.next_report() is None
    backend.say("Alex took the mug.")
    backend.say("The light is on.")
    assert [env.next_report(), env.next_report(), env.next_report()] == ["Alex took the mug.", "The light is on.", None]


def test_tasks_come_once_each_in_order_then_none(backend: Backend) -> None:
    env = backend.env
    assert env.next_task() is None
    first, second = backend.add_task("Bring me the mug."), backend.add_task("Turn the light off.")
    assert isinstance(first, TaskRequest) and (first.text, first.goal) == ("Bring me the mug.", None)
    assert [env.next_task(), env.next_task(), env.next_task()] == [first, second, None]


def test_time_passing_with_nobody_about_changes_nothing(backend: Backend) -> None:
    env = backend.env
    before = truth(env)
    env.advance()  # the runtime lets time pass when the robot is idle, too
    assert truth(env) == before


def test_judge_reads_the_world_as_it_is_now(backend: Backend) -> None:
    env = backend.env
    task = backend.add_task("Do what it takes.")
    action, effect = backend.doable()
    holds = min(truth(env), key=str)
    assert env.judge(task, None) is None  # no goal: nothing to judge by
    assert env.judge(task, str(holds)) is True and env.judge(task, f"(not {holds})") is False
    assert env.judge(task, str(effect)) is False
    env.execute(action)
    assert env.judge(task, str(effect)) is True


def test_closing_twice_is_harmless(closable: Backend) -> None:
    closable.close()
    closable.close()
