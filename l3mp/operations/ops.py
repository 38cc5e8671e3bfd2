"""l3mp's operations, one request model and one answer model each, whichever door they come through.

REST, MCP and the other doors only translate: a route or a tool parses its request into the model
here, calls one method and sends the answer back in its own protocol. Store work is synchronous (the
doors run it off their event loops); work that calls the language model or the planner is async and
runs in one of the model slots (:class:`~l3mp.operations.gate.ModelGate`).

A rejected update is an answer, not an error: the methods return it (status ``rejected``, with its
issues), and each door decides how to say so (REST answers 422, MCP returns it as the tool's result).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial

from kg_memory import (
    Delta,
    Fact,
    HistoryQuery,
    InvalidValue,
    L3mpError,
    State,
    UnknownMemory,
    Update,
    UpdateSource,
    WorldMemory,
)
from kg_memory.memory import Proposal, Propose
from kg_memory.model import normalise_name
from kg_memory.unknowns import unplaced
from l3mp.llm import LanguageModel
from l3mp.operations.group import Build, bound
from l3mp.operations.models import (
    DeltaIn,
    EntitiesIn,
    EntityBody,
    ExplainOut,
    FactsOut,
    FoundOut,
    HistoryIn,
    HistoryPageOut,
    IntervalOut,
    LastSeenOut,
    MemoryIn,
    MemoryOut,
    NLUpdateIn,
    ObservationIn,
    ObservationsIn,
    PlanIn,
    PlanOut,
    RevertIn,
    SearchIn,
    SearchOut,
    StateOut,
    UpdateOut,
)
from l3mp.operations.services import Services
from l3mp.pipelines import NLUpdateConfig, NLUpdater, SensorUpdater
from l3mp.pipelines.openworld import OpenWorldPlanner
from l3mp.pipelines.plans import PlanConfig, TaskPlanner
from l3mp.wiring import nl_reader
from perception import Observation

# "at" a time includes the updates written at that instant; the history's ``until`` excludes its bound
_INSTANT = timedelta(microseconds=1)


@dataclass(frozen=True, kw_only=True)
class Operations:
    """Every operation over the memories of one running l3mp (its :class:`Services`)."""

    services: Services

    def memory(self, name: str) -> WorldMemory:
        return self.services.world(name)

    # -- memories ---------------------------------------------------------------------------

    def list_memories(self) -> list[MemoryOut]:
        return [MemoryOut.of(m) for m in self.services.store.list_memories()]

    def get_memory(self, name: str) -> MemoryOut:
        return MemoryOut.of(self.memory(name).record)

    def create_memory(self, request: MemoryIn) -> MemoryOut:
        return MemoryOut.of(WorldMemory.create(self.services.store, request.name, request.domain).record)

    def delete_memory(self, name: str, *, abandoned_import: bool = False) -> None:
        """Delete the memory with its state and history, freeing its name; with ``abandoned_import``,
        only the hidden memory an import left when its process stopped (an import still running in
        another process then fails).

        Whatever still holds the deleted memory hears that it is gone, never another memory made later
        under its name: writes check the memory's creation time in the transaction that commits them,
        this process forgets what it kept for it, and a process that kept more (a subscription, a
        planning world) checks the memory's creation time as it reads. An unknown name (a hidden one
        too, without ``abandoned_import``) is :class:`UnknownMemory`."""
        name = normalise_name(name)
        if not abandoned_import:
            self.services.store.get_memory(name)  # a hidden memory is only its import's
        self.services.store.delete_memory(name, importing=abandoned_import)
        self.services.forget(name)

    # -- reads ------------------------------------------------------------------------------

    def state(self, name: str, *, version: int | None = None, at: datetime | None = None) -> StateOut:
        """The state now, at a past ``version``, or as it was at the time ``at`` (after every update
        written up to that instant); ``version`` and ``at`` together are a caller's mistake."""
        memory = self.memory(name)
        now = memory.version
        if version is not None and at is not None:
            raise InvalidValue("state request", {"version": version, "at": at.isoformat()}, "give a version or a time")
        if at is not None:
            version = self.version_at(memory, at)
        state = memory.state() if version is None or version == now else memory.state_at(version)
        return _state_out(memory, state, now=now)

    @staticmethod
    def version_at(memory: WorldMemory, at: datetime) -> int:
        """The memory's version at the time ``at``: that of its newest update written by then (0 before any)."""
        # the last instant a datetime holds has no instant after it: every update is written by then
        until = at + _INSTANT if at < datetime.max.replace(tzinfo=at.tzinfo) else None
        query = HistoryQuery(until=until, newest_first=True, limit=1)
        found = memory.query_history(query)
        return found[0].version if found else 0

    def entities(self, name: str) -> list[EntityBody]:
        return [EntityBody.of(e) for _, e in sorted(self.memory(name).entities().items())]

    def facts(self, name: str, *, entity: str | None = None, predicate: str | None = None) -> FactsOut:
        memory = self.memory(name)
        version = memory.version
        facts = memory.facts(predicate=predicate, entity=entity)
        return FactsOut(version=version, facts=sorted(str(f) for f in facts))

    def search(self, name: str, request: SearchIn) -> SearchOut:
        """Entities whose name or label holds every word of ``text``, or whose type is ``text`` (or a
        subtype of it), each with the facts that name it; nearest the start of the alphabet first."""
        memory = self.memory(name)
        version = memory.version
        words = request.text.lower().replace("_", " ").split()
        wanted = request.text.strip().lower()
        matches = [
            e
            for _, e in sorted(memory.entities().items())
            if _mentions(e.name, e.label, words) or memory.domain.is_subtype(e.type, wanted)
        ]
        found = [
            FoundOut(entity=EntityBody.of(e), facts=sorted(str(f) for f in memory.facts(entity=e.name)))
            for e in matches[: request.limit]
        ]
        return SearchOut(version=version, found=found, truncated=len(matches) > request.limit)

    def history(self, name: str, request: HistoryIn) -> HistoryPageOut:
        """One page of the history, oldest first unless ``order`` is ``newest``; follow ``next_cursor``."""
        page = self.memory(name).query_history(_history_query(request))
        more = len(page) == request.limit
        return HistoryPageOut(updates=[UpdateOut.of(u) for u in page], next_cursor=page[-1].seq if more else None)

    def get_update(self, name: str, update_id: str) -> UpdateOut:
        return UpdateOut.of(self.services.store.get_update(self.memory(name).name, update_id))

    def explain_update(self, name: str, update_id: str) -> ExplainOut:
        """The update and, in the domain's English, what it changed or why it was refused."""
        memory = self.memory(name)
        update = memory.store.get_update(memory.name, update_id)
        return ExplainOut(update=UpdateOut.of(update), sentences=_sentences(memory, update))

    def last_seen(self, name: str, entity: str) -> LastSeenOut:
        """The last perception update that saw ``entity`` (``update`` is null if none did)."""
        found = self.memory(name).last_seen(entity)
        return LastSeenOut(
            entity=entity, time=found.time if found else None, update=UpdateOut.of(found) if found else None
        )

    def fact_intervals(self, name: str, fact: str) -> list[IntervalOut]:
        return [IntervalOut.of(i) for i in self.memory(name).fact_intervals(Fact.parse(fact))]

    # -- writes -----------------------------------------------------------------------------

    def apply_delta(self, name: str, request: DeltaIn) -> UpdateOut:
        """Facts to remove and to add, verified against the domain and the current state."""
        memory = self.memory(name)
        proposal = _delta_proposal(request)
        if self.services.settings.group_commit:
            return UpdateOut.of(self.services.groups.submit(memory, lambda _view: proposal))
        with self.services.writer(memory.name):
            update = memory.apply(
                proposal.delta, source=UpdateSource.API, input=request.input, expected_version=request.expected_version
            )
        return UpdateOut.of(update)

    async def apply_delta_async(self, name: str, request: DeltaIn) -> UpdateOut:
        """:meth:`apply_delta` for a door on an event loop, written as :meth:`observe_async` writes."""
        if not self.services.settings.group_commit:
            return await asyncio.to_thread(self.apply_delta, name, request)
        proposal = _delta_proposal(request)
        groups = self.services.groups
        return UpdateOut.of(await groups.submit_async(name, bound(lambda _view: proposal), resolve=self.services.world))

    def observe(self, name: str, request: ObservationIn) -> UpdateOut:
        """What the robot sees in one room: the difference to the memory, applied as a sensor update."""
        memory = self.memory(name)
        updater = SensorUpdater(memory)
        if self.services.settings.group_commit:
            observation = request.observation()
            propose = partial(updater.propose, observation, expected_version=request.expected_version)
            return UpdateOut.of(self.services.groups.submit(memory, propose, names=_read_by(observation)))
        with self.services.writer(memory.name):
            result = updater.apply(request.observation(), expected_version=request.expected_version)
        return UpdateOut.of(result.update)

    async def observe_async(self, name: str, request: ObservationIn) -> UpdateOut:
        """:meth:`observe` for a door on an event loop. With group commit the write waits on the loop,
        and the store is read and written by the thread that leads its group; else in a worker thread."""
        if not self.services.settings.group_commit:
            return await asyncio.to_thread(self.observe, name, request)
        observation = request.observation()
        groups = self.services.groups
        build = _sensor_write(observation, request.expected_version)
        update = await groups.submit_async(name, build, resolve=self.services.world, names=_read_by(observation))
        return UpdateOut.of(update)

    async def observe_batch_async(self, name: str, request: ObservationsIn) -> list[UpdateOut | Exception]:
        """:meth:`observe_batch` for a door on an event loop, as :meth:`observe_async` writes."""
        if not self.services.settings.group_commit:
            return await asyncio.to_thread(self.observe_batch, name, request)
        observations = [(o.observation(), o.expected_version) for o in request.observations]
        builds = [_sensor_write(o, v) for o, v in observations]
        names = [_read_by(o) for o, _ in observations]
        outcomes = await self.services.groups.submit_all_async(name, builds, resolve=self.services.world, names=names)
        missing = next((o for o in outcomes if isinstance(o, UnknownMemory)), None)
        if missing is not None:  # the request's fault, not an item's: looked up as its groups committed
            raise missing
        return [_answer(o) for o in outcomes]

    def observe_batch(self, name: str, request: ObservationsIn) -> list[UpdateOut | Exception]:
        """Several observations, in order, each its own sensor update: one outcome each, its update
        (applied, noop or rejected) or the error that kept it from being recorded (a stale
        ``expected_version``), which each door reports in its own way."""
        memory = self.memory(name)
        updater = SensorUpdater(memory)
        if self.services.settings.group_commit:
            observations = [(o.observation(), o.expected_version) for o in request.observations]
            proposals = [partial(updater.propose, o, expected_version=v) for o, v in observations]
            names = [_read_by(o) for o, _ in observations]
            outcomes = self.services.groups.submit_all(memory, proposals, names=names)
        else:
            with self.services.writer(memory.name):
                outcomes = [_outcome(updater, o) for o in request.observations]
        return [_answer(o) for o in outcomes]

    def add_entities(self, name: str, request: EntitiesIn) -> UpdateOut:
        """Perception's write: new entities with the facts that place them, verified as a sensor update."""
        memory = self.memory(name)
        entities = [e.to_entity() for e in request.entities]
        facts = [Fact.parse(f) for f in request.facts]
        return UpdateOut.of(memory.add_entities(entities, input=request.input, facts=facts))

    def revert(self, name: str, update_id: str, request: RevertIn) -> UpdateOut:
        """Undo an applied update with a new compensating update (verified like any other)."""
        memory = self.memory(name)
        return UpdateOut.of(memory.revert(update_id, input=request.input, expected_version=request.expected_version))

    # -- model-bound ------------------------------------------------------------------------

    async def report(
        self, name: str, request: NLUpdateIn, *, caller: str | None = None, model: LanguageModel | None = None
    ) -> UpdateOut:
        """What a person said: edits proposed by the language model (``model``, else the configured
        one), verified before anything is written. ``caller`` is rate-limited. A ``model`` given here
        (an agent's own) writes its edits: choosing among readings needs the scores only the
        configured local model gives."""
        services = self.services

        def update_from_words() -> UpdateOut:
            config = NLUpdateConfig.from_settings(services.settings)
            if model is not None:
                config = replace(config, reader="write")
            reader = model or services.language_model()
            updater = NLUpdater(self.memory(name), reader, config, retriever=services.retriever())
            return UpdateOut.of(updater.update(request.text).update)

        return await services.gate.run(update_from_words, key=caller)

    async def plan(
        self, name: str, request: PlanIn, *, caller: str | None = None, model: LanguageModel | None = None
    ) -> PlanOut:
        """A validated plan, or why there is none; planning changes nothing. A request in English needs
        the language model (``model``, which writes its goal, else the configured one); a PDDL goal does not."""
        services = self.services
        settings = services.settings

        def plan_request() -> PlanOut:
            optimal = settings.plan_optimal if request.optimal is None else request.optimal
            config = PlanConfig(
                retriever=settings.retriever,
                deadline=settings.plan_deadline,
                fallback=settings.retrieval_fallback,
                optimal=optimal,
                reader="write" if model is not None else nl_reader(settings),
                ranker=settings.nl_ranker,
                max_facts=settings.context_facts,
            )
            reader = None if request.goal is not None else (model or services.language_model())
            world = self.memory(name)
            if request.open_world:
                ask = OpenWorldPlanner(world, reader, config, retriever=services.retriever())
                report = ask.plan(
                    request.request, goal=request.goal, answers=request.answers, explored=request.explored
                )
                return PlanOut.model_validate(report.to_json())
            planner = TaskPlanner(
                world, reader, config, retriever=services.retriever(), worlds=services.planning_world(world)
            )
            return PlanOut.model_validate(planner.plan(request.request, goal=request.goal).to_json())

        # only requests in English call the model, so only they count against the caller's rate
        return await services.gate.run(plan_request, key=caller if request.goal is None else None)


