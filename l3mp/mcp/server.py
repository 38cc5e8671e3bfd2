"""l3mp's MCP server: each tool calls one of :class:`~l3mp.operations.Operations` and returns its answer.

``build_mcp(services)`` makes a fresh server over the running :class:`~l3mp.operations.Services` (a
callable: the FastAPI app creates them in its lifespan, after the server is built). Store work is
synchronous, so those tools are plain functions the SDK runs in a worker thread; the model-bound
operations (report, plan) are async and run in the model slots. A rejected update is a result
(``status: rejected`` with its issues), a domain error a tool error naming what was wrong.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations at registration.

import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any, Literal, cast

import mcp.types as types
from mcp.server.mcpserver import Context, MCPServer, Message, UserMessage
from mcp.server.mcpserver.prompts import Prompt
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, func_metadata
from pydantic import BeforeValidator, ConfigDict, Field, ValidationError

from kg_memory import UpdateSource, UpdateStatus
from kg_memory.history import MAX_PAGE
from kg_memory.model import MAX_NAME_LENGTH
from l3mp.mcp.auth import caller, write_gate
from l3mp.mcp.errors import invalid_params, message, resource_errors, tool_errors
from l3mp.mcp.language import on_model
from l3mp.mcp.live import Live
from l3mp.operations import Operations, Services
from l3mp.operations.models import (
    DeltaIn,
    ExplainOut,
    HistoryIn,
    HistoryPageOut,
    LastSeenOut,
    MemoryOut,
    NLUpdateIn,
    ObservationIn,
    PlanIn,
    PlanOut,
    RevertIn,
    SearchIn,
    SearchOut,
    StateOut,
    UpdateOut,
)

INSTRUCTIONS = """\
l3mp is a robot's lifelong memory of a home: entities (rooms, furniture, objects, people) and PDDL facts \
such as (on mug_1 table_1), each memory versioned, with a full history of updates.
Read: list_memories, get_state, search_facts, history, last_seen, explain_update.
Write: report (what a person said, in English), observe (what the robot sees in a room), apply_delta \
(facts to remove and add), revert. Every write is verified against the domain: a rejected update is \
returned with status "rejected" and its issues, and changes nothing.
Plan: plan (a request in English or a PDDL goal) gives a validated plan or why there is none."""

ServicesProvider = Callable[[], Services]

MemoryName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH, description="the memory's name")]
Facts = Annotated[list[str], Field(max_length=10_000, description='PDDL facts, e.g. "(on mug_1 table_1)"')]
UpdateId = Annotated[str, Field(min_length=1, max_length=200, description="the update's id")]
Note = Annotated[str, Field(max_length=10_000, description="why, or what it came from (kept in the history)")]


def _no_truth(value: Any) -> Any:
    """A JSON true or false is no number (pydantic reads it as 1 or 0). Numbers in strings stay
    welcome: models write them so."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    return value


Whole = BeforeValidator(_no_truth)
Expected = Annotated[int | None, Whole, Field(ge=0, description="refused unless the memory is still at this version")]
ClientModel = Annotated[
    bool | None,
    Field(description="run the language work on your own model (sampling); default: the server's setting"),
]

READ = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = types.ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
PLAN = types.ToolAnnotations(read_only_hint=True, idempotent_hint=False, open_world_hint=False)


def build_mcp(services: ServicesProvider) -> MCPServer:
    """A fresh MCP server over the services ``services()`` returns while it runs."""

    def ops() -> Operations:
        return Operations(services=services())

    live = Live(ops, _bus(), poll=lambda: services().settings.mcp_watch_poll)

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        async with live.running():
            yield {}

    server = _quietly(
        lambda: MCPServer(
            "l3mp",
            version="1",
            instructions=INSTRUCTIONS,
            lifespan=lifespan,
            subscriptions=live.bus,
            middleware=[write_gate, live.middleware],
        )
    )
    # the handshake era's resources/subscribe has no MCPServer API: the low-level server's
    low = server._lowlevel_server
    low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, live.on_subscribe)
    low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, live.on_unsubscribe)
    _reads(server, ops)
    _writes(server, ops)
    _model_bound(server, services)
    _refusing_unknown_arguments(server)
    _resources(server, ops, services)
    _prompts(server)
    _refusing_malformed_prompt_requests(server)
    return server


