"""Every LanguageModel implementation, set up to answer the contract suite's requests
(test_model_contract.py): the scripted double, the cassette recorder and player, the simulated model
(sim) and the OpenAI-compatible client against the real local llama.cpp server.

Each backend builds, for one request, a model that answers it (and its re-prompt), one whose answer
holds no JSON, and one that cannot answer at all. Whatever differs between backends is here; the
contract's assertions are written once, in the test module.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kg_memory import DomainRegistry
from kg_memory.formula import Atom
from l3mp.examples import SURVEY_ENTITIES, SURVEY_FACTS
from l3mp.llm import (
    CassettePlayer,
    CassetteRecorder,
    LanguageModel,
    LLMError,
    Message,
    ModelUnavailable,
    OpenAICompatibleModel,
    ScriptedModel,
    ScriptExhausted,
    UnrecordedRequest,
)
from l3mp.llm.local import LocalServer, free_port
from l3mp.prompts import follow_up
from l3mp.prompts._common import strict_object
from planning.world import World
from sim.model import ErrorRates, NoGroundTruth, SimulatedModel
from sim.tasks import Task

TASK = "Put the blue mug on the hall shelf."
GOAL = "(on mug_1 shelf_1)"
# The goal prompt's answer, its string bounded: llama.cpp turns the schema into a grammar, so the real
# model's reply ends within the client's max_tokens whatever it chooses to write.
SCHEMA = strict_object({"goal": {"type": "string", "maxLength": 60}})
UNUSABLE = "I would rather not say where the mug goes."


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One request of the contract: a short goal prompt, with or without its schema."""

    schema: Mapping[str, Any] | None
    reply: str  # what a scripted (or recorded) backend answers
    name: str = "goal"  # the simulated model answers the project's prompts by name
    messages: tuple[Message, ...] = (
        Message("system", "You turn a task for a household robot into a PDDL goal, in JSON."),
        Message("user", f"Entities: mug_1 (blue mug), shelf_1 (hall shelf).\n\nTask: {TASK}"),
    )

    def follow_up(self, answer: str) -> list[Message]:
        """The re-prompt a pipeline sends: the answer fed back with what was wrong with it."""
        return follow_up(self.messages, answer, ("(on mug_1 shelf_1) does not hold yet",))

    def ask(self, model: LanguageModel, **options: Any) -> Any:
        return model.complete(list(self.messages), schema=self.schema, name=self.name, **options)


JSON = Case(schema=SCHEMA, reply=f'{{"goal": "{GOAL}"}}')
TEXT = Case(schema=None, reply="Pick up the mug, go to the hall, put it on the shelf.")


class Backend(Protocol):
    @property
    def waits(self) -> bool:
        """Whether it waits on a server (then a call's timeout bounds it)."""
        ...

    @property
    def context(self) -> int | None:
        """The most tokens the model reads (a server's window); None: no limit."""
        ...

    def answering(self, case: Case) -> LanguageModel:
        """A model answering ``case`` (with JSON valid for its schema, if any), then its re-prompt."""
        ...

    def unusable(self, case: Case) -> LanguageModel:
        """A model whose answer to ``case`` holds no JSON."""
        ...

    def unavailable(self, case: Case) -> tuple[LanguageModel, type[LLMError]]:
        """A model that cannot answer ``case``, and the error it says so with."""
        ...

    def frozen(self) -> AbstractContextManager[None]:
        """Inside, the server (if any) takes requests but never answers them."""
        ...


class Scripted:
    waits = False
    context = None

    def answering(self, case: Case) -> LanguageModel:
        return ScriptedModel([case.reply, case.reply])

    def unusable(self, case: Case) -> LanguageModel:
        return ScriptedModel([UNUSABLE])

    def unavailable(self, case: Case) -> tuple[LanguageModel, type[LLMError]]:
        return ScriptedModel([]), ScriptExhausted

    def frozen(self) -> AbstractContextManager[None]:
        return nullcontext()


