"""The MCP server's tools, resources and prompts through the SDK's in-process client, over real services
(SQLite in tmp_path; the configured model scripted, the client's model answering sampling requests)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_support import (
    MOVE,
    NO_REMOVAL,
    SAID,
    ClientModel,
    RawPromptRequest,
    assert_malformed_prompt_requests_refused,
    errors_logged,
    running_services,
    settings_for,
    surveyed,
    text_of,
)

from l3mp.llm import ScriptedModel
from l3mp.mcp.server import build_mcp
from l3mp.operations import Operations, Services
from l3mp.operations.models import DeltaIn, ExplainOut, MemoryIn, PlanOut, StateOut, UpdateOut

MODES = ("auto", "legacy")  # 2026-07-28 and the handshake era (2025-11-25)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_tools_are_typed_and_reads_answer_with_the_operations_models(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    with running_services(settings) as services:
        ops = Operations(services=services)
        moved = ops.apply_delta(name, DeltaIn(remove=["(on mug_1 table_1)"], add=["(on mug_1 shelf_1)"]))
        async with Client(build_mcp(lambda: services)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {
                "list_memories",
                "get_state",
                "search_facts",
                "history",
                "last_seen",
                "explain_update",
                "report",
                "observe",
                "apply_delta",
                "revert",
                "plan",
            }
            assert tools["get_state"].output_schema == StateOut.model_json_schema()
            assert tools["report"].output_schema == UpdateOut.model_json_schema()
            assert tools["plan"].output_schema == PlanOut.model_json_schema()
            assert "ctx" not in tools["report"].input_schema["properties"]
            reads = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
            assert reads == {
                "list_memories",
                "get_state",
                "search_facts",
                "history",
                "last_seen",
                "explain_update",
                "plan",
            }

            listed = await client.call_tool("list_memories", {})
            assert name in [m["name"] for m in (listed.structured_content or {})["result"]]

            now = await client.call_tool("get_state", {"memory": name})
            assert now.is_error is False
            assert now.structured_content == ops.state(name).model_dump(mode="json")
            assert "(on mug_1 shelf_1)" in now.structured_content["facts"]
            before = await client.call_tool("get_state", {"memory": name, "version": 1})
            assert before.structured_content is not None and "(on mug_1 table_1)" in before.structured_content["facts"]
            assert before.structured_content["now"] == 2

            found = await client.call_tool("search_facts", {"memory": name, "text": "blue mug"})
            assert [f["entity"]["name"] for f in (found.structured_content or {})["found"]] == ["mug_1"]

            newest = await client.call_tool("history", {"memory": name, "order": "newest", "limit": 1})
            page = newest.structured_content or {}
            assert [u["id"] for u in page["updates"]] == [moved.id] and page["next_cursor"] is not None

            seen = await client.call_tool("last_seen", {"memory": name, "entity": "mug_1"})
            assert (seen.structured_content or {})["update"]["source"] == "sensor"

            explained = await client.call_tool("explain_update", {"memory": name, "update_id": moved.id})
            assert ExplainOut.model_validate(explained.structured_content).sentences


@pytest.mark.anyio
async def test_domain_errors_are_tool_errors_naming_the_input(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    with running_services(settings) as services:
        async with Client(build_mcp(lambda: services)) as client:
            unknown = await client.call_tool("get_state", {"memory": "no_such_memory"})
            assert unknown.is_error is True and "no_such_memory" in text_of(unknown)
            assert "Traceback" not in text_of(unknown)

            both = await client.call_tool("get_state", {"memory": name, "version": 1, "at": "2020-01-01T00:00:00Z"})
            assert both.is_error is True and "give a version or a time" in text_of(both)

            syntax = await client.call_tool("apply_delta", {"memory": name, "add": ["(on mug_1"]})
            assert syntax.is_error is True and "(on mug_1" in text_of(syntax)

            stale = await client.call_tool(
                "apply_delta", {"memory": name, "add": ["(light_on lamp_1)"], "expected_version": 0}
            )
            assert stale.is_error is True and "VersionConflict" in text_of(stale)

            update = await client.call_tool("explain_update", {"memory": name, "update_id": "nope"})
            assert update.is_error is True and "nope" in text_of(update)

            # a misspelt argument is refused, not dropped: this write would have lost its version check
            misspelt = await client.call_tool(
                "apply_delta", {"memory": name, "add": ["(light_on lamp_1)"], "expected_versoin": 0}
            )
            assert misspelt.is_error is True and "expected_versoin" in text_of(misspelt)
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools if t.input_schema.get("additionalProperties") is not False] == []
            truth = await client.call_tool(
                "apply_delta", {"memory": name, "add": ["(light_on lamp_1)"], "expected_version": True}
            )
            assert truth.is_error is True and "expected_version" in text_of(truth)  # true is no version 1
            for odd in ({"version": True}, {"version": False}, {"version": 1.5}):
                assert (await client.call_tool("get_state", {"memory": name, **odd})).is_error is True
            paged = await client.call_tool("history", {"memory": name, "limit": "2", "cursor": 0})
            assert paged.is_error is False and len((paged.structured_content or {})["updates"]) == 2

            last = await client.call_tool("get_state", {"memory": name, "at": "9999-12-31T23:59:59.999999+00:00"})
            assert last.is_error is False and (last.structured_content or {})["version"] == 1
        assert Operations(services=services).state(name).version == 1  # nothing of it was written


@pytest.mark.anyio
async def test_a_rejected_delta_is_a_result_with_its_reasons_and_a_valid_one_is_applied(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    with running_services(settings) as services:
        async with Client(build_mcp(lambda: services)) as client:
            refused = await client.call_tool("apply_delta", {"memory": name, "add": ["(on mug_1 shelf_1)"]})
            assert refused.is_error is False
            update = UpdateOut.model_validate(refused.structured_content)
            assert update.status == "rejected" and update.issues
            assert any("mug_1" in i.message for i in update.issues)

            applied = await client.call_tool(
                "apply_delta",
                {
                    "memory": name,
                    "remove": ["(on mug_1 table_1)"],
                    "add": ["(on mug_1 shelf_1)"],
                    "expected_version": 1,
                    "input": "tidied up",
                },
            )
            done = UpdateOut.model_validate(applied.structured_content)
            assert (done.status, done.version, done.source, done.input) == ("applied", 2, "api", "tidied up")
            state = await client.call_tool("get_state", {"memory": name})
            facts = (state.structured_content or {})["facts"]
            assert "(on mug_1 shelf_1)" in facts and "(on mug_1 table_1)" not in facts

            undone = await client.call_tool("revert", {"memory": name, "update_id": done.id})
            reverted = UpdateOut.model_validate(undone.structured_content)
            assert reverted.source == "revert" and reverted.meta["reverts"] == done.id

            seen = {
                "room": "kitchen",
                "entities": [
                    {"name": "table_1", "type": "furniture"},
                    {"name": "sink_1", "type": "sink"},
                    {"name": "lamp_1", "type": "light"},
                    {"name": "mug_1", "type": "dish", "relations": [{"predicate": "on", "object": "sink_1"}]},
                ],
            }
            observed = await client.call_tool("observe", {"memory": name, "observation": seen})
            sensed = UpdateOut.model_validate(observed.structured_content)
            assert sensed.source == "sensor" and sensed.status == "applied"
            assert "(on mug_1 sink_1)" in sensed.delta.add
        assert Operations(services=services).state(name).version == 4


@pytest.mark.anyio
async def test_resources_and_prompts(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    with running_services(settings) as services:
        async with Client(build_mcp(lambda: services)) as client:
            assert [str(r.uri) for r in (await client.list_resources()).resources] == ["l3mp://memories"]
            templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
            assert templates == {
                "l3mp://memories/{name}/state",
                "l3mp://memories/{name}/history",
                "l3mp://domains/{name}",
            }

            async def read(uri: str) -> Any:
                content = (await client.read_resource(uri)).contents[0]
                assert isinstance(content, types.TextResourceContents) and content.mime_type == "application/json"
                return json.loads(content.text)

            assert name in [m["name"] for m in await read("l3mp://memories")]
            state = await read(f"l3mp://memories/{name}/state")
            assert state["version"] == 1 and "(on mug_1 table_1)" in state["facts"]
            history = await read(f"l3mp://memories/{name}/history")
            seqs = [u["seq"] for u in history["updates"]]
            assert seqs == sorted(seqs, reverse=True) and history["updates"][0]["source"] == "sensor"  # newest first
            domain = await read("l3mp://domains/example_home")
            assert "(define (domain example_home)" in domain["pddl"] and "on" in domain["predicates"]
            with pytest.raises(MCPError) as missing:
                await client.read_resource("l3mp://memories/no_such_memory/state")
            assert missing.value.error.code == types.INVALID_PARAMS and "no_such_memory" in missing.value.error.message

            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            assert set(prompts) == {"report_a_change", "plan_a_task"}
            assert [a.name for a in prompts["report_a_change"].arguments or []] == ["memory", "text"]
            said = await client.get_prompt("report_a_change", {"memory": name, "text": SAID})
            words = said.messages[0].content
            assert isinstance(words, types.TextContent) and "tool report" in words.text and SAID in words.text
            task = await client.get_prompt("plan_a_task", {"memory": name, "text": "put the mug away"})
            assert isinstance(task.messages[0].content, types.TextContent)
            assert "tool plan" in task.messages[0].content.text


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_malformed_prompt_request_is_invalid_params_naming_what_is_wrong(
    tmp_path: Path, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    with running_services(settings_for(tmp_path)) as services:
        async with Client(build_mcp(lambda: services), mode=mode) as client:
            await assert_malformed_prompt_requests_refused(client)
            # a name that is no string (over HTTP the transport's Mcp-Name header check answers it first)
            nameless_request = RawPromptRequest(params={"name": ["plan_a_task"]})
            with pytest.raises(MCPError) as nameless:
                await client.session.send_request(nameless_request, types.GetPromptResult)
            assert nameless.value.error.code == types.INVALID_PARAMS
            assert "['plan_a_task']" in nameless.value.error.message
    assert errors_logged(caplog) == []


@pytest.mark.anyio
async def test_report_on_the_configured_model_applied_or_rejected_with_reasons(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    model = ScriptedModel([*[NO_REMOVAL] * 4, MOVE])
    with running_services(settings, model) as services:
        async with Client(build_mcp(lambda: services)) as client:  # no sampling capability declared
            wrong = await client.call_tool("report", {"memory": name, "text": "The blue mug is on the hall shelf."})
            assert wrong.is_error is False
            rejected = UpdateOut.model_validate(wrong.structured_content)
            assert rejected.status == "rejected"
            assert any(i.code == "functional" and "mug_1" in i.message for i in rejected.issues)

            result = await client.call_tool("report", {"memory": name, "text": SAID})
            applied = UpdateOut.model_validate(result.structured_content)
            assert (applied.status, applied.source, applied.input) == ("applied", "nl", SAID)
            assert applied.delta.add == ["(on mug_1 shelf_1)"] and applied.meta["state_change"]["model"] == "scripted"

            asked = await client.call_tool("report", {"memory": name, "text": SAID, "use_client_model": True})
            assert asked.is_error is True and "sampling" in text_of(asked)
    assert model.remaining == 0


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_report_on_the_clients_model(tmp_path: Path, mode: str) -> None:
    # the packaged models' choosing reader is configured: the client's model must still write the edits
    settings = settings_for(tmp_path, nl_reader="choose")
    name = surveyed(settings)
    configured = ScriptedModel([])  # any call to the configured model would fail the report
    agent = ClientModel([MOVE])
    with running_services(settings, configured) as services:
        async with Client(build_mcp(lambda: services), mode=mode, sampling_callback=agent) as client:  # type: ignore[arg-type]
            # 2026-07-28: the answer comes in a second round of the call; before it, during the call
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            result = await client.call_tool("report", {"memory": name, "text": SAID})
            assert result.is_error is False, text_of(result)
            update = UpdateOut.model_validate(result.structured_content)
            assert update.status == "applied" and update.delta.add == ["(on mug_1 shelf_1)"]
            assert update.meta["state_change"]["model"] == "mcp-client:mcp/agent-llm"
    assert configured.calls == [] and len(agent.asked) == 1
    params = agent.asked[0]
    assert params.system_prompt is not None and "JSON schema" in params.system_prompt
    first = params.messages[-1].content
    assert isinstance(first, types.TextContent) and SAID in first.text
    with running_services(settings) as services:
        assert "(on mug_1 shelf_1)" in Operations(services=services).state(name).facts


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_clients_model_that_keeps_proposing_a_wrong_edit_gets_a_rejection(tmp_path: Path, mode: str) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    agent = ClientModel([NO_REMOVAL])
    with running_services(settings, ScriptedModel([])) as services:
        async with Client(build_mcp(lambda: services), mode=mode, sampling_callback=agent) as client:  # type: ignore[arg-type]
            result = await client.call_tool("report", {"memory": name, "text": "The blue mug is on the hall shelf."})
            assert result.is_error is False
            update = UpdateOut.model_validate(result.structured_content)
            assert update.status == "rejected"
            assert any(i.code == "functional" and "mug_1" in i.message for i in update.issues)
            history = Operations(services=services).history(name, _newest())
    # the first answer and three re-prompts, each told what was wrong; one rejection recorded, nothing applied
    assert len(agent.asked) == 4
    feedback = agent.asked[-1].messages[-1].content
    assert isinstance(feedback, types.TextContent) and "mug_1" in feedback.text
    statuses = [u.status for u in history.updates]
    assert statuses[0] == "rejected" and statuses.count("rejected") == 1 and "noop" not in statuses


@pytest.mark.anyio
async def test_the_configured_model_when_the_call_or_the_setting_says_so(tmp_path: Path) -> None:
    name = surveyed(settings_for(tmp_path))
    for settings, arguments in (
        (settings_for(tmp_path), {"use_client_model": False}),
        (settings_for(tmp_path, mcp_sampling="never"), {}),
    ):
        agent = ClientModel([MOVE])
        with running_services(settings, ScriptedModel([NO_REMOVAL] * 4)) as services:
            async with Client(build_mcp(lambda: services), sampling_callback=agent) as client:  # type: ignore[arg-type]
                result = await client.call_tool("report", {"memory": name, "text": SAID, **arguments})
                update = UpdateOut.model_validate(result.structured_content)
                assert update.status == "rejected" and update.meta["state_change"]["model"] == "scripted"
        assert agent.asked == []
    with running_services(settings_for(tmp_path, mcp_sampling="never")) as services:
        async with Client(build_mcp(lambda: services), sampling_callback=ClientModel([MOVE])) as client:  # type: ignore[arg-type]
            refused = await client.call_tool("report", {"memory": name, "text": SAID, "use_client_model": True})
            assert refused.is_error is True and "L3MP_MCP_SAMPLING=never" in text_of(refused)


@pytest.mark.anyio
async def test_model_calls_share_the_rate_limit(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, model_rate_per_minute=1)
    name = surveyed(settings)
    with running_services(settings, ScriptedModel([MOVE])) as services:
        async with Client(build_mcp(lambda: services)) as client:
            first = await client.call_tool("report", {"memory": name, "text": SAID})
            assert first.is_error is False
            second = await client.call_tool("report", {"memory": name, "text": SAID})
            assert second.is_error is True and "rate_limited" in text_of(second)


@pytest.mark.anyio
async def test_a_plan_for_a_pddl_goal_changes_nothing(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    with running_services(settings, ScriptedModel([])) as services:
        async with Client(build_mcp(lambda: services), sampling_callback=ClientModel([])) as client:  # type: ignore[arg-type]
            result = await client.call_tool("plan", {"memory": name, "goal": "(on mug_1 shelf_1)"})
            plan = PlanOut.model_validate(result.structured_content)
            assert plan.status == "solved" and any("mug_1" in step for step in plan.plan)
            bad = await client.call_tool("plan", {"memory": name, "goal": "(on mug_1"})
            assert PlanOut.model_validate(bad.structured_content).status == "invalid_goal"
        assert Operations(services=services).state(name).version == 1


@asynccontextmanager
async def _listening(services: Services, uri: str) -> AsyncIterator[tuple[Client, Any]]:
    """A client of the MCP server over ``services``, subscribed to ``uri``'s changes."""
    async with (
        Client(build_mcp(lambda: services)) as client,
        client.listen(resource_subscriptions=[uri]) as subscription,
    ):
        yield client, subscription


