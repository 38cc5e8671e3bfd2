"""One lane's measurements: each report read into one update of the surveyed home (undone after, so
the next starts from the same state), each task request read into the goal it means."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import Any

from experiments.realmodel.data import SEED, Report, Task
from experiments.realmodel.judge import goal_outcome, report_outcome
from kg_memory import Fact, GraphStore, UpdateStatus, WorldMemory
from kg_memory.model import Update
from l3mp.llm import LanguageModel
from l3mp.llm.base import Deadline, DeadlinePassed, ModelUnavailable, PromptTooLong, Usage
from l3mp.llm.scoring import TextScorer
from l3mp.pipelines.context import ModelRetrieval
from l3mp.pipelines.conversation import Exchange, ask_parsed
from l3mp.pipelines.errors import AnswerProblem
from l3mp.pipelines.nl_choose import choose_goal
from l3mp.pipelines.nl_update import NLUpdateConfig, NLUpdater
from l3mp.pipelines.plans import PlanConfig
from l3mp.pipelines.ranking import make_ranker
from l3mp.prompts import GoalInput, goal
from l3mp.settings import Settings
from planning.goal_checker import check_goal
from retrieval import context_unknowns
from retrieval import retriever as make_retriever
from sim.survey import surveyed_home


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """How a lane reads: ``reader`` write or choose, and the choosing reader's ``ranker``."""

    name: str
    reader: str
    ranker: str

    @property
    def needs_model(self) -> bool:
        return not (self.reader == "choose" and self.ranker == "none")

    @property
    def scores(self) -> bool:
        """Whether the lane ranks readings by their likelihood (a scorer, the server's /v1/score)."""
        return self.reader == "choose" and self.ranker == "likelihood"


CONFIGS: dict[str, Config] = {
    c.name: c
    for c in (
        Config(name="choose+choice", reader="choose", ranker="choice"),
        Config(name="choose+none", reader="choose", ranker="none"),
        Config(name="choose+likelihood", reader="choose", ranker="likelihood"),
        Config(name="write", reader="write", ranker="choice"),  # the ranker is not used when writing
    )
}
DEFAULT_CONFIG = "choose+likelihood"  # the lane the targets judge: the settings' default reader and ranker


def surveyed_memory(store: GraphStore) -> WorldMemory:
    memory = WorldMemory.create(store, "home", "household")
    entities, facts = surveyed_home(SEED, memory.domain)
    memory.add_entities(entities, facts=facts, input="survey")
    return memory


def _facts(facts: AbstractSet[Fact]) -> list[str]:
    return sorted(map(str, facts))


def read_reports(
    memory: WorldMemory,
    model: LanguageModel | None,
    config: Config,
    reports: Sequence[Report],
    *,
    settings: Settings,
    scorer: TextScorer | None = None,
    advance: Callable[[], None] = lambda: None,
) -> list[dict[str, Any]]:
    """One row per report (see :func:`read_report`), the memory back at its initial state after each;
    a likelihood lane ranks through ``scorer``."""
    chosen = replace(NLUpdateConfig.from_settings(settings), reader=config.reader, ranker=config.ranker)
    updater = NLUpdater(memory, model if model is not None else _NoModel(), chosen, scorer=scorer)
    rows = []
    for report in reports:
        rows.append(read_report(memory, updater, report))
        advance()
    return rows


def read_report(memory: WorldMemory, updater: NLUpdater, report: Report) -> dict[str, Any]:
    """The report read into one recorded update, judged against its delta, then undone."""
    initial = memory.facts()
    start = time.perf_counter()
    try:
        result = updater.update(report.text)
    except ModelUnavailable as exc:  # nothing written; counted as rejected, with why
        seconds = time.perf_counter() - start
        return _row(report, "rejected", seconds, Usage(), status="unavailable", issues=[str(exc)])
    seconds = time.perf_counter() - start
    update = result.update
    outcome = report_outcome(status=update.status, written=update.delta, expected=report.delta)
    issues = [f"{i.code}: {i.message}"[:300] for i in update.issues]
    row = _row(report, outcome, seconds, result.usage, status=str(update.status), issues=issues)
    if update.status is UpdateStatus.APPLIED:
        row["written"] = {"remove": _facts(update.delta.remove), "add": _facts(update.delta.add)}
        _undo(memory, update, initial, report)
    return row


def _row(
    report: Report, outcome: str, seconds: float, usage: Usage, *, status: str, issues: list[str]
) -> dict[str, Any]:
    return {
        "id": report.id,
        "set": report.set,
        "kind": report.kind,
        "outcome": outcome,
        "seconds": round(seconds, 3),
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "status": status,
        "issues": issues,
    }