def _strict(loose: type[ArgModelBase]) -> type[ArgModelBase]:
    """``loose``, refusing the keys it does not know (the SDK's argument models drop them)."""
    config = ConfigDict(**{**loose.model_config, "extra": "forbid"})
    namespace = {"model_config": config, "__module__": loose.__module__}
    return cast(type[ArgModelBase], type(loose.__name__, (loose,), namespace))  # pydantic's metaclass builds it


def _refusing_unknown_arguments(server: MCPServer) -> None:
    """A misspelt ``expected_version`` would write without its check. Each tool refuses unknown
    arguments instead, as REST's bodies do, and its input schema says so (``additionalProperties: false``)."""
    for tool in server._tool_manager.list_tools():
        strict = _strict(tool.fn_metadata.arg_model)
        tool.fn_metadata.arg_model = strict
        tool.parameters = strict.model_json_schema(by_alias=True)


def _refusing_malformed_prompt_requests(server: MCPServer) -> None:
    """The SDK answers a prompts/get it cannot render (no such prompt; an argument missing, unknown or
    not a string) with an internal error naming nothing. Checked first against the prompt's own
    arguments, such a request is invalid params naming what was wrong, as the spec asks."""
    arguments = {prompt.name: _prompt_arguments(prompt) for prompt in server._prompt_manager.list_prompts()}

    async def check(ctx: Any, call_next: Any) -> Any:
        if ctx.method == "prompts/get":
            _check_prompt_request(ctx.params, arguments)
        return await call_next(ctx)

    server.middleware.append(check)  # innermost: it sees the raw params, before the SDK validates them


def _prompt_arguments(prompt: Prompt) -> type[ArgModelBase]:
    skipped = [prompt.context_kwarg] if prompt.context_kwarg is not None else []
    return _strict(func_metadata(prompt.fn, skip_names=skipped, structured_output=False).arg_model)


def _check_prompt_request(params: Any, arguments: dict[str, type[ArgModelBase]]) -> None:
    """Raises invalid params unless ``params`` name one of the prompts and give just its arguments, as strings."""
    request = params if isinstance(params, Mapping) else {}
    name = request.get("name")
    if not isinstance(name, str) or name not in arguments:
        raise invalid_params(f"no prompt is named {name!r}; the prompts: {', '.join(sorted(arguments))}", prompt=name)
    given = request.get("arguments")
    if given is not None and not isinstance(given, Mapping):
        raise invalid_params(f"prompt {name!r}: arguments are an object of strings, not {given!r}", prompt=name)
    try:
        arguments[name].model_validate(given or {})
    except ValidationError as exc:
        raise invalid_params(f"prompt {name!r}: {message(exc)}", prompt=name) from None


def _bus() -> Any:
    from mcp.server.subscriptions import InMemorySubscriptionBus

    return InMemorySubscriptionBus()