@pytest.mark.anyio
async def test_subscribers_hear_of_a_change_in_both_eras(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)
    uri = f"l3mp://memories/{name}/state"
    with running_services(settings) as services:
        ops = Operations(services=services)
        async with _listening(services, uri) as (client, subscription):
            assert subscription.honored.resource_subscriptions == [uri]
            await client.call_tool("apply_delta", {"memory": name, "add": ["(light_on lamp_1)"]})
            with anyio.fail_after(10):
                event = await subscription.__anext__()
            assert event.uri == uri

        heard = anyio.Event()
        uris: list[str] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ResourceUpdatedNotification):
                uris.append(str(message.params.uri))
                heard.set()

        async with Client(build_mcp(lambda: services), mode="legacy", message_handler=on_message) as client:
            with pytest.warns(MCPDeprecationWarning):  # deprecated for listen(), still the 2025 wire
                await client.subscribe_resource(uri)
            # another writer than MCP: the feed is the store's history
            await anyio.to_thread.run_sync(lambda: ops.apply_delta(name, DeltaIn(remove=["(light_on lamp_1)"])))
            with anyio.fail_after(10):
                await heard.wait()
    assert uris == [uri]


@pytest.mark.anyio
async def test_subscribers_hear_that_their_memory_was_deleted_and_made_again(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    name = surveyed(settings)  # its newest update has seq 2; the memory made again has one of seq 1
    uri = f"l3mp://memories/{name}/state"
    with running_services(settings) as services:
        ops = Operations(services=services)
        async with _listening(services, uri) as (_, subscription):
            # as another process deletes it
            await anyio.to_thread.run_sync(services.store.delete_memory, name)
            with anyio.fail_after(10):
                assert (await subscription.__anext__()).uri == uri  # the state it showed is gone
            await anyio.to_thread.run_sync(ops.create_memory, MemoryIn(name=name, domain="example_home"))
            with anyio.fail_after(10):
                assert (await subscription.__anext__()).uri == uri  # another memory's state now


def _newest() -> Any:
    from l3mp.operations.models import HistoryIn

    return HistoryIn(order="newest", limit=10)