def _outcome(updater: SensorUpdater, request: ObservationIn) -> Update | Exception:
    try:
        return updater.apply(request.observation(), expected_version=request.expected_version).update
    except L3mpError as exc:
        return exc


def _answer(outcome: Update | BaseException) -> UpdateOut | Exception:
    """An item's answer; an exception that is not the item's own (the process stopping) is raised."""
    if isinstance(outcome, Update):
        return UpdateOut.of(outcome)
    if isinstance(outcome, Exception):
        return outcome
    raise outcome


def _state_out(memory: WorldMemory, state: State, *, now: int) -> StateOut:
    entities = dict(state.entities)
    for constant in memory.domain.constant_entities():
        entities.setdefault(constant.name, constant)
    lost = unplaced(memory.domain, entities, state.facts)
    return StateOut(
        memory=memory.name,
        domain=memory.domain.name,
        version=state.version,
        now=now,
        entities=[EntityBody.of(e) for _, e in sorted(entities.items())],
        facts=sorted(str(f) for f in state.facts),
        unknown_location=sorted(e.name for e in lost),
    )


def _history_query(request: HistoryIn) -> HistoryQuery:
    newest = request.order == "newest"
    return HistoryQuery(
        entity=request.entity,
        since=request.since,
        until=request.until,
        source=request.source,
        status=request.status,
        after=0 if newest else request.cursor,
        before=(request.cursor or None) if newest else None,
        limit=request.limit,
        newest_first=newest,
    )