def _quietly(make: Callable[[], MCPServer]) -> MCPServer:
    """MCPServer() configures the root logger (basicConfig); logging is its host's (uvicorn, the CLI)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        return make()
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _reads(server: MCPServer, ops: Callable[[], Operations]) -> None:
    @server.tool(annotations=READ)
    def list_memories() -> list[MemoryOut]:
        """Every memory in the store: its name, domain, version and when it was created."""
        with tool_errors():
            return ops().list_memories()

    @server.tool(annotations=READ)
    def get_state(
        memory: MemoryName,
        version: Annotated[int | None, Whole, Field(ge=0, description="the state at this past version")] = None,
        at: Annotated[datetime | None, Field(description="the state at this time (ISO 8601 with a timezone)")] = None,
    ) -> StateOut:
        """A memory's whole state (entities, facts, entities whose location is unknown): now, at a
        past version, or as it was at a time (give one of the two)."""
        with tool_errors():
            return ops().state(memory, version=version, at=at)

    @server.tool(annotations=READ)
    def search_facts(
        memory: MemoryName,
        text: Annotated[str, Field(min_length=1, max_length=1_000, description="words of a name or label, or a type")],
        limit: Annotated[int, Whole, Field(ge=1, le=1_000, description="at most this many entities")] = 20,
    ) -> SearchOut:
        """Entities whose name or label holds every word of ``text`` (or of type ``text``), each with
        the facts that name it."""
        with tool_errors():
            return ops().search(memory, SearchIn(text=text, limit=limit))

    @server.tool(annotations=READ)
    def history(
        memory: MemoryName,
        entity: Annotated[str | None, Field(max_length=MAX_NAME_LENGTH, description="updates that touched it")] = None,
        since: Annotated[datetime | None, Field(description="at or after this time (ISO 8601)")] = None,
        until: Annotated[datetime | None, Field(description="before this time (ISO 8601)")] = None,
        source: UpdateSource | None = None,
        status: UpdateStatus | None = None,
        cursor: Annotated[int, Whole, Field(ge=0, description="next_cursor of the previous page")] = 0,
        limit: Annotated[int, Whole, Field(ge=1, le=MAX_PAGE)] = 100,
        order: Literal["oldest", "newest"] = "oldest",
    ) -> HistoryPageOut:
        """One page of a memory's updates (filters combine with AND), oldest first unless
        order=newest; pass next_cursor back as cursor for the next page."""
        with tool_errors():
            query = HistoryIn(
                entity=entity,
                since=since,
                until=until,
                source=source,
                status=status,
                cursor=cursor,
                limit=limit,
                order=order,
            )
            return ops().history(memory, query)

    @server.tool(annotations=READ)
    def last_seen(
        memory: MemoryName, entity: Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH)]
    ) -> LastSeenOut:
        """The last perception update that saw ``entity`` (update is null if none did)."""
        with tool_errors():
            return ops().last_seen(memory, entity)

    @server.tool(annotations=READ)
    def explain_update(
        memory: MemoryName, update_id: Annotated[str, Field(min_length=1, max_length=200)]
    ) -> ExplainOut:
        """An update and, in the domain's English, what it changed or why it was refused."""
        with tool_errors():
            return ops().explain_update(memory, update_id)


def _writes(server: MCPServer, ops: Callable[[], Operations]) -> None:
    @server.tool(annotations=WRITE)
    def observe(memory: MemoryName, observation: ObservationIn) -> UpdateOut:
        """What the robot sees in one room: the difference to the memory, applied as a sensor update.
        An item expected in view and not seen gets an unknown location (meta.unknown_location)."""
        with tool_errors():
            return ops().observe(memory, observation)

    @server.tool(annotations=WRITE)
    def apply_delta(
        memory: MemoryName,
        remove: Facts | None = None,
        add: Facts | None = None,
        expected_version: Expected = None,
        input: Note = "",
    ) -> UpdateOut:
        """Facts to remove and to add, verified against the domain and the current state; a delta
        that breaks a rule is recorded as rejected (status "rejected", issues say why)."""
        with tool_errors():
            request = DeltaIn(remove=remove or [], add=add or [], expected_version=expected_version, input=input)
            return ops().apply_delta(memory, request)

    @server.tool(annotations=WRITE)
    def revert(
        memory: MemoryName,
        update_id: UpdateId,
        expected_version: Expected = None,
        input: Note = "",
    ) -> UpdateOut:
        """Undo an applied update with a new compensating update (verified like any other)."""
        with tool_errors():
            return ops().revert(memory, update_id, RevertIn(expected_version=expected_version, input=input))


