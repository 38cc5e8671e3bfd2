"""SimulatedModel: answers from the simulator's ground truth, with recorded, seeded injected errors."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pytest

from kg_memory import Delta, Entity, Fact
from l3mp import prompts
from l3mp.llm import Completion, LanguageModel, LLMError, MalformedOutput, Message, parse_json
from planning.problem import goal_objects
from retrieval import QueryGraph, count_tokens
from sim import Event, HomeSpec, Simulator, Task, generate_home
from sim.model import ERROR_KINDS, ErrorRates, InjectedError, InvalidErrorRates, NoGroundTruth, SimulatedModel
from sim.model.queries import Noise

SPEC = HomeSpec(seed=3, rooms=4, items=12, people=2)
EXACT = Noise(synonym=0.0, shorten=0.0, drop_type=0.0, paraphrase=0.0, drop_edge=0.0)
Step = tuple[Event, frozenset[Fact]]  # an event and the true state it was drawn from


def simulator(seed: int = 3) -> Simulator:
    return Simulator(generate_home(SPEC), seed=seed)


def run_events(sim: Simulator, steps: int) -> list[Step]:
    out = []
    for _ in range(steps):
        before = sim.world.facts
        out.append((sim.next_event(), before))
    return out


def state_change_messages(
    sim: Simulator, event: Event, entities: Iterable[Entity] | None = None, facts: Iterable[Fact] = ()
) -> list[Message]:
    listed = list(sim.world.entities.values()) if entities is None else list(entities)
    return prompts.state_change.render(prompts.StateChangeInput(sim.domain, event.text, listed, list(facts)))


def ask_state_change(model: SimulatedModel, messages: Sequence[Message]) -> Completion:
    return model.complete(messages, schema=prompts.state_change.SCHEMA, name=prompts.state_change.NAME)


def as_delta(data: Any) -> Delta:
    def facts(edits: Iterable[Mapping[str, Any]]) -> frozenset[Fact]:
        return frozenset(Fact(e["predicate"], tuple(e["args"])) for e in edits)

    return Delta(remove=facts(data["remove"]), add=facts(data["add"]))


def new_errors(model: SimulatedModel, before: int) -> list[InjectedError]:
    return model.injected[before:]


# -- the truth ---------------------------------------------------------------------------------------


def test_error_free_answers_with_the_full_context_are_the_true_deltas() -> None:
    sim = simulator()
    model = SimulatedModel(sim.world, ErrorRates(rate=0.0))
    assert isinstance(model, LanguageModel)
    for event, before in run_events(sim, 25):
        model.brief_event(event)
        messages = state_change_messages(sim, event, facts=before)
        completion = ask_state_change(model, messages)
        assert as_delta(completion.data) == Delta(remove=event.delta.remove, add=event.delta.add)
        assert completion.usage.prompt_tokens == sum(count_tokens(m.content) for m in messages)
        assert completion.usage.completion_tokens == count_tokens(completion.text) > 0
    assert model.injected == []


def test_every_completion_is_labelled_simulated() -> None:
    sim = simulator()
    model = SimulatedModel(sim.world)
    ((event, before),) = run_events(sim, 1)
    model.brief_event(event)
    completion = ask_state_change(model, state_change_messages(sim, event, facts=before))
    assert model.simulated is True and model.model == "simulated"
    assert completion.model == "simulated (ground truth, 20% injected errors)"


def test_what_the_context_does_not_show_is_left_out_or_guessed_from_labels() -> None:
    sim = simulator()
    model = SimulatedModel(sim.world, ErrorRates(rate=0.0))
    steps = run_events(sim, 30)
    event = next(e for e, _ in steps if e.delta.remove and e.delta.add)
    model.brief_event(event)
    involved = event.delta.mentioned()
    others = [e for n, e in sim.world.entities.items() if n not in involved]
    answer = as_delta(ask_state_change(model, state_change_messages(sim, event, others)).data)

    def guessed(fact: Fact) -> Fact:
        labels = (sim.world.entities[a].label for a in fact.args)
        return Fact(fact.predicate, tuple(label.lower().replace(" ", "_") for label in labels))

    assert answer.remove == frozenset()  # no removal was shown
    assert answer.add == {guessed(f) for f in event.delta.add}
    misses = model.injected
    assert {m.kind for m in misses} == {"context_miss"}
    assert {m.dropped for m in misses if not m.inserted} == {(f,) for f in event.delta.remove}
    assert {(m.dropped, m.inserted) for m in misses if m.inserted} == {
        ((f,), (guessed(f),)) for f in event.delta.add if guessed(f) != f
    }


# -- injected errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [k for k in ERROR_KINDS if k != "malformed_json"])
def test_each_kind_alone_is_injected_and_recorded_with_its_facts(kind: str) -> None:
    sim = simulator()
    model = SimulatedModel(sim.world, ErrorRates(rate=1.0, kinds={kind: 1.0}))
    applicable: Callable[[Event], bool] = {
        "wrong_predicate": lambda e: True,
        "wrong_entity": lambda e: bool(e.delta.add),
        "missing_removal": lambda e: bool(e.delta.remove),
        "hallucinated_fact": lambda e: True,
    }[kind]
    injected = 0
    for event, before in run_events(sim, 20):
        model.brief_event(event)
        start = len(model.injected)
        answer = as_delta(ask_state_change(model, state_change_messages(sim, event, facts=before)).data)
        errors = new_errors(model, start)
        if not applicable(event):
            assert errors == [] and answer == Delta(remove=event.delta.remove, add=event.delta.add)
            continue
        (error,) = errors
        injected += 1
        truth = event.delta.remove | event.delta.add
        assert (error.prompt, error.text, error.attempt, error.kind) == ("state_change", event.text, 0, kind)
        assert answer.remove | answer.add == (truth - set(error.dropped)) | set(error.inserted)
        _check_kind(kind, error, event, sim)
    assert injected >= 5


def _check_kind(kind: str, error: InjectedError, event: Event, sim: Simulator) -> None:
    predicates = sim.domain.predicates
    if kind == "wrong_predicate":
        ((dropped,), (inserted,)) = error.dropped, error.inserted
        assert inserted.args == dropped.args and inserted.predicate not in predicates
    elif kind == "wrong_entity":
        ((dropped,), (inserted,)) = error.dropped, error.inserted
        assert dropped in event.delta.add and inserted.predicate == dropped.predicate
        assert sum(a != b for a, b in zip(dropped.args, inserted.args, strict=True)) == 1
    elif kind == "missing_removal":
        assert error.inserted == () and len(error.dropped) == 1 and error.dropped[0] in event.delta.remove
    else:
        ((inserted,),) = (error.inserted,)
        assert error.dropped == () and inserted.predicate in predicates and not predicates[inserted.predicate].static
        assert inserted not in event.delta.add and not sim.world.holds(inserted)


def test_malformed_json_raises_like_a_real_backend() -> None:
    sim = simulator()
    model = SimulatedModel(sim.world, ErrorRates(rate=1.0, kinds={"malformed_json": 1.0}))
    for event, before in run_events(sim, 8):
        model.brief_event(event)
        messages = state_change_messages(sim, event, facts=before)
        with pytest.raises(MalformedOutput) as caught:
            ask_state_change(model, messages)
        assert caught.value.text and not caught.value.text.lstrip().startswith("{")
        plain = model.complete(messages, name=prompts.state_change.NAME)  # no schema: the raw text
        assert plain.data is None and plain.text == caught.value.text
        with pytest.raises(MalformedOutput):
            parse_json(plain.text)
    assert [e.kind for e in model.injected] == ["malformed_json"] * 16


def test_error_kinds_follow_their_weights() -> None:
    sim = simulator()
    model = SimulatedModel(sim.world, ErrorRates(rate=1.0, kinds={"hallucinated_fact": 9.0, "malformed_json": 1.0}))
    for event, before in run_events(sim, 60):
        model.brief_event(event)
        with contextlib.suppress(MalformedOutput):
            ask_state_change(model, state_change_messages(sim, event, facts=before))
    kinds = [e.kind for e in model.injected]
    assert len(kinds) == 60 and set(kinds) == {"hallucinated_fact", "malformed_json"}
    assert kinds.count("hallucinated_fact") > 3 * kinds.count("malformed_json")


def test_a_reprompt_is_answered_correctly_or_wrongly_as_configured() -> None:
    sim = simulator()
    ((event, before),) = run_events(sim, 1)
    truth = Delta(remove=event.delta.remove, add=event.delta.add)
    for correct, rate in ((1.0, 1.0), (0.0, 1.0), (0.0, 0.0)):
        model = SimulatedModel(
            sim.world, ErrorRates(rate=rate, kinds={"wrong_predicate": 1.0}, correct_on_reprompt=correct)
        )
        model.brief_event(event)
        messages = state_change_messages(sim, event, facts=before)
        first = ask_state_change(model, messages)
        again = prompts.follow_up(messages, first.text, ["(x, is_on, y): unknown predicate is_on"])
        second = ask_state_change(model, again)
        assert (as_delta(first.data) == truth) == (rate == 0.0)
        fixed = correct == 1.0 or rate == 0.0  # an error-free model stays error-free when re-prompted
        assert (as_delta(second.data) == truth) == fixed
        assert [e.attempt for e in model.injected] == ([0] if rate else []) + ([] if fixed else [1])


# -- determinism -------------------------------------------------------------------------------------


def _answers(seed: int, steps: int = 30) -> tuple[list[str], list[InjectedError]]:
    sim = simulator()
    model = SimulatedModel(sim.world, ErrorRates(rate=0.5), seed=seed)
    texts = []
    for event, before in run_events(sim, steps):
        model.brief_event(event)
        messages = state_change_messages(sim, event, facts=before)
        texts.append(model.complete(messages, name=prompts.state_change.NAME).text)
        query = prompts.query_graph.render(prompts.QueryGraphInput(sim.domain, event.text))
        texts.append(model.complete(query, name=prompts.query_graph.NAME).text)
    return texts, model.injected


def test_the_same_seed_gives_the_same_answers_and_another_seed_differs() -> None:
    first, again, other = _answers(0), _answers(0), _answers(1)
    assert first == again
    assert first[0] != other[0] and first[1] != other[1]
    assert len(first[1]) >= 5  # about half the state changes carry an error


# -- the other prompts -------------------------------------------------------------------------------


def test_query_graphs_mention_the_events_entities() -> None:
    sim = simulator()
    exact = SimulatedModel(sim.world, ErrorRates(noise=EXACT))
    noisy = SimulatedModel(sim.world)
    for event, _ in run_events(sim, 15):
        messages = prompts.query_graph.render(prompts.QueryGraphInput(sim.domain, event.text))
        for model in (exact, noisy):
            model.brief_event(event)
        answer = exact.complete(messages, schema=prompts.query_graph.SCHEMA, name=prompts.query_graph.NAME)
        query = QueryGraph.from_json(answer.text)
        entities = [sim.world.entities[n] for n in dict.fromkeys(event.entities)]
        assert [(n.mention, n.type) for n in query.nodes] == [(e.label, e.type) for e in entities]
        assert all(e.source != e.target for e in query.edges)
        noisy_query = QueryGraph.from_json(noisy.complete(messages, name=prompts.query_graph.NAME).text)
        assert len(noisy_query.nodes) == len(entities)
    assert exact.injected == [] and noisy.injected == []


def _tasks(sim: Simulator, count: int) -> list[Task]:
    found: dict[str, Task] = {}
    for _ in range(200):
        task = sim.tasks.propose(sim.world)
        found.setdefault(task.text, task)
        if len(found) == count:
            break
    return list(found.values())


def goal_messages(sim: Simulator, task: Task) -> list[Message]:
    entities, facts = list(sim.world.entities.values()), list(sim.world.facts)
    return prompts.goal.render(prompts.GoalInput(domain=sim.domain, task=task.text, entities=entities, facts=facts))


def test_goal_answers_are_the_task_goal_and_errors_change_it() -> None:
    sim = simulator()
    clean = SimulatedModel(sim.world, ErrorRates(rate=0.0))
    wrong = SimulatedModel(sim.world, ErrorRates(rate=1.0, kinds={"wrong_predicate": 1.0}))
    for task in _tasks(sim, 8):
        for model in (clean, wrong):
            model.brief_task(task)
        messages = goal_messages(sim, task)
        assert clean.complete(messages, schema=prompts.goal.SCHEMA, name="goal").data == {"goal": task.goal_pddl}
        bad = wrong.complete(messages, schema=prompts.goal.SCHEMA, name="goal").data
        assert isinstance(bad, dict) and set(bad) == {"goal"} and bad["goal"] != task.goal_pddl
        assert wrong.injected[-1].text == task.text
    assert clean.injected == [] and {e.kind for e in wrong.injected} == {"wrong_predicate"}


def test_a_goal_over_a_type_has_no_entity_to_get_wrong() -> None:
    sim = simulator()
    model = SimulatedModel(sim.world, ErrorRates(rate=1.0, kinds={"wrong_entity": 1.0}))
    tasks = _tasks(sim, 30)
    for task in tasks:
        model.brief_task(task)
        answer = model.complete(goal_messages(sim, task), name="goal")
        named = bool(goal_objects(task.goal))  # "every light" names none
        assert (answer.text == f'{{"goal": "{task.goal_pddl}"}}') != named
    assert len(model.injected) == sum(bool(goal_objects(t.goal)) for t in tasks)
    assert any(not goal_objects(t.goal) for t in tasks)


def test_entity_selection_is_the_listed_truth_plus_an_injected_wrong_entity() -> None:
    sim = simulator()
    clean = SimulatedModel(sim.world, ErrorRates(rate=0.0))
    wrong = SimulatedModel(sim.world, ErrorRates(rate=1.0))
    listed = [e for n, e in sim.world.entities.items() if not n.startswith("light")]
    for event, _ in run_events(sim, 12):
        messages = prompts.entity_selection.render(prompts.EntitySelectionInput(sim.domain, event.text, listed))
        truth = sorted({n for n in event.entities if not n.startswith("light")})
        for model in (clean, wrong):
            model.brief_event(event)
        assert clean.complete(messages, name="entity_selection").data is None
        assert parse_json(clean.complete(messages, name="entity_selection").text) == {"entities": truth}
        chosen: Any = wrong.complete(messages, schema=prompts.entity_selection.SCHEMA, name="entity_selection").data
        (extra,) = set(chosen["entities"]) - set(truth)
        assert chosen["entities"] == sorted([*truth, extra]) and not extra.startswith("light")
    assert clean.injected == [] and [e.kind for e in wrong.injected] == ["wrong_entity"] * 12


# -- misuse ------------------------------------------------------------------------------------------


def test_unknown_requests_and_prompts_raise() -> None:
    sim = simulator()
    model = SimulatedModel(sim.world)
    ((event, before),) = run_events(sim, 1)
    messages = state_change_messages(sim, event, facts=before)
    with pytest.raises(NoGroundTruth, match="no event or task") as caught:
        ask_state_change(model, messages)
    assert isinstance(caught.value, LLMError) and caught.value.text == " ".join(event.text.split())
    model.brief_event(event)
    with pytest.raises(NoGroundTruth, match="unknown prompt"):
        model.complete(messages, name="summary")
    with pytest.raises(NoGroundTruth, match="briefed as an event"):
        model.complete(messages, name="goal")
    with pytest.raises(NoGroundTruth, match="no user message"):
        model.complete([Message("system", "hi")], name="state_change")


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"rate": -0.1}, "rate"),
        ({"rate": 1.5}, "rate"),
        ({"rate": True}, "rate"),
        ({"rate": "0.2"}, "rate"),
        ({"correct_on_reprompt": 2}, "correct_on_reprompt"),
        ({"kinds": {}}, "kinds"),
        ({"kinds": {"typo": 1.0}}, "kinds"),
        ({"kinds": {"wrong_entity": 0.0}}, "kinds['wrong_entity']"),
        ({"kinds": {"wrong_entity": -1}}, "kinds['wrong_entity']"),
        ({"noise": None}, "noise"),
    ],
)
def test_error_rates_are_validated(fields: dict[str, Any], name: str) -> None:
    with pytest.raises(InvalidErrorRates) as caught:
        ErrorRates(**fields)
    assert caught.value.name == name and isinstance(caught.value, LLMError)


def test_error_rates_normalize_and_the_model_checks_them() -> None:
    rates = ErrorRates(rate=1, kinds={"malformed_json": 2, "wrong_predicate": 1})
    assert rates.rate == 1.0 and list(rates.kinds) == ["wrong_predicate", "malformed_json"]
    assert dict(ErrorRates().kinds) == dict.fromkeys(ERROR_KINDS, 1.0)
    with pytest.raises(InvalidErrorRates):
        SimulatedModel(simulator().world, rates=0.2)  # type: ignore[arg-type]