def _mentions(name: str, label: str, words: Sequence[str]) -> bool:
    text = f"{name.replace('_', ' ')} {label}".lower()
    return bool(words) and all(w in text for w in words)


def _sentences(memory: WorldMemory, update: Update) -> list[str]:
    language = memory.domain.language
    labels = {e.name: e.label for e in update.delta.new_entities if e.label}
    labels.update({n: e.label for n, e in memory.entities(_named_in(update)).items() if e.label})
    said = [f"{e.label or e.name} ({e.type}) is new." for e in update.delta.new_entities]
    said += [language.no_longer(f, labels) for f in sorted(update.delta.remove, key=str)]
    said += [language.fact(f, labels) for f in sorted(update.delta.add, key=str)]
    said += [f"Refused: {i.message}" for i in update.issues]
    return said


def _named_in(update: Update) -> set[str]:
    return {a for f in update.delta.remove | update.delta.add for a in f.args}


def _delta_proposal(request: DeltaIn) -> Proposal:
    delta = Delta(remove={Fact.parse(f) for f in request.remove}, add={Fact.parse(f) for f in request.add})
    version = request.expected_version
    return Proposal(delta=delta, source=UpdateSource.API, input=request.input, expected_version=version)


def _sensor_write(observation: Observation, expected_version: int | None) -> Build:
    """The sensor update ``observation`` makes, for whichever memory its group commits to."""

    def build(memory: WorldMemory) -> Propose:
        return partial(SensorUpdater(memory).propose, observation, expected_version=expected_version)

    return build


def _read_by(observation: Observation) -> tuple[str, ...]:
    """The names an observation's sensor update reads first: its room, its robot and what is in view."""
    return (observation.room, observation.robot, *observation.names(), *observation.opaque)
