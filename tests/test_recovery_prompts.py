"""Recovery prompts and the recovery path after the gate (docs/recovery.md, "After the gate").

Snapshots (snapshots/test_recovery_prompts/*.txt) are taken from real runs through
`create_art_instance` + `ScriptedProvider`, like every other prompt snapshot: the arg-fill turn as
the model receives it, and the clarification text as the user reads it. The clarification is plain
text, not a model request; it is wrapped in a one-message `PromptRequest` (role `assistant`: the
agent speaking to the user) so that it lives in snapshots/ beside the prompts and carries a token
count like them.

The behaviour tests below check the recovery path as a user would notice it. Tests marked
`xfail(strict=True)` are known gaps: each reason says what should happen instead.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
from syrupy.assertion import SnapshotAssertion

from pes_agent import AgentFinalResponse, EventType, InvalidDecisionError, create_art_instance, tool
from pes_agent.errors import ProviderError
from pes_agent.llm.types import Message, Phase, PromptRequest
from pes_agent.testing import ScriptedProvider, ScriptedReply
from pes_agent.testing.scripted import ScriptedCall
from tests.recovery_tools import RAN, send_email, web_extract, web_search
from tests.replay import start_replay

DUMP_MARKERS = ("type=", "input_value", "ValidationError", "Traceback", "{'loc'", '{"loc"')
"""What a validation or exception dump looks like; a clarification must contain none of it."""

PLACEHOLDER_EXAMPLES = ("...", "<", "{ ", "your value", "appropriate", "TODO", "example.com")
"""Example text a small model copies verbatim; an arg-fill prompt must show none of it."""


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


# --- tools ---------------------------------------------------------------------------------------


@tool(
    name="create_task",
    description="Create a task in the tracker.",
    input_schema={
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "Short title of the task."},
            "due_days": {"type": "integer", "minimum": 1, "description": "Days until the task is due."},
            "priority": {
                "type": "string",
                "enum": ["low", "medium", "high"],
                "description": "How urgent it is.",
            },
            "notify": {"type": "boolean", "default": False, "description": "Notify the assignee."},
        },
        "required": ["title", "due_days", "priority"],
        "additionalProperties": False,
    },
)
def create_task(**args: Any) -> dict[str, Any]:
    RAN.append(("create_task", args))
    return {"id": "T-1", **args}


TOOLS = [create_task, send_email, web_search, web_extract]
ANSWER = "<mainContent>Done.</mainContent>"


# --- scripting helpers ---------------------------------------------------------------------------


def plan(*tools: str) -> str:
    items = [
        {
            "id": f"step_{i}",
            "description": f"use {name}",
            "stepType": "tool",
            "requiredTools": [name],
            "dependencies": [f"step_{i - 1}"] if i > 1 else [],
        }
        for i, name in enumerate(tools, start=1)
    ]
    body = json.dumps({"title": "t", "intent": "i", "plan": "p", "todoList": items})
    return f"---JSON_OUTPUT_START---\n{body}\n---JSON_OUTPUT_END---"


def calls(name: str, arguments: Any, call_id: str = "c1") -> str:
    envelope = {"toolCalls": [{"callId": call_id, "toolName": name, "arguments": arguments}]}
    return "```json\n" + json.dumps(envelope) + "\n```"


def done(text: str = "step done") -> str:
    return "```json\n" + json.dumps({"content": text}) + "\n```"


@dataclass
class Run:
    art: Any
    response: AgentFinalResponse
    provider: ScriptedProvider
    thread: str
    events: list[Any] = field(default_factory=list)

    def of(self, kind: EventType) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.type == kind]

    def phases(self) -> list[str]:
        return [c.phase for c in self.provider.calls]

    def fill_calls(self) -> list[ScriptedCall]:
        return [c for c in self.provider.calls if c.phase == "arg_fill"]

    async def refresh(self) -> None:
        self.events = await self.art.get_observations(self.thread)


async def run(
    query: str, replies: list[Any], *, config: Mapping[str, Any] | None = None, thread: str = "t"
) -> Run:
    provider = ScriptedProvider(replies)
    art = await create_art_instance(
        {"storage": {"type": "memory"}, **(config or {})}, tools=TOOLS, providers={"s": provider}
    )
    response = await art.process(query, thread_id=thread)
    result = Run(art=art, response=response, provider=provider, thread=thread)
    await result.refresh()
    return result


def as_request(call: ScriptedCall) -> PromptRequest:
    """The recorded call as the `PromptRequest` the agent sent (what the snapshot renders)."""
    return PromptRequest(
        phase=cast(Phase, call.phase),
        step_id=call.step_id,
        messages=tuple(Message(role=m["role"], content=m["content"]) for m in call.messages),  # type: ignore[arg-type]
        tools=call.tools,
        response_schema=call.response_schema,
    )


def clarification_request(response: AgentFinalResponse) -> PromptRequest:
    """The clarification text as the user reads it, in the prompt-snapshot format (see module doc)."""
    assert response.status == "needs_input" and response.clarification is not None
    suspension = response.suspension or {}
    return PromptRequest(
        phase=cast(Phase, "clarification"),  # not a model phase: labels the snapshot header only
        step_id=suspension.get("step_id"),
        messages=(Message(role="assistant", content=response.clarification["text"]),),
    )


def fill_user_text(call: ScriptedCall) -> str:
    return call.messages[-1]["content"]


def asked_fields(text: str) -> list[str]:
    """The field names the arg-fill prompt lists (one `- name (type): description` line each,
    between its first line and the user's query; earlier results below may hold `- ` lines too)."""
    block = text.split("\nUser query:")[0]
    return re.findall(r"^- (\w+)[ :(]", block, flags=re.MULTILINE)


def assert_no_placeholder_examples(text: str) -> None:
    for bad in PLACEHOLDER_EXAMPLES:
        assert bad not in text, f"arg-fill prompt shows example text {bad!r}, which a model may copy"


# --- snapshots: the arg-fill prompt --------------------------------------------------------------


async def test_arg_fill_prompt_for_a_missing_string(prompt_snapshot: SnapshotAssertion) -> None:
    """S4: `webSearch({})` in the recorded JWST scenario; call 2 is the arg-fill turn."""
    replay = await start_replay("S4")
    await replay.art.process(replay.query, thread_id=replay.thread_id)
    call = replay.provider.calls[2]
    assert call.phase == "arg_fill" and call.step_id == "step_1" and not call.tools
    text = fill_user_text(call)
    assert asked_fields(text) == ["query"]
    assert "- query (string): The search query." in text
    assert replay.query.split("'")[0] in text  # the user's query is shown
    assert "Earlier results:" in text
    assert "exactly these keys: query" in text and "toolCalls" not in call.messages[0]["content"]
    assert_no_placeholder_examples(text)
    assert as_request(call) == prompt_snapshot


async def test_arg_fill_prompt_for_a_missing_enum(prompt_snapshot: SnapshotAssertion) -> None:
    """`priority` (an enum) is missing and nothing in the query names one of its values."""
    r = await run(
        "Create a task 'write report' due in 3 days",
        [
            plan("create_task"),
            calls("create_task", {"title": "write report", "due_days": 3}),
            '{"priority": "medium"}',
            done(),
            ANSWER,
        ],
    )
    assert RAN == [
        ("create_task", {"title": "write report", "due_days": 3, "notify": False, "priority": "medium"})
    ]
    [call] = r.fill_calls()
    text = fill_user_text(call)
    assert asked_fields(text) == ["priority"]  # exactly the missing field, not title or due_days
    assert '- priority (string): How urgent it is. One of: "low", "medium", "high".' in text
    assert "Create a task 'write report' due in 3 days" in text
    assert "exactly these keys: priority" in text
    assert "tool" not in text.split("Reply with")[1].lower()  # asks for values, never a tool choice
    assert_no_placeholder_examples(text)
    assert as_request(call) == prompt_snapshot


async def test_arg_fill_prompt_shows_earlier_results(prompt_snapshot: SnapshotAssertion) -> None:
    """`urls: []` after a search that returned URLs: the prompt shows those results to take from."""
    r = await run(
        "Search for JWST news, then extract the pages",
        [
            plan("webSearch", "webExtract"),
            calls("webSearch", {"query": "JWST"}),
            done("found two"),
            calls("webExtract", {"urls": []}),
            '{"urls": ["https://news.example.com/a"]}',
            done("ok"),
            ANSWER,
        ],
    )
    assert RAN[1] == ("webExtract", {"urls": ["https://news.example.com/a"]})
    [call] = r.fill_calls()
    text = fill_user_text(call)
    assert asked_fields(text) == ["urls"]
    assert "- urls (array of string): URLs to extract." in text
    assert "https://news.example.com/a" in text and "https://blog.example.org/b" in text
    assert "Search for JWST news, then extract the pages" in text
    assert_no_placeholder_examples(text.replace("news.example.com", "").replace("blog.example.org", ""))
    assert as_request(call) == prompt_snapshot


# --- snapshots: the clarification text -----------------------------------------------------------


def assert_plain_words(text: str) -> None:
    for marker in DUMP_MARKERS:
        assert marker not in text, f"clarification shows a dump marker {marker!r}"


async def test_clarification_for_a_side_effect_target(prompt_snapshot: SnapshotAssertion) -> None:
    """Nobody said who receives the email: the user is asked at once (no arg-fill turn)."""
    r = await run(
        "Email the report to my manager",
        [plan("send_email"), calls("send_email", {"subject": "Report", "body": "Attached."})],
    )
    assert RAN == [] and r.fill_calls() == []
    text = r.response.clarification["text"]  # type: ignore[index]
    assert_plain_words(text)
    assert "`to`" in text and "Email address of the recipient" in text
    assert clarification_request(r.response) == prompt_snapshot


async def test_clarification_for_several_fields_with_allowed_values(
    prompt_snapshot: SnapshotAssertion,
) -> None:
    """Arg-fill could not find `title` or `priority`: the user is asked for both, with the choices."""
    r = await run(
        "Create a task due in 3 days",
        [plan("create_task"), calls("create_task", {"due_days": 3}), '{"title": null, "priority": null}'],
    )
    assert RAN == [] and len(r.fill_calls()) == 1
    assert asked_fields(fill_user_text(r.fill_calls()[0])) == ["title", "priority"]
    text = r.response.clarification["text"]  # type: ignore[index]
    assert_plain_words(text)
    for words in (
        "`title`",
        "Short title of the task",
        "`priority`",
        "How urgent it is",
        "low, medium, high",
    ):
        assert words in text
    assert "due_days" not in text  # only what is missing is asked
    assert clarification_request(r.response) == prompt_snapshot


# --- the recovery path: what holds -----------------------------------------------------------------


def added_user_messages(r: Run, index: int) -> list[str]:
    """User messages the model received in call ``index`` that the previous call did not have."""
    before, now = r.provider.calls[index - 1], r.provider.calls[index]
    assert now.messages[: len(before.messages)] == before.messages, "the conversation was rewritten"
    return [m["content"] for m in now.messages[len(before.messages) :] if m["role"] == "user"]


async def test_one_corrective_message_for_a_constraint_violation() -> None:
    """REASK: the gate's message alone (no arg-fill turn, no enforcement stacked on it); never clamped."""
    r = await run(
        "Task 'x' due today, high",
        [
            plan("create_task"),
            calls("create_task", {"title": "x", "due_days": 0, "priority": "high"}),
            calls("create_task", {"title": "x", "due_days": 1, "priority": "high"}),
            done(),
            ANSWER,
        ],
    )
    # valid: runs as sent, with the default of `notify` (rule 1)
    assert RAN == [("create_task", {"title": "x", "due_days": 1, "priority": "high", "notify": False})]
    assert r.phases() == ["planning", "execution", "execution", "execution", "synthesis"]
    [message] = added_user_messages(r, 2)
    assert "due_days" in message and "not run" in message
    assert "This step is not done" not in message  # no enforcement voice on top of the gate's
    assert [x["fields"] for x in r.of(EventType.REASK)] == [["due_days"]]


async def test_refused_tool_gets_one_message_listing_only_the_step_tools() -> None:
    r = await run(
        "Search for JWST",
        [
            plan("webSearch"),
            calls("searchTheWeb", {"query": "JWST"}),
            calls("webSearch", {"query": "JWST"}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    [message] = added_user_messages(r, 2)
    assert "webSearch" in message
    for other in ("create_task", "send_email", "webExtract"):
        assert other not in message


@pytest.mark.parametrize("arg_fill", [{"enabled": False}, {"maxAttempts": 0}], ids=["disabled", "no_budget"])
async def test_without_arg_fill_the_gate_message_is_the_one_voice(arg_fill: dict[str, Any]) -> None:
    r = await run(
        "Create a task 'write report' due in 3 days",
        [
            plan("create_task"),
            calls("create_task", {"title": "write report", "due_days": 3}),
            calls("create_task", {"title": "write report", "due_days": 3, "priority": "low"}),
            done(),
            ANSWER,
        ],
        config={"argFill": arg_fill},
    )
    assert "arg_fill" not in r.phases() and r.of(EventType.ARG_FILL_ATTEMPT) == []
    [message] = added_user_messages(r, 2)
    assert "`priority`" in message and "low, medium, high" in message
    assert RAN == [
        ("create_task", {"title": "write report", "due_days": 3, "priority": "low", "notify": False})
    ]


async def test_arg_fill_budget_is_per_tool_per_item_and_resets_on_success() -> None:
    """maxAttempts 1, two calls of one tool in one item each missing `title`: each gets its turn."""
    both = (
        "```json\n"
        + json.dumps(
            {
                "toolCalls": [
                    {
                        "callId": "a",
                        "toolName": "create_task",
                        "arguments": {"due_days": 3, "priority": "low"},
                    },
                    {
                        "callId": "b",
                        "toolName": "create_task",
                        "arguments": {"due_days": 4, "priority": "high"},
                    },
                ]
            }
        )
        + "\n```"
    )
    r = await run(
        "Create the tasks 'one' (low, 3 days) and 'two' (high, 4 days)",
        [
            plan("create_task"),
            both,
            '{"title": "one"}',
            '{"title": "two"}',
            done(),
            ANSWER,
        ],
    )
    assert [args["title"] for _, args in RAN] == ["one", "two"]
    assert r.phases().count("arg_fill") == 2
    assert [x["fields"] for x in r.of(EventType.ARG_FILL_SUCCESS)] == [["title"], ["title"]]


async def test_arg_fill_timeout_from_config_is_honoured() -> None:
    """`argFill.timeoutS`: a model that never answers the arg-fill turn ends in a clarification."""
    never = asyncio.Event()

    async def hang(_: ScriptedCall) -> str:
        await never.wait()  # never set: only the arg-fill timeout can end this call
        return "{}"

    r = await asyncio.wait_for(  # a safety net so a regression fails instead of hanging the suite
        run(
            "Create a task 'write report' due in 3 days",
            [
                plan("create_task"),
                calls("create_task", {"title": "write report", "due_days": 3}),
                hang,
            ],
            config={"argFill": {"timeoutS": 0.01}},
        ),
        timeout=60,
    )
    assert RAN == [] and r.response.status == "needs_input"
    [failure] = r.of(EventType.ARG_FILL_FAILURE)
    assert failure["fields"] == ["priority"] and "0.01 s" in failure["reason"]


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(lambda: ProviderError("overloaded", provider="s"), id="provider_error"),
        pytest.param(lambda: ScriptedReply(text='{"priority": "hig', finish_reason="length"), id="cut_off"),
    ],
)
async def test_arg_fill_that_fails_becomes_a_clarification_without_an_exception(reply: Any) -> None:
    r = await run(
        "Create a task 'write report' due in 3 days",
        [
            plan("create_task"),
            calls("create_task", {"title": "write report", "due_days": 3}),
            reply(),
        ],
    )
    assert RAN == [] and r.response.status == "needs_input"
    assert [f["name"] for f in r.response.clarification["fields"]] == ["priority"]  # type: ignore[index]
    assert len(r.of(EventType.ARG_FILL_FAILURE)) == 1 and len(r.of(EventType.CLARIFICATION)) == 1


async def test_max_consecutive_failures_per_tool_from_config() -> None:
    bad = calls("create_task", {"title": "x", "due_days": 0, "priority": "high"})
    r = await run(
        "Task x",
        [plan("create_task"), bad, bad, ANSWER],
        config={"gate": {"maxConsecutiveFailuresPerTool": 2}},
    )
    assert RAN == [] and r.response.status == "partial"
    assert r.phases() == ["planning", "execution", "execution", "synthesis"]
    item = r.response.todo_list[0]
    assert (
        item.status.value == "failed"
        and "create_task" in (item.error or "")
        and "2 times" in (item.error or "")
    )


async def test_a_call_that_runs_resets_the_consecutive_failure_count() -> None:
    bad = calls("create_task", {"title": "x", "due_days": 0, "priority": "high"})
    good = calls("create_task", {"title": "x", "due_days": 1, "priority": "high"}, call_id="c2")
    r = await run(
        "Task x",
        [plan("create_task"), bad, good, bad, done(), ANSWER],
        config={"gate": {"maxConsecutiveFailuresPerTool": 2}},
    )
    assert len(RAN) == 1 and r.response.status == "success"


async def _clarified_priority(thread: str = "t", extra: list[Any] | None = None) -> Run:
    return await run(
        "Create a task 'write report' due in 3 days",
        [
            plan("create_task"),
            calls("create_task", {"title": "write report", "due_days": 3}),
            '{"priority": null}',
            *(extra or [done("created"), ANSWER]),
        ],
        thread=thread,
    )


async def test_resume_with_values_continues_the_same_item_and_call() -> None:
    r = await _clarified_priority()
    paused_turn = r.provider.calls[1]
    assert r.response.suspension["kind"] == "clarification"  # type: ignore[index]
    final = await r.art.resume("t", r.response.suspension["id"], {"values": {"priority": "high"}})  # type: ignore[index]
    assert final.status == "success"
    assert RAN == [
        ("create_task", {"title": "write report", "due_days": 3, "notify": False, "priority": "high"})
    ]
    assert r.phases()[3:] == ["execution", "synthesis"]  # no planning, refinement or arg-fill call
    next_turn = r.provider.calls[3]
    assert next_turn.step_id == "step_1"
    assert next_turn.messages[: len(paused_turn.messages)] == paused_turn.messages  # same conversation
    await r.refresh()
    [ran] = [x for x in r.of(EventType.TOOL_EXECUTION) if x["status"] == "success"]
    assert ran["call_id"] == "c1"
    item = final.todo_list[0]
    assert item.id == "step_1" and [t.call_id for t in item.tool_results] == ["c1"]


async def test_next_process_answers_the_clarification_for_the_same_item_and_call() -> None:
    r = await run(
        "Email the report to my manager",
        [
            plan("send_email"),
            calls("send_email", {"subject": "Report", "body": "Attached."}),
            done("sent"),
            ANSWER,
        ],
        thread="mail",
    )
    final = await r.art.process("boss@corp.io", thread_id="mail")
    assert final.status == "success"
    assert RAN == [("send_email", {"to": "boss@corp.io", "subject": "Report", "body": "Attached."})]
    assert r.phases()[2:] == ["execution", "synthesis"]  # the answer is no new request: no refinement
    await r.refresh()
    [ran] = [x for x in r.of(EventType.TOOL_EXECUTION) if x["status"] == "success"]
    assert ran["call_id"] == "c1" and final.todo_list[0].tool_results[0].call_id == "c1"


RECOVERY_EVENTS = (
    EventType.ARG_REPAIR,
    EventType.ARG_FILL_ATTEMPT,
    EventType.ARG_FILL_SUCCESS,
    EventType.ARG_FILL_FAILURE,
    EventType.CLARIFICATION,
    EventType.REASK,
)


async def test_recovery_events_carry_thread_trace_and_step_ids() -> None:
    r = await _clarified_priority()
    first_trace = r.response.trace_id
    final = await r.art.resume("t", r.response.suspension["id"], {"values": {"priority": "HIGH"}})  # type: ignore[index]
    await r.refresh()
    seen = [e for e in r.events if e.type in RECOVERY_EVENTS]
    assert {e.type for e in seen} >= {
        EventType.ARG_REPAIR,
        EventType.ARG_FILL_ATTEMPT,
        EventType.ARG_FILL_FAILURE,
        EventType.CLARIFICATION,
    }
    for event in seen:
        assert event.thread_id == "t" and event.step_id == "step_1", event
        assert event.trace_id in (first_trace, final.trace_id), event
    assert {e.trace_id for e in seen if e.type is EventType.CLARIFICATION} == {first_trace}
    assert any(
        e.trace_id == final.trace_id and e.data["to"] == "high"
        for e in seen
        if e.type is EventType.ARG_REPAIR
    )


async def test_usage_counts_repairs_and_arg_fills() -> None:
    r = await run(
        "Run the task 'write report' due in 3 days",
        [
            plan("create_task"),
            calls("create_task", {"Title": "write report", "dueDays": "3"}),
            '{"priority": "low"}',
            done(),
            ANSWER,
        ],
    )
    usage = r.response.usage
    assert usage.arg_repairs == len(r.of(EventType.ARG_REPAIR)) >= 3  # two keys, one coercion, a default
    assert (usage.arg_fill_attempts, usage.arg_fill_successes, usage.arg_fill_failures) == (1, 1, 0)
    assert usage.phases["arg_fill"].llm_calls == 1
    assert usage.to_dict()["arg_fill"] == {"attempts": 1, "successes": 1, "failures": 0}
    failed = await _clarified_priority(thread="u")
    assert (failed.response.usage.arg_fill_attempts, failed.response.usage.arg_fill_failures) == (1, 1)


# --- the recovery path: gaps found in review, now fixed (each test pins the fix) ------------------


async def test_arg_fill_max_attempts_allows_a_second_turn() -> None:
    r = await run(
        "Create a task 'write report' due in 3 days",
        [
            plan("create_task"),
            calls("create_task", {"title": "write report", "due_days": 3}),
            '{"priority": "urgent"}',
            '{"priority": "medium"}',
            done(),
            ANSWER,
        ],
        config={"argFill": {"maxAttempts": 2}},
    )
    assert r.phases().count("arg_fill") == 2
    assert RAN == [
        ("create_task", {"title": "write report", "due_days": 3, "notify": False, "priority": "medium"})
    ]


async def test_resume_with_an_invalid_value_is_refused_to_the_user_not_sent_to_the_model() -> None:
    """The gate refuses the user's value: the decision is refused naming the field (issue 27) and the
    clarification stands, never an arg-fill turn over the user's answer; a valid value then runs."""
    r = await _clarified_priority()
    suspension_id = r.response.suspension["id"]  # type: ignore[index]
    with pytest.raises(InvalidDecisionError, match="is not one of the values the tool allows") as refused:
        await r.art.resume("t", suspension_id, {"values": {"priority": "urgent"}})
    assert refused.value.field == "values.priority" and '"high"' in str(refused.value)
    assert RAN == []  # never run with a value the user did not give
    assert (
        r.phases().count("arg_fill") == 1
    )  # only the first turn; the user's answer is not re-asked of the model
    assert (await r.art.check_for_suspended_state("t"))["suspension_id"] == suspension_id  # type: ignore[index]
    final = await r.art.resume("t", suspension_id, {"values": {"priority": "high"}})
    assert final.status == "success" and RAN[0][1]["priority"] == "high"


async def test_value_the_user_gave_is_never_a_placeholder() -> None:
    r = await run(
        "Email the report to my manager",
        [
            plan("send_email"),
            calls("send_email", {"subject": "Report", "body": "Attached."}),
            done("sent"),
            ANSWER,
        ],
        thread="mail",
    )
    final = await r.art.resume("mail", r.response.suspension["id"], {"values": {"to": "boss@example.com"}})  # type: ignore[index]
    assert RAN == [("send_email", {"to": "boss@example.com", "subject": "Report", "body": "Attached."})]
    assert final.status == "success"


async def test_target_clarification_asks_the_user_only_for_the_target() -> None:
    r = await run(
        "Email the weekly report to my manager",
        [
            plan("send_email"),
            calls("send_email", {}),
            '{"subject": "Weekly report", "body": "Here is the weekly '
            'report."}',  # should arg-fill come first
        ],
        thread="mail",
    )
    assert RAN == [] and r.response.status == "needs_input"
    assert [f["name"] for f in r.response.clarification["fields"]] == ["to"]  # type: ignore[index]


async def test_missing_target_present_in_the_query_is_arg_filled() -> None:
    r = await run(
        "Email the report to boss@corp.io",
        [
            plan("send_email"),
            calls("send_email", {"subject": "Report", "body": "Attached."}),
            '{"to": "boss@corp.io"}',
            done("sent"),
            ANSWER,
        ],
        thread="mail",
    )
    assert r.response.status == "success" and r.phases().count("arg_fill") == 1
    assert RAN == [("send_email", {"subject": "Report", "body": "Attached.", "to": "boss@corp.io"})]


def faithful_fill(field_name: str, value: Any, evidence: str) -> Any:
    """A model that fills ``field_name`` only when ``evidence`` is in its prompt, as the prompt asks."""

    def reply(call: ScriptedCall) -> str:
        return json.dumps({field_name: value if evidence in call.text else None})

    return reply


async def test_answer_in_words_is_shown_to_the_arg_fill_turn() -> None:
    r = await _clarified_priority(
        extra=[faithful_fill("priority", "high", "make it high please"), done(), ANSWER]
    )
    final = await r.art.process("make it high please", thread_id="t")
    assert final.status == "success"
    assert RAN == [
        ("create_task", {"title": "write report", "due_days": 3, "notify": False, "priority": "high"})
    ]


def one_step_with(*tools: str) -> str:
    item = {
        "id": "step_1",
        "description": "do it",
        "stepType": "tool",
        "requiredTools": list(tools),
        "dependencies": [],
    }
    body = json.dumps({"title": "t", "intent": "i", "plan": "p", "todoList": [item]})
    return f"---JSON_OUTPUT_START---\n{body}\n---JSON_OUTPUT_END---"


async def test_results_of_calls_before_the_paused_one_reach_the_model_after_the_answer() -> None:
    both = (
        "```json\n"
        + json.dumps(
            {
                "toolCalls": [
                    {"callId": "a", "toolName": "webSearch", "arguments": {"query": "JWST"}},
                    {
                        "callId": "b",
                        "toolName": "send_email",
                        "arguments": {"subject": "News", "body": "See the results."},
                    },
                ]
            }
        )
        + "\n```"
    )
    r = await run(
        "Search JWST news and email them to my manager",
        [one_step_with("webSearch", "send_email"), both, done(), ANSWER],
        thread="x",
    )
    assert r.response.status == "needs_input" and RAN == [("webSearch", {"query": "JWST"})]
    final = await r.art.resume("x", r.response.suspension["id"], {"values": {"to": "boss@corp.io"}})  # type: ignore[index]
    assert final.status == "success" and len(RAN) == 2
    after = r.provider.calls[2]
    assert after.phase == "execution" and "https://news.example.com/a" in after.text
