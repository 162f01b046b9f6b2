"""OpenAIProvider against a real HTTP server on 127.0.0.1 (FakeOpenAIServer), sleeps injected."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from pes_agent.config import ProviderConfig
from pes_agent.errors import InvalidInputError, ProviderError
from pes_agent.llm.openai import OpenAIProvider
from pes_agent.llm.retry import backoff_seconds, retry_after_seconds
from pes_agent.llm.tokens import count_messages, reset_token_cache
from pes_agent.llm.types import CallOptions, Message, PromptRequest
from pes_agent.testing.fake_openai import (
    FakeDisconnect,
    FakeError,
    FakeHang,
    FakeMalformed,
    FakeOpenAIServer,
    FakeReply,
)

API_KEY = "sk-test-0123456789abcdef"
SHARED_CACHE = Path(__file__).resolve().parents[1].parent / "shared" / "tiktoken"
O200K_FILE = "fb374d419588a4632f3f557e76b4b70aebbca790"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}

REQUEST = PromptRequest(
    phase="planning",
    step_id=None,
    messages=(Message(role="system", content="You plan."), Message(role="user", content="hello world")),
    response_schema=SCHEMA,
)


class Sleeps(list[float]):
    """The injected sleep: records what the retry policy asked for and returns at once."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture(autouse=True)
def _fresh_token_cache() -> Iterator[None]:
    reset_token_cache()
    yield
    reset_token_cache()


@asynccontextmanager
async def serving(
    replies: list[Any], sleeps: Sleeps, **config: Any
) -> AsyncIterator[tuple[FakeOpenAIServer, OpenAIProvider]]:
    async with FakeOpenAIServer(replies) as server:
        settings = {"model": "fake-model", "api_key": API_KEY, "max_retries": 2, **config}
        cfg = ProviderConfig(base_url=server.base_url, **settings)
        async with OpenAIProvider("local", cfg, sleep=sleeps) as provider:
            yield server, provider


async def test_plain_reply_carries_text_finish_reason_and_the_servers_usage(sleeps: Sleeps) -> None:
    reply = FakeReply(
        text="Plan ready.", finish_reason="length", usage={"prompt_tokens": 11, "completion_tokens": 3}
    )
    async with serving([reply], sleeps, temperature=0.1, max_tokens=64) as (server, provider):
        out = await provider.complete(REQUEST, CallOptions())
    assert (out.text, out.finish_reason, out.thinking, out.model) == (
        "Plan ready.",
        "length",
        None,
        "fake-model",
    )
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.source) == (11, 3, "provider")
    (sent,) = server.chat_requests
    assert sent["model"] == "fake-model"
    assert sent["messages"] == [
        {"role": "system", "content": "You plan."},
        {"role": "user", "content": "hello world"},
    ]
    assert (sent["temperature"], sent["max_tokens"]) == (0.1, 64)
    assert "response_format" not in sent
    assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


async def test_call_options_win_over_provider_config(sleeps: Sleeps) -> None:
    async with serving(["ok"], sleeps, temperature=0.1) as (server, provider):
        await provider.complete(REQUEST, CallOptions(model="other-model", temperature=0.7, max_tokens=5))
    (sent,) = server.chat_requests
    assert (sent["model"], sent["temperature"], sent["max_tokens"]) == ("other-model", 0.7, 5)


async def test_429_waits_as_long_as_retry_after_says_then_succeeds(sleeps: Sleeps) -> None:
    replies = [FakeError(status=429, headers={"Retry-After": "2"}), FakeReply(text="done")]
    async with serving(replies, sleeps) as (server, provider):
        out = await provider.complete(REQUEST, CallOptions())
    assert out.text == "done"
    assert sleeps == [2.0]
    assert len(server.chat_requests) == 2


async def test_retry_after_ms_is_preferred_and_long_waits_are_capped(sleeps: Sleeps) -> None:
    replies = [
        FakeError(status=503, headers={"retry-after-ms": "1500", "Retry-After": "9"}),
        FakeError(status=429, headers={"Retry-After": "3600"}),
        "done",
    ]
    async with serving(replies, sleeps) as (_, provider):
        await provider.complete(REQUEST, CallOptions())
    assert sleeps == [1.5, 60.0]


async def test_500_is_retried_with_backoff_then_succeeds(sleeps: Sleeps) -> None:
    async with serving([FakeError(status=500), "recovered"], sleeps) as (server, provider):
        out = await provider.complete(REQUEST, CallOptions())
    assert out.text == "recovered"
    assert len(server.chat_requests) == 2
    assert len(sleeps) == 1 and 0.5 <= sleeps[0] <= 0.625


