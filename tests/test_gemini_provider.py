"""The gemini adapter against FakeGeminiServer on 127.0.0.1: what is sent, what is read."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic.alias_generators import to_camel

from pes_agent.errors import ProviderError
from pes_agent.llm.parser import parse_step
from pes_agent.llm.types import CallOptions, Message, PromptRequest, TokenKind
from pes_agent.testing.fake_actions import FakeReply
from pes_agent.testing.fake_gemini import sent_key
from tests.native_servers import API_KEY, Sleeps, serving

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
MESSAGES = (Message(role="system", content="You plan."), Message(role="user", content="hello world"))
PLAN = PromptRequest(phase="planning", step_id=None, messages=MESSAGES, response_schema=SCHEMA)
ANSWER = PromptRequest(phase="synthesis", step_id=None, messages=MESSAGES)
USAGE = {
    "promptTokenCount": 950,
    "cachedContentTokenCount": 900,
    "candidatesTokenCount": 15,
    "thoughtsTokenCount": 25,
}


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


async def test_a_whole_reply_sends_system_and_turns_and_reads_usage(sleeps: Sleeps) -> None:
    async with serving(
        "gemini", [FakeReply(text="Plan ready.", usage=USAGE)], sleeps, temperature=0.2, max_tokens=64
    ) as served:
        out = await served.provider.complete(ANSWER, CallOptions())
        (request,) = served.server.requests
    sent = request.json
    assert request.path.endswith("/models/fake-model:generateContent")
    assert sent_key(request) == API_KEY and "key=" not in request.path, (
        "the key goes in a header, not the URL"
    )
    assert sent["systemInstruction"]["parts"] == [{"text": "You plan."}]
    assert sent["contents"] == [{"role": "user", "parts": [{"text": "hello world"}]}]
    assert sent["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 64}
    assert (out.text, out.finish_reason, out.model) == ("Plan ready.", "stop", "fake-model")
    usage = out.usage
    assert (usage.prompt_tokens, usage.cached_prompt_tokens, usage.completion_tokens) == (950, 900, 40)
    assert (usage.thinking_tokens, usage.source) == (25, "provider")


async def test_assistant_turns_are_the_models_and_turns_of_one_role_are_merged(sleeps: Sleeps) -> None:
    messages = (
        *MESSAGES,
        Message(role="assistant", content='{"toolCalls": []}'),
        Message(role="system", content="Reminder."),
        Message(role="user", content="Go on."),
    )
    async with serving("gemini", ["ok"], sleeps) as served:
        await served.provider.complete(
            PromptRequest(phase="execution", step_id="s1", messages=messages), CallOptions()
        )
    assert served.bodies[0]["contents"] == [
        {"role": "user", "parts": [{"text": "hello world"}]},
        {"role": "model", "parts": [{"text": '{"toolCalls": []}'}]},
        {"role": "user", "parts": [{"text": "Reminder.\n\nGo on."}]},
    ]


async def test_a_structured_reply_sends_the_json_schema_as_written(sleeps: Sleeps) -> None:
    async with serving("gemini", ['{"answer": "42"}'], sleeps, structured_output=True) as served:
        out = await served.provider.complete(PLAN, CallOptions())
    config = served.bodies[0]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == SCHEMA, "additionalProperties and all kept"
    assert out.text == '{"answer": "42"}'


async def test_thinking_is_asked_for_and_read_apart_from_the_answer(sleeps: Sleeps) -> None:
    reply = FakeReply(text='{"answer": "42"}', reasoning_content="Let me weigh 6 * 7 first.")
    async with serving("gemini", [reply], sleeps, structured_output=True, thinking_budget=512) as served:
        out = await served.provider.complete(PLAN, CallOptions())
    config = served.bodies[0]["generationConfig"]
    # google-genai sends this nested object in field names (the API's JSON takes either spelling)
    thinking = {to_camel(k): v for k, v in config["thinkingConfig"].items()}
    assert thinking == {"thinkingBudget": 512, "includeThoughts": True}
    assert out.text == '{"answer": "42"}' and out.thinking == "Let me weigh 6 * 7 first."


async def test_a_streamed_reply_reports_thinking_and_answer_apart_and_reads_the_final_usage(
    sleeps: Sleeps,
) -> None:
    reply = FakeReply(text="The answer is 42.", reasoning_content="6 * 7", usage=USAGE, chunk_chars=5)
    pieces: list[tuple[TokenKind, str]] = []
    async with serving("gemini", [reply], sleeps, thinking_budget=-1) as served:
        out = await served.provider.complete(
            ANSWER, CallOptions(), on_token=lambda k, t: pieces.append((k, t))
        )
        (request,) = served.server.requests
    assert ":streamGenerateContent" in request.path and "alt=sse" in request.path
    assert "".join(t for k, t in pieces if k == "answer") == out.text == "The answer is 42."
    assert "".join(t for k, t in pieces if k == "thinking") == out.thinking == "6 * 7"
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.thinking_tokens) == (950, 40, 25)


@pytest.mark.parametrize("stream", [False, True])
async def test_max_tokens_is_a_truncated_reply_and_nothing_in_it_runs(sleeps: Sleeps, stream: bool) -> None:
    cut = FakeReply(
        text='{"toolCalls": [{"toolName": "calc", "arguments": {"expr": "1+', finish_reason="length"
    )
    sink: Any = (lambda k, t: None) if stream else None
    async with serving("gemini", [cut], sleeps) as served:
        out = await served.provider.complete(PLAN.with_phase("execution"), CallOptions(), on_token=sink)
    assert out.finish_reason == "length"
    parsed = parse_step(out.text, finish_reason=out.finish_reason)
    assert parsed.truncated and parsed.tool_calls == ()


async def test_llm_params_add_settings_but_never_replace_the_frameworks(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    options = CallOptions(extra={"top_k": 5, "system_instruction": "hijack"})
    with caplog.at_level(logging.WARNING, logger="pes_agent"):
        async with serving("gemini", ["ok"], sleeps) as served:
            await served.provider.complete(ANSWER, options)
    sent = served.bodies[0]
    assert sent["generationConfig"]["topK"] == 5 and sent["systemInstruction"]["parts"] == [
        {"text": "You plan."}
    ]
    assert "`system_instruction`" in caplog.text


async def test_an_unknown_setting_is_refused_before_anything_is_sent(sleeps: Sleeps) -> None:
    async with serving("gemini", [], sleeps) as served:
        with pytest.raises(ProviderError) as info:
            await served.provider.complete(ANSWER, CallOptions(extra={"no_such_setting": 1}))
    assert "llm_params" in str(info.value) and not info.value.retryable
    assert served.server.requests == []