class Recording(Scripted):
    """CassetteRecorder in front of the scripted model: what it answers, it also writes down."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made = 0

    def wrap(self, inner: LanguageModel) -> LanguageModel:
        self.made += 1
        return CassetteRecorder(inner, self.folder / f"recorded-{self.made}.jsonl")

    def answering(self, case: Case) -> LanguageModel:
        return self.wrap(super().answering(case))

    def unusable(self, case: Case) -> LanguageModel:
        return self.wrap(super().unusable(case))

    def unavailable(self, case: Case) -> tuple[LanguageModel, type[LLMError]]:
        inner, error = super().unavailable(case)
        return self.wrap(inner), error  # the inner model's error passes through


class Replaying(Recording):
    """CassettePlayer over a cassette the recorder wrote of exactly the calls the contract makes."""

    def replay(self, case: Case, inner: ScriptedModel, conversations: int) -> LanguageModel:
        recorder = self.wrap(inner)
        assert isinstance(recorder, CassetteRecorder)
        answer = case.reply
        for turn in range(conversations):
            messages = case.follow_up(answer) if turn else list(case.messages)
            try:
                answer = recorder.complete(messages, schema=case.schema, name=case.name).text
            except LLMError:
                break  # recorded as such
        return CassettePlayer(recorder.path)

    def answering(self, case: Case) -> LanguageModel:
        return self.replay(case, ScriptedModel([case.reply, case.reply]), 2)

    def unusable(self, case: Case) -> LanguageModel:
        return self.replay(case, ScriptedModel([UNUSABLE]), 1)

    def unavailable(self, case: Case) -> tuple[LanguageModel, type[LLMError]]:
        return self.replay(case, ScriptedModel([]), 0), UnrecordedRequest


class Simulated:
    """The simulator's model, briefed on the task, over the small surveyed home."""

    waits = False
    context = None

    def __init__(self) -> None:
        domain = DomainRegistry().get("example_home")
        self.world = World(domain, SURVEY_ENTITIES, SURVEY_FACTS)

    def model(self, rates: ErrorRates, *, briefed: bool = True) -> SimulatedModel:
        model = SimulatedModel(self.world, rates)
        if briefed:
            model.brief_task(Task("place", TASK, Atom("on", ("mug_1", "shelf_1")), ("mug_1", "shelf_1")))
        return model

    def answering(self, case: Case) -> LanguageModel:
        return self.model(ErrorRates(rate=0.0))

    def unusable(self, case: Case) -> LanguageModel:
        return self.model(ErrorRates(rate=1.0, kinds={"malformed_json": 1.0}))

    def unavailable(self, case: Case) -> tuple[LanguageModel, type[LLMError]]:
        return self.model(ErrorRates(rate=0.0), briefed=False), NoGroundTruth

    def frozen(self) -> AbstractContextManager[None]:
        return nullcontext()


class LocalClient:
    """OpenAICompatibleModel against the real llama.cpp server (SmolLM2-135M) on 127.0.0.1."""

    waits = True

    def __init__(self, server: LocalServer) -> None:
        self.server = server
        self.context = server.ctx
        self.clients: list[OpenAICompatibleModel] = []

    def client(self, base_url: str, max_tokens: int) -> OpenAICompatibleModel:
        # the timeout only bounds a broken run; every contract decision is made by mechanism
        made = OpenAICompatibleModel(base_url, self.server.alias, max_tokens=max_tokens, timeout=120.0, max_retries=0)
        self.clients.append(made)
        return made

    def answering(self, case: Case) -> LanguageModel:
        return self.client(self.server.base_url, 256 if case.schema is not None else 16)

    def unusable(self, case: Case) -> LanguageModel:
        # the grammar opens the object, and one token cannot close it
        return self.client(self.server.base_url, 1)

    def unavailable(self, case: Case) -> tuple[LanguageModel, type[LLMError]]:
        return self.client(f"http://127.0.0.1:{free_port()}/v1", 16), ModelUnavailable  # nothing listens there

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """The server stopped (SIGSTOP): the kernel still accepts connections, nothing answers them."""
        process = self.server.process
        assert process is not None
        process.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            process.send_signal(signal.SIGCONT)

    def close(self) -> None:
        for made in self.clients:
            made.close()


BACKENDS: dict[str, Callable[[Path, Callable[[], LocalServer]], Backend]] = {
    "scripted": lambda folder, server: Scripted(),
    "cassette-recorder": lambda folder, server: Recording(folder),
    "cassette-player": lambda folder, server: Replaying(folder),
    "simulated": lambda folder, server: Simulated(),
    "openai-local": lambda folder, server: LocalClient(server()),
}
WAITING = ("openai-local",)  # the backends that wait on a server