async def test_persistent_500_raises_after_one_plus_max_retries_requests(sleeps: Sleeps) -> None:
    async with serving([FakeError(status=500)] * 3, sleeps, max_retries=2) as (server, provider):
        with pytest.raises(ProviderError) as info:
            await provider.complete(REQUEST, CallOptions())
    err = info.value
    assert (err.status, err.retryable, err.provider) == (500, True, "local")
    assert len(server.chat_requests) == 3, "SDK retries are off: exactly 1 + max_retries requests"
    assert len(sleeps) == 2
    message = str(err)
    assert "HTTP 500" in message and "after 3 attempts" in message
    assert server.base_url in message and "'fake-model'" in message


async def test_400_fails_at_once_whatever_its_message_says(sleeps: Sleeps) -> None:
    error = FakeError(status=400, body={"error": {"message": "rate limit exceeded; timeout, retry later"}})
    async with serving([error], sleeps) as (server, provider):
        with pytest.raises(ProviderError) as info:
            await provider.complete(REQUEST, CallOptions())
    assert (info.value.status, info.value.retryable) == (400, False)
    assert len(server.chat_requests) == 1 and sleeps == []
    assert "rate limit exceeded" in str(info.value), "the server's own message is passed on"


async def test_a_hanging_server_times_out_is_retried_then_fails(sleeps: Sleeps) -> None:
    async with serving([FakeHang(), FakeHang()], sleeps, max_retries=1) as (server, provider):
        with pytest.raises(ProviderError) as info:
            await provider.complete(REQUEST, CallOptions(timeout_s=0.2))
    assert (info.value.status, info.value.retryable) == (None, True)
    assert "no answer within 0.2s" in str(info.value) and "timeout_s" in str(info.value)
    assert len(server.chat_requests) == 2 and len(sleeps) == 1


async def test_a_dropped_connection_is_retried(sleeps: Sleeps) -> None:
    async with serving([FakeDisconnect(), "after"], sleeps) as (server, provider):
        out = await provider.complete(REQUEST, CallOptions())
    assert out.text == "after" and len(server.chat_requests) == 2


@pytest.mark.parametrize(
    ("body", "content_type", "complaint"),
    [
        ("not json", "application/json", "is not JSON"),
        ("<html>proxy login</html>", "text/html", "is not JSON"),
        ('{"object": "chat.completion", "choices": []}', "application/json", "no `choices[0].message`"),
        (
            '{"error": {"message": "upstream model overloaded"}}',
            "application/json",
            "upstream model overloaded",
        ),
    ],
)
async def test_malformed_body_is_a_provider_error_and_not_retried(
    sleeps: Sleeps, body: str, content_type: str, complaint: str
) -> None:
    async with serving([FakeMalformed(body=body, content_type=content_type)], sleeps) as (server, provider):
        with pytest.raises(ProviderError) as info:
            await provider.complete(REQUEST, CallOptions())
    assert complaint in str(info.value)
    assert (info.value.status, info.value.retryable) == (200, False)
    assert len(server.chat_requests) == 1


async def test_missing_usage_is_counted_with_tiktoken_when_the_cache_is_there(
    sleeps: Sleeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (SHARED_CACHE / O200K_FILE).is_file():
        pytest.skip(f"offline o200k cache not found in {SHARED_CACHE}")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(SHARED_CACHE))
    async with serving([FakeReply(text="hello world")], sleeps) as (_, provider):
        out = await provider.complete(REQUEST, CallOptions())
    # "You plan." is 3 o200k tokens and "hello world" 2: contents only, no chat overhead.
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.source) == (5, 2, "tiktoken")
    assert out.usage.prompt_tokens == count_messages(REQUEST.messages).tokens


async def test_missing_usage_without_a_tokenizer_is_a_labelled_estimate(
    sleeps: Sleeps, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    async with serving([FakeReply(text="twelve chars")], sleeps) as (_, provider):
        out = await provider.complete(REQUEST, CallOptions())
    prompt_estimate = 3 + 3  # ceil(9 / 4) + ceil(11 / 4)
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.source) == (
        prompt_estimate,
        3,
        "estimate",
    )


async def test_missing_finish_reason_reads_unknown(sleeps: Sleeps) -> None:
    body = json.dumps(
        {"model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}
    )
    async with serving([FakeMalformed(body=body)], sleeps) as (_, provider):
        out = await provider.complete(REQUEST, CallOptions())
    assert (out.text, out.finish_reason) == ("hi", "unknown")


@pytest.mark.parametrize(
    ("structured", "schema", "sent"),
    [(True, SCHEMA, True), (False, SCHEMA, False), (True, None, False)],
)
async def test_response_format_is_sent_only_when_configured_and_there_is_a_schema(
    sleeps: Sleeps, structured: bool, schema: dict[str, Any] | None, sent: bool
) -> None:
    request = PromptRequest(
        phase="execution", step_id="s1", messages=REQUEST.messages, response_schema=schema
    )
    async with serving(
        ["{}"], sleeps, structured_output=structured, structured_output_dialect="json_schema"
    ) as (server, provider):
        await provider.complete(request, CallOptions())
    (body,) = server.chat_requests
    if sent:
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": SCHEMA, "strict": False},
        }
    else:
        assert "response_format" not in body