def _model_bound(server: MCPServer, services: ServicesProvider) -> None:
    @server.tool(annotations=WRITE)
    async def report(
        memory: MemoryName,
        text: Annotated[str, Field(max_length=10_000, description="what a person said, in English")],
        ctx: Context,
        use_client_model: ClientModel = None,
    ) -> UpdateOut | types.InputRequiredResult:
        """What a person said, e.g. "Alex moved the blue mug to the hall shelf": the language model
        proposes edits, which are verified before anything is written. A rejected report is returned
        with status "rejected" and its issues."""
        with tool_errors():
            request = NLUpdateIn(text=text)
            who = caller(ctx)
            return await on_model(
                ctx,
                services(),
                wanted=use_client_model,
                work=lambda ops, model: ops.report(memory, request, caller=who, model=model),
            )

    @server.tool(annotations=PLAN)
    async def plan(
        memory: MemoryName,
        ctx: Context,
        request: Annotated[str, Field(max_length=10_000, description="what to do, in English (needs a model)")] = "",
        goal: Annotated[str | None, Field(max_length=10_000, description="a PDDL goal formula (no model)")] = None,
        open_world: Annotated[bool, Field(description="ask about unclear mentions; explore for unknowns")] = False,
        answers: Annotated[
            dict[str, str] | None, Field(description="follow-up to needs_information: mention -> entity")
        ] = None,
        explored: Annotated[list[str] | None, Field(description="rooms and containers already searched")] = None,
        optimal: Annotated[bool | None, Field(description="the cheapest plan, proven within the deadline")] = None,
        use_client_model: ClientModel = None,
    ) -> PlanOut | types.InputRequiredResult:
        """A validated plan from the memory's state, or why there is none (status); changes nothing."""
        with tool_errors():
            body = PlanIn(
                request=request,
                goal=goal,
                open_world=open_world,
                answers=answers or {},
                explored=explored or [],
                optimal=optimal,
            )
            who = caller(ctx)
            return await on_model(
                ctx,
                services(),
                wanted=False if goal is not None else use_client_model,  # a PDDL goal needs no model
                work=lambda ops, model: ops.plan(memory, body, caller=who, model=model),
            )


def _resources(server: MCPServer, ops: Callable[[], Operations], services: ServicesProvider) -> None:
    @server.resource("l3mp://memories", name="memories", mime_type="application/json")
    def memories() -> str:
        """Every memory: name, domain, version, created."""
        with resource_errors():
            return json.dumps([m.model_dump(mode="json") for m in ops().list_memories()])

    @server.resource("l3mp://memories/{name}/state", name="state", mime_type="application/json")
    def state(name: str) -> str:
        """A memory's current state (subscribe: notified when the memory changes)."""
        with resource_errors():
            return ops().state(name).model_dump_json()

    @server.resource("l3mp://memories/{name}/history", name="history", mime_type="application/json")
    def recent(name: str) -> str:
        """A memory's newest 100 updates, newest first (the history tool pages through all)."""
        with resource_errors():
            return ops().history(name, HistoryIn(order="newest", limit=100)).model_dump_json()

    @server.resource("l3mp://domains/{name}", name="domain", mime_type="application/json")
    def domain(name: str) -> str:
        """A domain: its PDDL text and the English templates of its predicates and actions."""
        with resource_errors():
            found = services().store.domains.get(name)
            language = found.language
            return json.dumps(
                {
                    "name": found.name,
                    "pddl": found.pddl,
                    "predicates": dict(language.predicates),
                    "actions": dict(language.actions),
                    "negations": dict(language.negations),
                }
            )


def _prompts(server: MCPServer) -> None:
    @server.prompt(description="Tell the memory what someone said changed")
    def report_a_change(memory: str, text: str) -> list[Message]:
        return [
            UserMessage(
                f"Record this change in the l3mp memory {memory!r}: {text}\n\n"
                f"Call the tool report with memory={memory!r} and text set to the words above (as said). "
                'If the result has status "rejected", read its issues: say what was unclear, or call '
                "get_state to see the memory and apply_delta with the exact facts to remove and add. "
                "Do not retry the same words unchanged."
            )
        ]

    @server.prompt(description="Plan a task from what the memory knows")
    def plan_a_task(memory: str, text: str) -> list[Message]:
        return [
            UserMessage(
                f"Plan this task for the robot from the l3mp memory {memory!r}: {text}\n\n"
                f"Call the tool plan with memory={memory!r} and request set to the task. If the status is "
                '"needs_information", ask the questions it lists and call plan again with answers '
                '(mention -> entity); if "needs_exploration", the plan explores first. Planning changes '
                "nothing in the memory."
            )
        ]
