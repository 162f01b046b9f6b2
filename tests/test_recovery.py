"""Failure classes F1–F15 of docs/recovery.md through the public API: each test names the outcome word,
the exact arguments the tool ran with (or that it never ran), the extra model calls and the events."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from pes_agent import AgentFinalResponse, EventType, InvalidDecisionError, create_art_instance, tool
from pes_agent.testing import ScriptedProvider, ScriptedReply
from tests.recovery_tools import RAN, send_email, web_extract, web_search


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


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
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels."},
        },
        "required": ["title", "due_days", "priority"],
        "additionalProperties": False,
    },
)
def create_task(**args: Any) -> dict[str, Any]:
    RAN.append(("create_task", args))
    return {"id": "T-1", **args}


@tool(
    name="run_code",
    description="Run a snippet, or print the previous output.",
    input_schema={
        "type": "object",
        "properties": {
            "runtime": {
                "type": "string",
                "enum": ["python", "bash", "output"],
                "description": "Where to run.",
            },
            "code": {"type": "string", "description": "The code to run."},
        },
        "required": ["runtime"],
        "if": {"properties": {"runtime": {"not": {"const": "output"}}}},
        "then": {"required": ["code"]},
        "additionalProperties": False,
    },
    aliases={"language": "runtime", "command": "code"},
    value_aliases={"runtime": {"py": "python", "shell": "bash"}},
)
def run_code(**args: Any) -> dict[str, Any]:
    RAN.append(("run_code", args))
    return {"stdout": "1"}


@tool(
    name="chart",
    description="Plot a metric.",
    input_schema={
        "type": "object",
        "properties": {
            "metric": {
                "type": "string",
                "enum": ["revenue", "profit"],
                "x-semantic": True,
                "description": "Which metric to plot.",
            }
        },
        "required": ["metric"],
        "additionalProperties": False,
    },
)
def chart(**args: Any) -> dict[str, Any]:
    RAN.append(("chart", args))
    return {"ok": True}


TOOLS = [create_task, run_code, send_email, web_search, web_extract, chart]
ANSWER = "<mainContent>Done.</mainContent>"


def plan(*steps: tuple[str, str]) -> str:
    items = []
    for i, (tool_name, desc) in enumerate(steps, start=1):
        items.append(
            {
                "id": f"step_{i}",
                "description": desc,
                "stepType": "tool",
                "requiredTools": [tool_name],
                "dependencies": [f"step_{i - 1}"] if i > 1 else [],
            }
        )
    return (
        "---JSON_OUTPUT_START---\n"
        + json.dumps({"title": "t", "intent": "i", "plan": "p", "todoList": items})
        + "\n---JSON_OUTPUT_END---"
    )


def calls(name: str, arguments: Any) -> str:
    return (
        "```json\n"
        + json.dumps({"toolCalls": [{"callId": "c1", "toolName": name, "arguments": arguments}]})
        + "\n```"
    )


def done(text: str = "step done") -> str:
    return "```json\n" + json.dumps({"content": text}) + "\n```"


@dataclass
class Run:
    response: AgentFinalResponse
    provider: ScriptedProvider
    events: list[Any] = field(default_factory=list)

    def phases(self) -> list[str]:
        return [c.phase for c in self.provider.calls]

    def of(self, kind: EventType) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.type == kind]

    def extra_calls(self) -> int:
        """Model calls beyond plan + first execution turn + closing turn + synthesis."""
        return len(self.provider.calls) - 4


async def run(
    query: str, replies: list[Any], *, config: dict[str, Any] | None = None, thread: str = "t"
) -> Run:
    provider = ScriptedProvider(replies)
    art = await create_art_instance(
        {"storage": {"type": "memory"}, **(config or {})}, tools=TOOLS, providers={"s": provider}
    )
    response = await art.process(query, thread_id=thread)
    events = await art.get_observations(thread)
    result = Run(response=response, provider=provider, events=events)
    result.art = art  # type: ignore[attr-defined]
    return result


def one_step(tool_name: str) -> str:
    return plan((tool_name, f"use {tool_name}"))


# --- EXECUTE / REPAIR_EXECUTE --------------------------------------------------------------------


async def test_valid_call_executes_with_no_extra_call() -> None:
    r = await run(
        "Search for JWST", [one_step("webSearch"), calls("webSearch", {"query": "JWST"}), done(), ANSWER]
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    assert r.extra_calls() == 0 and r.of(EventType.ARG_REPAIR) == []


async def test_rule1_valid_call_runs_with_its_defaults_recorded_everywhere() -> None:
    """ "Rules made exact" 1: what runs, the journal, the events and the results hold the complete set."""
    r = await run(
        "Task x in 2 days, high",
        [
            one_step("create_task"),
            calls("create_task", {"title": "x", "due_days": 2, "priority": "high"}),
            done(),
            ANSWER,
        ],
    )
    complete = {"title": "x", "due_days": 2, "priority": "high", "notify": False}
    assert RAN == [("create_task", complete)] and r.extra_calls() == 0
    assert r.of(EventType.ARG_REPAIR) == [
        {
            "call_id": "c1",
            "tool_name": "create_task",
            "field": "notify",
            "from": None,
            "to": False,
            "rule": "default",
            "kind": "safe",
        },
    ]
    assert [x["arguments"] for x in r.of(EventType.TOOL_EXECUTION)] == [complete]
    assert r.response.todo_list[0].tool_results[0].arguments == complete
    journal = await r.art.store.calls("t")  # type: ignore[attr-defined]
    assert [e.arguments for e in journal] == [complete]
    assert r.response.usage.arg_repairs == 1


async def test_f3_wrong_argument_names_are_repaired_by_declared_aliases() -> None:
    r = await run(
        "Run print(1) in python",
        [
            one_step("run_code"),
            calls("run_code", {"language": "python", "command": "print(1)"}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("run_code", {"runtime": "python", "code": "print(1)"})]
    repairs = r.of(EventType.ARG_REPAIR)
    assert {x["field"] for x in repairs} >= {"runtime", "code"}
    assert r.extra_calls() == 0
    assert r.response.usage.arg_repairs == len(repairs)


async def test_alias_and_canonical_both_present_canonical_wins() -> None:
    await run(
        "Run it",
        [
            one_step("run_code"),
            calls("run_code", {"runtime": "bash", "language": "python", "code": "ls"}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("run_code", {"runtime": "bash", "code": "ls"})]


@pytest.mark.parametrize(("sent", "expected"), [("Python", "python"), ("py", "python"), ("SHELL", "bash")])
async def test_f4_enum_in_other_case_or_words(sent: str, expected: str) -> None:
    r = await run(
        "Run ls", [one_step("run_code"), calls("run_code", {"runtime": sent, "code": "ls"}), done(), ANSWER]
    )
    assert RAN == [("run_code", {"runtime": expected, "code": "ls"})]
    assert any(
        x["field"] == "runtime" and x["from"] == sent and x["to"] == expected
        for x in r.of(EventType.ARG_REPAIR)
    )


async def test_f5_lossless_coercions() -> None:
    await run(
        "Task: write report, 10 days, high priority",
        [
            one_step("create_task"),
            calls(
                "create_task",
                {
                    "title": "write report",
                    "due_days": "10",
                    "priority": "high",
                    "notify": "false",
                    "tags": "urgent",
                },
            ),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [
        (
            "create_task",
            {
                "title": "write report",
                "due_days": 10,
                "priority": "high",
                "notify": False,
                "tags": ["urgent"],
            },
        )
    ]


async def test_f13_garbage_keys_are_stripped_not_the_call() -> None:
    r = await run(
        "Search for JWST",
        [
            one_step("webSearch"),
            calls("webSearch", {"query": "JWST", "TOOL_NAME": "webSearch", "arg1": 1}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    assert {x["field"] for x in r.of(EventType.ARG_REPAIR)} == {"TOOL_NAME", "arg1"}


async def test_f10_tool_name_variant_is_matched_among_allowed_tools() -> None:
    r = await run(
        "Search for JWST", [one_step("webSearch"), calls("web_search", {"query": "JWST"}), done(), ANSWER]
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    assert r.extra_calls() == 0


async def test_f7_fuzzy_domain_value_is_a_semantic_repair() -> None:
    r = await run(
        "Chart the revenue total",
        [one_step("chart"), calls("chart", {"metric": "revenue_total"}), done(), ANSWER],
    )
    assert RAN == [("chart", {"metric": "revenue"})]
    kinds = {x["kind"] for x in r.of(EventType.ARG_REPAIR) if x["field"] == "metric"}
    assert kinds == {"semantic"}


async def test_f9_reference_to_a_field_resolves() -> None:
    await run(
        "Search then extract",
        [
            plan(("webSearch", "search"), ("webExtract", "extract")),
            calls("webSearch", {"query": "JWST"}),
            done("found two"),
            calls("webExtract", {"urls": ["$step_1.results[0].url", "$step_1.results[1].url"]}),
            done("ok"),
            ANSWER,
        ],
    )
    assert RAN[1] == ("webExtract", {"urls": ["https://news.example.com/a", "https://blog.example.org/b"]})


async def test_placeholder_host_given_by_the_user_runs() -> None:
    await run(
        "Extract https://example.com please",
        [
            one_step("webExtract"),
            calls("webExtract", {"urls": ["https://example.com"]}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("webExtract", {"urls": ["https://example.com"]})]


async def test_f11_malformed_json_is_repaired_when_complete() -> None:
    reply = (
        "Sure! ```json\n{'toolCalls': [{'toolName': 'webSearch', 'arguments': {'query': 'JWST',},},],}\n```"
    )
    await run("Search for JWST", [one_step("webSearch"), reply, done(), ANSWER])
    assert RAN == [("webSearch", {"query": "JWST"})]


# --- ARG_FILL -------------------------------------------------------------------------------------


async def test_f1_missing_required_enum_is_arg_filled_never_first_value() -> None:
    r = await run(
        "Create a task 'write report' due in 3 days",
        [
            one_step("create_task"),
            calls("create_task", {"title": "write report", "due_days": 3}),
            '{"priority": "medium"}',
            done(),
            ANSWER,
        ],
    )
    assert RAN == [
        ("create_task", {"title": "write report", "due_days": 3, "notify": False, "priority": "medium"})
    ]
    assert r.phases().count("arg_fill") == 1 and r.extra_calls() == 1
    fill_call = next(c for c in r.provider.calls if c.phase == "arg_fill")
    assert (
        "priority" in fill_call.text
        and "low" in fill_call.text
        and "title" not in fill_call.messages[1]["content"].split("missing values for:")[1].split("\n")[0]
    )
    assert [x["fields"] for x in r.of(EventType.ARG_FILL_ATTEMPT)] == [["priority"]]
    assert r.of(EventType.ARG_FILL_SUCCESS)[0]["values"] == {"priority": "medium"}
    assert r.response.usage.arg_fill_attempts == 1 and r.response.usage.arg_fill_successes == 1


async def test_rule2_tagged_arg_fill_reply_passes_the_gate_like_any_value() -> None:
    r = await run(
        "Create a task 'write report'",
        [
            one_step("create_task"),
            calls("create_task", {"title": "write report"}),
            "I cannot do JSON well, so: <due_days>5</due_days> and <priority>High</priority>. Thanks!",
            done(),
            ANSWER,
        ],
    )
    assert RAN == [
        ("create_task", {"title": "write report", "notify": False, "due_days": 5, "priority": "high"})
    ]
    assert r.phases().count("arg_fill") == 1
    kinds = [e.type for e in r.events if e.type in (EventType.ARG_FILL_ATTEMPT, EventType.ARG_FILL_SUCCESS)]
    assert kinds == [EventType.ARG_FILL_ATTEMPT, EventType.ARG_FILL_SUCCESS]
    repairs = {(x["field"], x["from"], x["to"], x["rule"]) for x in r.of(EventType.ARG_REPAIR)}
    assert {("due_days", "5", 5, "coerce_int"), ("priority", "High", "high", "enum_case")} <= repairs


async def test_missing_enum_grounded_in_the_query_is_filled_deterministically() -> None:
    r = await run(
        "Create a high priority task 'write report' due in 3 days",
        [
            one_step("create_task"),
            calls("create_task", {"title": "write report", "due_days": 3}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [
        ("create_task", {"title": "write report", "due_days": 3, "notify": False, "priority": "high"})
    ]
    assert r.extra_calls() == 0
    assert any(x["field"] == "priority" and x["kind"] == "semantic" for x in r.of(EventType.ARG_REPAIR))


async def test_f2_conditional_requirement_after_normalisation() -> None:
    r = await run(
        "Run something",
        [
            one_step("run_code"),
            calls("run_code", {"runtime": "Python"}),
            '{"code": "print(2)"}',
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("run_code", {"runtime": "python", "code": "print(2)"})]
    assert r.of(EventType.ARG_FILL_ATTEMPT)[0]["fields"] == ["code"]
    RAN.clear()
    r = await run(
        "Show the output", [one_step("run_code"), calls("run_code", {"runtime": "output"}), done(), ANSWER]
    )
    assert RAN == [("run_code", {"runtime": "output"})] and r.extra_calls() == 0


async def test_f8_empty_list_after_urls_were_found_is_filled_from_results() -> None:
    r = await run(
        "Search then extract",
        [
            plan(("webSearch", "search"), ("webExtract", "extract")),
            calls("webSearch", {"query": "JWST"}),
            done("found two"),
            calls("webExtract", {"urls": []}),
            calls(
                "webExtract", {"urls": ["https://news.example.com/a"]}
            ),  # an envelope answers the fill turn
            done("ok"),
            ANSWER,
        ],
    )
    assert RAN == [("webSearch", {"query": "JWST"}), ("webExtract", {"urls": ["https://news.example.com/a"]})]
    assert r.phases().count("arg_fill") == 1
    assert r.of(EventType.ARG_FILL_SUCCESS)[0]["fields"] == ["urls"]


async def test_f8_invented_example_url_is_a_placeholder() -> None:
    r = await run(
        "Extract the page I talked about",
        [
            one_step("webExtract"),
            calls("webExtract", {"urls": ["https://example.com/page"]}),
            '{"urls": null}',
        ],
    )
    assert RAN == []
    assert r.response.status == "needs_input"


# --- REASK ----------------------------------------------------------------------------------------


async def test_f6_constraint_violation_is_never_clamped() -> None:
    r = await run(
        "Task 'x', due today, high",
        [
            one_step("create_task"),
            calls("create_task", {"title": "x", "due_days": 0, "priority": "high"}),
            calls("create_task", {"title": "x", "due_days": 1, "priority": "high", "notify": False}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("create_task", {"title": "x", "due_days": 1, "priority": "high", "notify": False})]
    reask = r.provider.calls[2]
    assert reask.phase == "execution" and "due_days" in reask.messages[-1]["content"]
    assert [x["fields"] for x in r.of(EventType.REASK)] == [["due_days"]]


async def test_f5_true_is_never_an_integer() -> None:
    r = await run(
        "Task 'x' high",
        [
            one_step("create_task"),
            calls("create_task", {"title": "x", "due_days": True, "priority": "high"}),
            calls("create_task", {"title": "x", "due_days": 2, "priority": "high"}),
            done(),
            ANSWER,
        ],
    )
    # valid: runs as sent, with the default of `notify` (rule 1)
    assert RAN == [("create_task", {"title": "x", "due_days": 2, "priority": "high", "notify": False})]
    assert r.of(EventType.REASK)


async def test_invalid_optional_value_is_not_replaced_by_its_default() -> None:
    r = await run(
        "Task 'x' in 2 days, high",
        [
            one_step("create_task"),
            calls("create_task", {"title": "x", "due_days": 2, "priority": "high", "notify": "sometimes"}),
            calls("create_task", {"title": "x", "due_days": 2, "priority": "high"}),
            done(),
            ANSWER,
        ],
    )
    # the second call left `notify` out: it gets the default; the first, which sent a bad one, never ran
    assert RAN == [("create_task", {"title": "x", "due_days": 2, "priority": "high", "notify": False})]
    assert any("notify" in x["fields"] for x in r.of(EventType.REASK))


async def test_false_string_never_becomes_true() -> None:
    await run(
        "Task 'x' in 2 days, high, no notification",
        [
            one_step("create_task"),
            calls("create_task", {"title": "x", "due_days": 2, "priority": "high", "notify": "False"}),
            done(),
            ANSWER,
        ],
    )
    assert RAN[0][1]["notify"] is False


async def test_f9_unresolved_reference_is_reasked_with_existing_paths() -> None:
    r = await run(
        "Search then extract",
        [
            plan(("webSearch", "search"), ("webExtract", "extract")),
            calls("webSearch", {"query": "JWST"}),
            done("found two"),
            calls("webExtract", {"urls": ["$step_1.items[0].link"]}),
            calls("webExtract", {"urls": ["https://news.example.com/a"]}),
            done("ok"),
            ANSWER,
        ],
    )
    assert RAN[1] == ("webExtract", {"urls": ["https://news.example.com/a"]})
    assert r.phases().count("arg_fill") == 0
    corrective = r.provider.calls[4].messages[-1]["content"]
    assert "step_1" in corrective and "results" in corrective


# --- REFUSE_TOOL / REGENERATE / FINISH / CLARIFY ---------------------------------------------------


async def test_f10_unknown_tool_is_refused_listing_only_the_allowed_tools() -> None:
    r = await run(
        "Search for JWST",
        [
            one_step("webSearch"),
            calls("searchTheWeb", {"query": "JWST"}),
            calls("webSearch", {"query": "JWST"}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    turn = r.provider.calls[2].messages[-1]["content"]
    assert "searchTheWeb" in turn and "webSearch" in turn
    for other in ("create_task", "run_code", "send_email", "webExtract", "chart"):
        assert other not in turn
    refused = [x for x in r.of(EventType.TOOL_EXECUTION) if x["status"] == "refused"]
    assert [x["tool_name"] for x in refused] == ["searchTheWeb"]


async def test_f10_allowed_elsewhere_but_not_in_this_step_is_refused() -> None:
    await run(
        "Search for JWST",
        [
            one_step("webSearch"),
            calls("send_email", {"to": "a@b.c", "subject": "s", "body": "b"}),
            calls("webSearch", {"query": "JWST"}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("webSearch", {"query": "JWST"})]


async def test_f12_truncated_reply_never_runs() -> None:
    cut = ScriptedReply(
        text='```json\n{"toolCalls": [{"toolName": "webSearch", "arguments": {"query": "JW',
        finish_reason="length",
    )
    r = await run(
        "Search for JWST", [one_step("webSearch"), cut, calls("webSearch", {"query": "JWST"}), done(), ANSWER]
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    assert "truncated" in r.provider.calls[2].messages[-1]["content"]
    assert any(x["code"] == "truncation_detected" for x in r.of(EventType.PARSE_WARNING))


async def test_rule5_truncated_reply_says_so_names_the_tool_and_asks_for_chunks() -> None:
    r = await run(
        "Search for JWST", [one_step("webSearch"), CUT, calls("webSearch", {"query": "JWST"}), done(), ANSWER]
    )
    note = r.provider.calls[2].messages[-1]["content"]
    for words in ("truncated", "shorter", "smaller chunks", "several calls", "`webSearch`"):
        assert words in note
    assert RAN == [("webSearch", {"query": "JWST"})]


async def test_rule5_truncated_content_reply_names_the_tool_the_step_still_needs() -> None:
    cut = ScriptedReply(text="I will now search for JWST and then I will", finish_reason="length")
    r = await run(
        "Search for JWST", [one_step("webSearch"), cut, calls("webSearch", {"query": "JWST"}), done(), ANSWER]
    )
    note = r.provider.calls[2].messages[-1]["content"]
    assert "truncated" in note and "chunks" in note and "`webSearch`" in note


async def test_rule5_truncated_guided_reply_names_its_tool() -> None:
    provider = ScriptedProvider(
        ['{"expression": "12 *', '{"expression": "12 * 7"}', "84"]
    )  # one tool: no plan asked
    config = {
        "providers": {"main": {"adapter": "scripted", "structured_output": True, "guided": True}},
        "storage": {"type": "memory"},
        "tools": ["pes_agent.demo.text_tools:LOCAL_TOOLS"],
    }
    async with await create_art_instance(config, providers={"main": provider}) as art:
        response = await art.process("Compute 12 * 7", thread_id="g")
    assert response.status == "success"
    note = provider.calls[1].messages[-1]["content"]
    assert "truncated" in note and "chunks" in note and "`calculator`" in note


@pytest.mark.parametrize(("sent", "kind"), [(["JWST"], "a list"), ("JWST news", "text"), (42, "a number")])
async def test_rule5_non_object_arguments_are_reasked_as_a_json_object_of_named_fields(
    sent: Any, kind: str
) -> None:
    r = await run(
        "Search for JWST",
        [
            one_step("webSearch"),
            calls("webSearch", sent),
            calls("webSearch", {"query": "JWST"}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    message = r.provider.calls[2].messages[-1]["content"]
    assert "`webSearch`" in message and "not run" in message
    assert f"the arguments must be a JSON object of named fields (`query`), not {kind}" in message
    assert len(r.of(EventType.REASK)) == 1
    assert r.of(EventType.TOOL_CALL)[0]["arguments"] == sent  # the event shows what the model sent
    assert "This step is not done" not in message  # the gate's voice alone


async def test_rule5_non_object_arguments_without_the_gate_never_run_and_say_so() -> None:
    r = await run(
        "Search for JWST",
        [
            one_step("webSearch"),
            calls("webSearch", ["JWST"]),
            calls("webSearch", {"query": "JWST"}),
            done(),
            ANSWER,
        ],
        config={"gate": {"enabled": False}},
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    assert (
        "must be a JSON object of named fields (`query`), not a list"
        in r.provider.calls[2].messages[-1]["content"]
    )


async def test_repeated_bad_calls_end_the_item_gracefully() -> None:
    bad = calls("create_task", {"title": "x", "due_days": 0, "priority": "high"})
    r = await run("Task x", [one_step("create_task"), bad, bad, bad, ANSWER])
    assert RAN == []
    assert r.response.status == "partial"
    item = r.response.todo_list[0]
    assert item.status.value == "failed" and "create_task" in (item.error or "")


def several(*pairs: tuple[str, Any]) -> str:
    """One reply with several calls, ``c1``, ``c2``, ... in order."""
    listed = [{"callId": f"c{i}", "toolName": n, "arguments": a} for i, (n, a) in enumerate(pairs, start=1)]
    return "```json\n" + json.dumps({"toolCalls": listed}) + "\n```"


def one_step_with(*tools: str) -> str:
    item = {
        "id": "step_1",
        "description": "do it",
        "stepType": "tool",
        "requiredTools": list(tools),
        "dependencies": [],
    }
    return (
        "---JSON_OUTPUT_START---\n"
        + json.dumps({"title": "t", "intent": "i", "plan": "p", "todoList": [item]})
        + "\n---JSON_OUTPUT_END---"
    )


BAD_TASK = {"title": "x", "due_days": 0, "priority": "high"}
"""A call the gate reasks (a `minimum` broken): one failure of `create_task` each time."""


async def test_rule3_the_item_ends_at_once_when_a_counter_reaches_the_limit() -> None:
    """The reply that reaches the limit is the last execution turn: no further model turn, and the
    calls after it in that reply do not run."""
    r = await run(
        "Task x, then search JWST",
        [
            one_step_with("create_task", "webSearch"),
            calls("create_task", BAD_TASK),
            several(("create_task", BAD_TASK), ("webSearch", {"query": "JWST"})),
            ANSWER,
        ],
        config={"gate": {"maxConsecutiveFailuresPerTool": 2}},
    )
    assert RAN == []
    assert r.phases() == ["planning", "execution", "enforcement", "synthesis"]
    item = r.response.todo_list[0]
    assert (
        item.status.value == "failed"
        and "create_task" in (item.error or "")
        and "2 times" in (item.error or "")
    )
    assert r.response.status == "partial" and r.response.response == "Done."


async def test_rule3_refused_names_share_one_counter() -> None:
    r = await run(
        "Search for JWST",
        [
            one_step("webSearch"),
            calls("searchTheWeb", {"query": "JWST"}),
            calls("find", {"query": "JWST"}),
            calls("create_task", BAD_TASK),  # registered, but not a tool of this step: refused too
            ANSWER,
        ],
    )
    assert RAN == [] and r.phases() == ["planning", "execution", "enforcement", "enforcement", "synthesis"]
    error = r.response.todo_list[0].error or ""
    assert "3 calls in a row" in error and "searchTheWeb, find, create_task" in error and "webSearch" in error


async def test_rule3_a_success_of_one_tool_never_resets_another_tools_counter() -> None:
    r = await run(
        "Task x, then search JWST",
        [
            one_step_with("create_task", "webSearch"),
            several(("create_task", BAD_TASK), ("webSearch", {"query": "JWST"})),
            calls("create_task", BAD_TASK),
            ANSWER,
        ],
        config={"gate": {"maxConsecutiveFailuresPerTool": 2}},
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    assert r.phases() == ["planning", "execution", "execution", "synthesis"]
    assert r.response.todo_list[0].status.value == "failed"


async def test_rule3_a_success_never_resets_the_refused_names_counter() -> None:
    r = await run(
        "Search for JWST",
        [
            one_step_with("webSearch", "create_task"),
            several(("searchTheWeb", {"query": "JWST"}), ("webSearch", {"query": "JWST"})),
            calls("find", {"query": "JWST"}),
            ANSWER,
        ],
        config={"gate": {"maxConsecutiveFailuresPerTool": 2}},
    )
    assert RAN == [("webSearch", {"query": "JWST"})]
    assert r.phases() == ["planning", "execution", "enforcement", "synthesis"]
    assert "2 calls in a row" in (r.response.todo_list[0].error or "")


@tool(
    name="publish",
    description="Publish a post.",
    input_schema={
        "type": "object",
        "properties": {"title": {"type": "string", "minLength": 3, "description": "Title of the post."}},
        "required": ["title"],
        "additionalProperties": False,
    },
    requires_approval=True,
)
def publish(**args: Any) -> dict[str, Any]:
    RAN.append(("publish", args))
    return {"published": True}


async def test_rule3_an_approval_with_arguments_the_gate_rejects_counts_no_failure_and_keeps_the_pause() -> (
    None
):
    """Limit 1: the person approves with arguments the gate rejects. That is a bad decision (issue
    27), refused before the run resumes: no failure is counted, no turn is spent, and the pause
    waits for a decision the gate accepts."""
    provider = ScriptedProvider(
        [one_step("publish"), calls("publish", {"title": "Hello"}), done("ok"), ANSWER]
    )
    art = await create_art_instance(
        {"storage": {"type": "memory"}, "gate": {"maxConsecutiveFailuresPerTool": 1}},
        tools=[publish],
        providers={"s": provider},
    )
    first = await art.process("Publish 'Hello'", thread_id="p")
    assert first.status == "suspended"
    with pytest.raises(InvalidDecisionError, match="at least 3 characters") as refused:
        await art.resume("p", first.suspension["id"], {"approved": True, "modified_args": {"title": "Hi"}})
    assert refused.value.field == "modified_args.title"
    assert RAN == [] and [c.phase for c in provider.calls] == ["planning", "execution"]
    final = await art.resume(
        "p", first.suspension["id"], {"approved": True, "modified_args": {"title": "Hi there"}}
    )
    assert final.status == "success" and RAN == [("publish", {"title": "Hi there"})]


def _give_up_error(r: Run) -> dict[str, Any]:
    [error] = [e for e in r.events if e.type == EventType.ERROR]
    assert error.step_id == "step_1"
    return error.data


CUT = ScriptedReply(
    text='```json\n{"toolCalls": [{"toolName": "webSearch", "arguments": {"query": "JW',
    finish_reason="length",
)


@pytest.mark.parametrize(
    ("replies", "config", "code"),
    [
        pytest.param(
            [done("no"), done("no")],
            {"execution": {"maxIterations": 2, "taefMaxRetries": 5}},
            "max_iterations",
            id="max_iterations",
        ),
        pytest.param(
            [done("no"), done("no")],
            {"execution": {"taefMaxRetries": 1}},
            "taef_max_retries",
            id="taef_max_retries",
        ),
        pytest.param(
            [calls("searchTheWeb", {"query": "JWST"})] * 3, {}, "max_consecutive_failures", id="counter"
        ),
        pytest.param([CUT, CUT], {"execution": {"maxIterations": 2}}, "unusable_reply", id="nothing_usable"),
    ],
)
async def test_rule4_giving_up_a_step_emits_an_error_event(
    replies: list[Any], config: dict[str, Any], code: str
) -> None:
    r = await run("Search for JWST", [one_step("webSearch"), *replies, ANSWER], config=config)
    assert RAN == [] and r.response.status == "partial"
    error = _give_up_error(r)
    assert (error["code"], error["phase"], error["step_id"]) == (code, "execution", "step_1")
    assert error["message"] == r.response.todo_list[0].error


def two_independent_steps(first: str, second: str) -> str:
    items = [
        {
            "id": f"step_{i}",
            "description": f"use {name}",
            "stepType": "tool",
            "requiredTools": [name],
            "dependencies": [],
        }
        for i, name in enumerate((first, second), start=1)
    ]
    return (
        "---JSON_OUTPUT_START---\n"
        + json.dumps({"title": "t", "intent": "i", "plan": "p", "todoList": items})
        + "\n---JSON_OUTPUT_END---"
    )


async def test_rule4_an_advisory_step_that_runs_out_of_turns_is_reported_and_not_passed() -> None:
    r = await run(
        "Search for JWST",
        [one_step("webSearch"), CUT, CUT, ANSWER],
        config={"execution": {"maxIterations": 2, "validationMode": "advisory"}},
    )
    item = r.response.todo_list[0]
    assert item.status.value == "completed" and item.validation_status == "failed"
    assert r.response.status == "partial"
    assert _give_up_error(r)["code"] == "unusable_reply"


async def test_rule4_the_error_event_stays_when_the_run_goes_on_to_other_items() -> None:
    r = await run(
        "Search JWST; run print(1) in python",
        [
            two_independent_steps("webSearch", "run_code"),
            *[calls("searchTheWeb", {"query": "JWST"})] * 3,
            calls("run_code", {"runtime": "python", "code": "print(1)"}),
            done(),
            ANSWER,
        ],
    )
    assert RAN == [("run_code", {"runtime": "python", "code": "print(1)"})]
    assert [i.status.value for i in r.response.todo_list] == ["failed", "completed"]
    assert r.response.status == "partial"
    assert _give_up_error(r)["code"] == "max_consecutive_failures"


async def test_rule4_the_error_event_stays_when_the_run_ends_needs_input() -> None:
    r = await run(
        "Search JWST, then email the results to my manager",
        [
            two_independent_steps("webSearch", "send_email"),
            *[calls("searchTheWeb", {"query": "JWST"})] * 3,
            calls("send_email", {"subject": "JWST", "body": "News."}),
        ],
    )
    assert RAN == [] and r.response.status == "needs_input"
    assert _give_up_error(r)["code"] == "max_consecutive_failures"


async def test_rule4_a_guided_step_that_gives_up_emits_the_error_event_too() -> None:
    """Guided mode: an unreadable reply is treated as cut off; when the turns run out on it, the
    ERROR says so."""
    provider = ScriptedProvider(["not json", "still not", "84"])  # the only tool offered: no plan asked
    config = {
        "providers": {"main": {"adapter": "scripted", "structured_output": True, "guided": True}},
        "storage": {"type": "memory"},
        "tools": ["pes_agent.demo.text_tools:LOCAL_TOOLS"],
        "execution": {"maxIterations": 2},
    }
    async with await create_art_instance(config, providers={"main": provider}) as art:
        response = await art.process("Compute 12 * 7", thread_id="g")
        errors = await art.get_observations("g", types=[EventType.ERROR])
    assert response.status == "partial" and response.todo_list[0].status.value == "failed"
    [error] = errors
    assert error.step_id == "step_1"
    assert (error.data["code"], error.data["phase"], error.data["step_id"]) == (
        "unusable_reply",
        "execution",
        "step_1",
    )


async def test_f14_side_effect_target_nobody_gave_asks_the_user() -> None:
    r = await run(
        "Email the report to my manager",
        [
            one_step("send_email"),
            calls("send_email", {"subject": "Report", "body": "Attached."}),
            done("sent"),
            ANSWER,
        ],
        thread="mail",
    )
    assert RAN == []
    assert r.response.status == "needs_input" and r.phases().count("arg_fill") == 0
    clar = r.response.clarification
    assert clar is not None and [f["name"] for f in clar["fields"]] == ["to"]
    assert "recipient" in clar["text"].lower()
    for dump in ("type=", "input_value", "ValidationError", "Traceback", '{"loc"', "{'loc'"):
        assert dump not in clar["text"]
    assert r.of(EventType.CLARIFICATION)
    art = r.art  # type: ignore[attr-defined]
    second = await art.process("boss@corp.io", thread_id="mail")
    assert RAN == [("send_email", {"to": "boss@corp.io", "subject": "Report", "body": "Attached."})]
    assert second.status == "success"


async def test_arg_fill_that_fails_becomes_a_clarification() -> None:
    r = await run(
        "Create a task 'write report' due in 3 days",
        [
            one_step("create_task"),
            calls("create_task", {"title": "write report", "due_days": 3}),
            '{"priority": null}',
        ],
    )
    assert RAN == [] and r.response.status == "needs_input"
    assert r.of(EventType.ARG_FILL_FAILURE)
    clar = r.response.clarification
    assert clar is not None and [f["name"] for f in clar["fields"]] == ["priority"]
    assert "low" in clar["text"] and "high" in clar["text"]


async def test_resume_with_values_continues_the_same_call() -> None:
    r = await run(
        "Create a task 'write report' due in 3 days",
        [
            one_step("create_task"),
            calls("create_task", {"title": "write report", "due_days": 3}),
            '{"priority": null}',
            done("created"),
            ANSWER,
        ],
    )
    art = r.art  # type: ignore[attr-defined]
    final = await art.resume("t", r.response.suspension["id"], {"values": {"priority": "LOW"}})
    assert RAN == [
        ("create_task", {"title": "write report", "due_days": 3, "notify": False, "priority": "low"})
    ]
    assert final.status == "success"