async def test_the_api_key_never_appears_in_errors_even_when_the_server_echoes_it(sleeps: Sleeps) -> None:
    echo = FakeError(
        status=401,
        headers={"x-api-key": API_KEY, "x-echo": f"Bearer {API_KEY}", "x-request-id": "req-1"},
        body={"error": {"message": f"Incorrect API key provided: {API_KEY}"}},
    )
    async with serving([echo], sleeps) as (server, provider):
        with pytest.raises(ProviderError) as info:
            await provider.complete(REQUEST, CallOptions())
        assert API_KEY not in repr(provider)
    assert server.requests[0].headers["authorization"] == f"Bearer {API_KEY}", "the key was really sent"
    err = info.value
    shown = [str(err), repr(err), repr(err.headers), "".join(traceback.format_exception(err))]
    assert all(API_KEY not in text for text in shown)
    assert err.status == 401 and "api_key" in str(err)
    assert "x-api-key" not in err.headers and err.headers["x-request-id"] == "req-1"


async def test_reasoning_content_becomes_thinking(sleeps: Sleeps) -> None:
    reply = FakeReply(text="42", reasoning_content="6 times 7")
    async with serving([reply], sleeps) as (_, provider):
        out = await provider.complete(REQUEST, CallOptions())
    assert (out.text, out.thinking) == ("42", "6 times 7")


async def test_llm_params_pass_through_but_cannot_override_framework_keys(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    extra = {"model": "evil", "messages": [], "stream": True, "n": 3, "top_p": 0.5, "temperature": 0.9}
    async with serving(["ok", "ok"], sleeps, temperature=0.1) as (server, provider):
        with caplog.at_level(logging.WARNING, logger="pes_agent"):
            out = await provider.complete(REQUEST, CallOptions(extra=extra))
            await provider.complete(REQUEST, CallOptions(extra=extra))
    assert out.text == "ok"
    body = server.chat_requests[0]
    assert body["model"] == "fake-model" and len(body["messages"]) == 2
    assert "stream" not in body and "n" not in body
    assert (body["top_p"], body["temperature"]) == (0.5, 0.9)
    refusals = [r for r in caplog.records if "ignoring llm_params" in r.getMessage()]
    assert len(refusals) == 1 and "`model`" in refusals[0].getMessage()


async def test_no_model_anywhere_is_reported_before_any_request(sleeps: Sleeps) -> None:
    async with serving([], sleeps, model=None) as (server, provider):
        with pytest.raises(ProviderError, match=r"providers\.local\.model"):
            await provider.complete(REQUEST, CallOptions())
    assert server.requests == []


async def test_one_provider_serves_many_concurrent_calls(sleeps: Sleeps) -> None:
    async with FakeOpenAIServer(
        handler=lambda body: FakeReply(text=body["messages"][-1]["content"])
    ) as server:
        cfg = ProviderConfig(base_url=server.base_url, model="m", api_key=SecretStr(API_KEY))
        async with OpenAIProvider("local", cfg, sleep=sleeps) as provider:
            requests = [
                PromptRequest(
                    phase="execution", step_id=str(i), messages=(Message(role="user", content=f"q{i}"),)
                )
                for i in range(50)
            ]
            replies = await asyncio.gather(*(provider.complete(r, CallOptions()) for r in requests))
    assert [r.text for r in replies] == [f"q{i}" for i in range(50)]
    assert sleeps == []


def test_a_provider_keeps_working_across_event_loops(sleeps: Sleeps) -> None:
    """An instance built at service start serves later loops too: a client per loop, none shared."""
    port = 0
    provider: OpenAIProvider | None = None

    async def one_call(text: str) -> str:
        nonlocal port, provider
        async with FakeOpenAIServer([text], port=port) as server:
            port = server.port
            if provider is None:
                cfg = ProviderConfig(
                    base_url=server.base_url, model="m", api_key=SecretStr(API_KEY), max_retries=0
                )
                provider = OpenAIProvider("local", cfg, sleep=sleeps)
            return (await provider.complete(REQUEST, CallOptions())).text

    async def second_call_then_close() -> str:
        try:
            return await one_call("second")
        finally:
            assert provider is not None
            await provider.aclose()

    first_loop = asyncio.new_event_loop()
    assert first_loop.run_until_complete(one_call("first")) == "first"
    first_loop.close()  # as at the end of asyncio.run: the provider's client there is dead now
    assert asyncio.run(second_call_then_close()) == "second"
    # The first loop's pool was never closed (its loop is gone, so nothing can close it); let it go
    # here rather than warn about its socket in whichever test happens to collect it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        del first_loop
        gc.collect()


def test_retry_after_reads_seconds_http_dates_and_ignores_junk() -> None:
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
    assert retry_after_seconds({"Retry-After": "Tue, 14 Nov 2023 22:13:27 GMT"}, now=now) == 7.0
    assert retry_after_seconds({"Retry-After": "Tue, 14 Nov 2023 22:00:00 GMT"}, now=now) == 0.0
    assert retry_after_seconds({"retry-after": "0.25"}, now=now) == 0.25
    assert retry_after_seconds({"Retry-After": "soon"}, now=now) is None
    assert retry_after_seconds({"Retry-After": "-3"}, now=now) is None
    assert retry_after_seconds({}, now=now) is None


def test_backoff_doubles_with_bounded_jitter_and_a_cap() -> None:
    assert [backoff_seconds(n, jitter=lambda: 0.0) for n in (1, 2, 3, 4, 5, 6)] == [0.5, 1, 2, 4, 8, 8]
    assert backoff_seconds(2, jitter=lambda: 1.0) == 1.25
    assert backoff_seconds(9, jitter=lambda: 1.0) == 8.0


async def test_fake_server_streams_server_sent_events() -> None:
    import openai

    reply = FakeReply(
        text="streamed reply text", chunk_chars=5, usage={"prompt_tokens": 4, "completion_tokens": 3}
    )
    async with FakeOpenAIServer([reply]) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key=API_KEY, max_retries=0)
        try:
            stream = await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                stream_options={"include_usage": True},
            )
            chunks = [chunk async for chunk in stream]
        finally:
            await client.close()
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert (text, finishes) == ("streamed reply text", ["stop"])
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 3