def _undo(memory: WorldMemory, update: Update, initial: frozenset[Fact], report: Report) -> None:
    memory.revert(update.id, input=f"undo {report.id}")
    if memory.facts() != initial:
        raise RuntimeError(f"reverting the update of {report.id} did not restore the surveyed state")


class _NoModel:
    """Stands in for the model of a lane that reads by words alone: any call is a bug."""

    def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the words-alone reader called a model")


def read_tasks(
    memory: WorldMemory,
    model: LanguageModel | None,
    config: Config,
    tasks: Sequence[Task],
    *,
    settings: Settings,
    scorer: TextScorer | None = None,
    advance: Callable[[], None] = lambda: None,
) -> list[dict[str, Any]]:
    """One row per task: the goal the request means, by the lane's reader, judged against the goal meant."""
    rows = []
    for task in tasks:
        start = time.perf_counter()
        deadline = Deadline.after(settings.plan_deadline)
        if config.reader == "choose":
            found, usage, why = _chosen_goal(memory, model, config, task.request, deadline, scorer)
        else:
            assert model is not None
            found, usage, why = written_goal(memory, model, task.request, settings=settings, deadline=deadline)
        rows.append(
            {
                "id": task.id,
                "set": task.set,
                "outcome": goal_outcome(found, task.goal),
                "goal": sorted(found) if found else None,
                "seconds": round(time.perf_counter() - start, 3),
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "issues": [why[:300]] if why else [],
            }
        )
        advance()
    return rows


GoalFound = tuple[tuple[str, ...] | None, Usage, str]


def _chosen_goal(
    memory: WorldMemory,
    model: LanguageModel | None,
    config: Config,
    request: str,
    deadline: Deadline,
    scorer: TextScorer | None,
) -> GoalFound:
    ranker = make_ranker(config.ranker, model, memory.domain, scorer=scorer) if model is not None else None
    try:
        chosen = choose_goal(memory, request, ranker=ranker, deadline=deadline)
    except (DeadlinePassed, ModelUnavailable) as exc:
        return None, Usage(), str(exc)
    return chosen.literals or None, chosen.choice.usage, chosen.reason


def written_goal(
    memory: WorldMemory, model: LanguageModel, request: str, *, settings: Settings, deadline: Deadline
) -> GoalFound:
    """The goal stage of the writing path, as the task planner runs it before planning: the context
    retrieved for the request, the goal prompt, and the goal checked against the domain and the
    memory's entities (re-prompted with the issues)."""
    plans = PlanConfig(
        retriever=settings.retriever, deadline=settings.plan_deadline, fallback=settings.retrieval_fallback
    )
    retrieval = ModelRetrieval(
        make_retriever(plans.retriever), model, retries=plans.retrieval_retries, fallback=plans.fallback
    )
    usage = Usage()
    try:
        retrieved = retrieval.retrieve(memory, request, deadline=deadline, budget=plans.deadline, what="plan request")
        usage = sum((e.usage for e in retrieved.exchanges), usage)
        if retrieved.context is None:
            return None, usage, "; ".join(retrieved.problems) or "no context"
        context, state = retrieved.context, memory.state()
        inputs = GoalInput(
            domain=memory.domain,
            task=request,
            entities=tuple(context.entities.values()),
            facts=context.facts,
            unknowns=tuple(u.describe() for u in context_unknowns(memory, context)),
        )
        exchange = Exchange(
            model=model,
            messages=goal.render(inputs),
            schema=goal.schema(inputs),
            name=goal.NAME,
            deadline=deadline,
            budget=plans.deadline,
            what="plan request",
        )

        def parse(data: object) -> str:
            text = data.get("goal") if isinstance(data, dict) else None
            if not isinstance(text, str) or not text.strip():
                raise AnswerProblem(['answer {"goal": "<PDDL goal formula>"}'])
            check = check_goal(text, memory.domain, state.entities)
            if check.goal is None or check.issues:
                raise AnswerProblem(check.issues or ("the goal could not be read",))
            return str(check.goal)

        parsed = ask_parsed(exchange, parse, plans.retries)
        usage = usage + exchange.usage
    except (DeadlinePassed, PromptTooLong, ModelUnavailable) as exc:
        return None, usage, str(exc)
    if parsed.value is None:
        return None, usage, "; ".join(parsed.problems)
    return (parsed.value,), usage, ""
