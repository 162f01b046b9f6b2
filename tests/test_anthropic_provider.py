"""The anthropic adapter against FakeAnthropicServer on 127.0.0.1: what is sent, what is read."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from pes_agent.llm.parser import parse_step
from pes_agent.llm.types import CallOptions, Message, PromptRequest, TokenKind
from pes_agent.testing.fake_actions import FakeReply
from pes_agent.testing.fake_anthropic import sent_key
from tests.native_servers import API_KEY, Sleeps, serving

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
MESSAGES = (Message(role="system", content="You plan."), Message(role="user", content="hello world"))
PLAN = PromptRequest(phase="planning", step_id=None, messages=MESSAGES, response_schema=SCHEMA)
ANSWER = PromptRequest(phase="synthesis", step_id=None, messages=MESSAGES)
USAGE = {
    "input_tokens": 12,
    "cache_read_input_tokens": 900,
    "cache_creation_input_tokens": 30,
    "output_tokens": 40,
}


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


async def test_a_whole_reply_sends_the_system_prefix_as_a_cache_breakpoint_and_reads_usage(
    sleeps: Sleeps,
) -> None:
    reply = FakeReply(text="Plan ready.", usage={**USAGE, "output_tokens_details": {"thinking_tokens": 25}})
    async with serving("anthropic", [reply], sleeps, temperature=0.2) as served:
        out = await served.provider.complete(ANSWER, CallOptions())
        (request,) = served.server.requests
    sent = request.json
    assert sent["system"] == [{"type": "text", "text": "You plan.", "cache_control": {"type": "ephemeral"}}]
    assert sent["messages"] == [{"role": "user", "content": "hello world"}]
    assert (sent["model"], sent["max_tokens"], sent["temperature"]) == ("fake-model", 4096, 0.2)
    assert sent_key(request) == API_KEY and request.headers["anthropic-version"]
    assert "tools" not in sent and "stream" not in sent
    assert (out.text, out.finish_reason, out.model) == ("Plan ready.", "stop", "fake-model")
    usage = out.usage
    assert (usage.prompt_tokens, usage.cached_prompt_tokens, usage.completion_tokens) == (942, 900, 40)
    assert (usage.thinking_tokens, usage.source) == (25, "provider")


async def test_prompt_caching_can_be_turned_off(sleeps: Sleeps) -> None:
    async with serving("anthropic", ["ok"], sleeps, prompt_caching=False) as served:
        await served.provider.complete(ANSWER, CallOptions())
    assert served.bodies[0]["system"] == [{"type": "text", "text": "You plan."}]


async def test_turns_of_one_role_are_merged_and_a_later_system_message_joins_the_user_turn(
    sleeps: Sleeps,
) -> None:
    messages = (
        *MESSAGES,
        Message(role="assistant", content='{"toolCalls": []}'),
        Message(role="system", content="Reminder."),
        Message(role="user", content="Go on."),
    )
    async with serving("anthropic", ["ok"], sleeps) as served:
        await served.provider.complete(
            PromptRequest(phase="execution", step_id="s1", messages=messages), CallOptions()
        )
    assert served.bodies[0]["messages"] == [
        {"role": "user", "content": "hello world"},
        {"role": "assistant", "content": '{"toolCalls": []}'},
        {"role": "user", "content": "Reminder.\n\nGo on."},
    ]


async def test_a_structured_reply_is_a_forced_tool_whose_input_is_the_reply(sleeps: Sleeps) -> None:
    async with serving("anthropic", ['{"answer": "42"}'], sleeps, structured_output=True) as served:
        out = await served.provider.complete(PLAN, CallOptions())
    sent = served.bodies[0]
    assert sent["tool_choice"] == {"type": "tool", "name": "reply"}
    assert sent["tools"][0]["input_schema"] == SCHEMA and "output_config" not in sent
    assert out.text == '{"answer": "42"}' and out.finish_reason == "stop"


async def test_a_schema_that_is_no_object_is_wrapped_for_the_tool_and_unwrapped_in_the_reply(
    sleeps: Sleeps,
) -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    request = PromptRequest(phase="planning", step_id=None, messages=MESSAGES, response_schema=schema)
    replies = ['{"reply": ["a", "b"]}', FakeReply(text='{"reply": ["c"]}', chunk_chars=3)]
    async with serving("anthropic", replies, sleeps, structured_output=True) as served:
        whole = await served.provider.complete(request, CallOptions())
        streamed = await served.provider.complete(request, CallOptions(), on_token=lambda k, t: None)
    assert served.bodies[0]["tools"][0]["input_schema"]["properties"]["reply"] == schema
    assert (whole.text, streamed.text) == ('["a", "b"]', '["c"]')


async def test_with_thinking_the_schema_goes_as_json_output_and_thinking_stays_out_of_the_answer(
    sleeps: Sleeps,
) -> None:
    reply = FakeReply(text='{"answer": "42"}', reasoning_content="Let me weigh 6 * 7 first.")
    async with serving(
        "anthropic", [reply], sleeps, structured_output=True, thinking_budget=2048, temperature=0.3
    ) as served:
        out = await served.provider.complete(PLAN, CallOptions())
    sent = served.bodies[0]
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert sent["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert "tool_choice" not in sent and "temperature" not in sent, "the API refuses both with thinking"
    assert sent["max_tokens"] == 2048 + 4096
    assert out.text == '{"answer": "42"}' and out.thinking == "Let me weigh 6 * 7 first."
    assert served.server.refused == 0


async def test_a_streamed_reply_reports_thinking_and_answer_apart_and_reads_the_final_usage(
    sleeps: Sleeps,
) -> None:
    reply = FakeReply(text="The answer is 42.", reasoning_content="6 * 7", usage=USAGE, chunk_chars=5)
    pieces: list[tuple[TokenKind, str]] = []
    async with serving("anthropic", [reply], sleeps, thinking_budget=1024) as served:
        out = await served.provider.complete(
            ANSWER, CallOptions(), on_token=lambda k, t: pieces.append((k, t))
        )
    assert served.bodies[0]["stream"] is True
    assert "".join(t for k, t in pieces if k == "answer") == out.text == "The answer is 42."
    assert "".join(t for k, t in pieces if k == "thinking") == out.thinking == "6 * 7"
    assert (out.usage.prompt_tokens, out.usage.cached_prompt_tokens, out.usage.completion_tokens) == (
        942,
        900,
        40,
    )


@pytest.mark.parametrize("stream", [False, True])
async def test_max_tokens_is_a_truncated_reply_and_nothing_in_it_runs(sleeps: Sleeps, stream: bool) -> None:
    cut = FakeReply(
        text='{"toolCalls": [{"toolName": "calc", "arguments": {"expr": "1+', finish_reason="length"
    )
    sink: Any = (lambda k, t: None) if stream else None
    async with serving("anthropic", [cut], sleeps) as served:
        out = await served.provider.complete(PLAN.with_phase("execution"), CallOptions(), on_token=sink)
    assert out.finish_reason == "length"
    parsed = parse_step(out.text, finish_reason=out.finish_reason)
    assert parsed.truncated and parsed.tool_calls == ()


async def test_llm_params_add_keys_but_never_replace_the_frameworks(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    options = CallOptions(extra={"top_k": 5, "system": "hijack", "tools": []})
    with caplog.at_level(logging.WARNING, logger="pes_agent"):
        async with serving("anthropic", ["ok"], sleeps) as served:
            await served.provider.complete(ANSWER, options)
    sent = served.bodies[0]
    assert sent["top_k"] == 5 and sent["system"][0]["text"] == "You plan." and "tools" not in sent
    assert "`system`, `tools`" in caplog.text