async def test_fake_server_binds_only_loopback() -> None:
    with pytest.raises(InvalidInputError, match="loopback"):
        FakeOpenAIServer(host="0.0.0.0")


def test_importing_the_adapter_does_not_import_openai() -> None:
    code = "import sys, pes_agent.llm.openai; print('openai' in sys.modules, 'tiktoken' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False False"


async def test_fake_server_answers_past_its_script_with_a_clear_non_retryable_error(sleeps: Sleeps) -> None:
    async with serving(["only one"], sleeps) as (server, provider):
        await provider.complete(REQUEST, CallOptions())
        server.assert_complete()
        with pytest.raises(ProviderError, match="no scripted reply left") as info:
            await provider.complete(REQUEST, CallOptions())
    assert info.value.status == 400 and sleeps == []
    with pytest.raises(AssertionError, match="1 requests arrived"):
        server.assert_complete()


async def test_no_api_key_for_the_hosted_endpoint_says_where_to_put_one(
    sleeps: Sleeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = OpenAIProvider("cloud", ProviderConfig(model="gpt-4o-mini"), sleep=sleeps)
    with pytest.raises(ProviderError, match=r"providers\.cloud\.api_key.*OPENAI_API_KEY"):
        await provider.complete(REQUEST, CallOptions())
    await provider.aclose()


ANSWER = PromptRequest(phase="synthesis", step_id=None, messages=(Message(role="user", content="answer"),))
LOOP = "The result is 84 and the count is 4.\n" * 12


async def test_free_text_is_cut_at_its_first_repeat(sleeps: Sleeps) -> None:
    async with serving([LOOP], sleeps) as (_, provider):
        out = await provider.complete(ANSWER, CallOptions())
    assert (out.text, out.finish_reason) == ("The result is 84 and the count is 4.", "repetition")


async def test_a_streamed_answer_stops_at_its_first_repeat(sleeps: Sleeps) -> None:
    pieces: list[str] = []
    async with serving([FakeReply(text=LOOP, chunk_chars=8)], sleeps) as (_, provider):
        out = await provider.complete(ANSWER, CallOptions(), on_token=lambda kind, text: pieces.append(text))
    assert out.text == "The result is 84 and the count is 4."
    assert len("".join(pieces)) < len(LOOP) // 2  # the stream was closed, not read to its end


async def test_a_reply_with_a_schema_is_never_cut(sleeps: Sleeps) -> None:
    body = '{"answer": "' + "x y z w " * 20 + '"}'
    async with serving([body], sleeps) as (_, provider):
        out = await provider.complete(REQUEST, CallOptions())
    assert out.text == body


async def test_a_free_text_plan_is_never_cut_for_repeating(sleeps: Sleeps) -> None:
    plan = (
        '{\n  "todoList": [\n    {"stepType": "tool"},\n    {"stepType": "tool"},\n    {"stepType": '
        '"tool"}\n  ]\n}'
    )
    unconstrained = PromptRequest(phase="planning", step_id=None, messages=REQUEST.messages)
    async with serving([plan], sleeps) as (_, provider):
        out = await provider.complete(unconstrained, CallOptions())
    assert out.text == plan
