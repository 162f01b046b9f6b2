"""The `openai` adapter against servers that disagree on structured output, and refusals not retried.

FakeOpenAIServer stands in for the servers (`mimic="llama-cpp-python"` refuses `json_schema` the way
llama-cpp-python 0.3's server does and honours `grammar`; `mimic="openai"` refuses `grammar` as
OpenAI does; `ignores` stands for servers that drop keys they do not know); the real server is
exercised in test_openai_real_server.py.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from pes_agent.config import ProviderConfig
from pes_agent.errors import ProviderError
from pes_agent.llm.dialects import PROBE_SCHEMA, remembered_dialect
from pes_agent.llm.openai import OpenAIProvider
from pes_agent.llm.reply_grammar import DEFAULT_MAX_TOKENS, grammar_for
from pes_agent.llm.retry import refuses_request, server_message
from pes_agent.llm.types import CallOptions, Message, PromptRequest
from pes_agent.testing.fake_openai import FakeError, FakeOpenAIServer, FakeReply, Mimic

API_KEY = "sk-test-0123456789abcdef"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
REQUEST = PromptRequest(
    phase="planning",
    step_id=None,
    messages=(Message(role="user", content="hello world"),),
    response_schema=SCHEMA,
)
FREE = PromptRequest(phase="synthesis", step_id=None, messages=REQUEST.messages)
OK = '{"ok": true}'
"""What a constrained model answers the probe."""
LLAMA_CPP_PYTHON_SAYS = "response_format.type: Input should be 'text' or 'json_object'"


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@asynccontextmanager
async def serving(
    replies: list[Any],
    sleeps: Sleeps,
    *,
    mimic: Mimic = "openai",
    handler: Any = None,
    ignores: tuple[str, ...] = (),
    **config: Any,
) -> AsyncIterator[tuple[FakeOpenAIServer, OpenAIProvider]]:
    async with FakeOpenAIServer(replies, mimic=mimic, handler=handler, ignores=ignores) as server:
        settings = {"model": "m", "api_key": API_KEY, "max_retries": 2, "structured_output": True, **config}
        cfg = ProviderConfig(base_url=server.base_url, **settings)
        async with OpenAIProvider("local", cfg, sleep=sleeps) as provider:
            yield server, provider


def sent_as(body: dict[str, Any]) -> str:
    """The dialect a request body used."""
    if "grammar" in body:
        return "grammar"
    if "format" in body:
        return "ollama"
    response_format = body.get("response_format")
    return str(response_format["type"]) if isinstance(response_format, dict) else "none"


def probes(server: FakeOpenAIServer) -> list[str]:
    return [sent_as(b) for b in server.chat_requests if b["messages"][0]["content"] == "Say hello."]


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "pes_agent" and r.levelno >= logging.WARNING]


# --- permanent refusals are not retried --------------------------------------------------------------


async def test_llama_cpp_pythons_500_validation_error_is_raised_at_once_with_the_way_out(
    sleeps: Sleeps,
) -> None:
    async with serving([], sleeps, mimic="llama-cpp-python", structured_output_dialect="json_schema") as (
        server,
        provider,
    ):
        with pytest.raises(ProviderError) as info:
            await provider.complete(REQUEST, CallOptions())
    err = info.value
    assert server.request_count == 1 and sleeps == [], "a validation error is not a fault: no retry"
    assert (err.status, err.retryable, err.server_message) == (500, False, LLAMA_CPP_PYTHON_SAYS)
    message = str(err)
    assert LLAMA_CPP_PYTHON_SAYS in message
    assert "providers.local.structured_output_dialect" in message and "`json_object`" in message
    assert "try again later" not in message and "app.py" not in message, "no server traceback"


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (400, {"error": {"message": "unknown field `format`"}}, "unknown field `format`"),
        (404, {"error": {"message": "model 'm' not found"}}, "model 'm' not found"),
        (
            422,
            {"detail": [{"type": "missing", "loc": ["body", "messages"], "msg": "Field required"}]},
            "messages: Field required",
        ),
        (
            500,
            {"detail": [{"loc": ["body", "response_format", "type"], "msg": "Input should be 'text'"}]},
            "response_format.type: Input should be 'text'",
        ),
        (500, "1 validation error for ChatRequest\nmax_tokens\n  Input should be > 0", "1 validation error"),
    ],
)
async def test_a_refusal_of_the_request_is_not_retried(
    sleeps: Sleeps, status: int, body: Any, said: str
) -> None:
    async with serving([FakeError(status=status, body=body)], sleeps, structured_output=False) as (server, p):
        with pytest.raises(ProviderError) as info:
            await p.complete(REQUEST, CallOptions())
    assert server.request_count == 1 and sleeps == []
    assert (info.value.status, info.value.retryable) == (status, False)
    assert said in str(info.value)
    assert "structured_output_dialect" not in str(info.value), "no schema was sent: no dialect hint"


@pytest.mark.parametrize(
    "failure",
    [
        FakeError(status=503, body={"error": {"message": "loading model"}}),
        FakeError(status=500, body={"error": {"message": "CUDA out of memory"}}),
        FakeError(status=429, headers={"Retry-After": "3"}),
        FakeError(status=408),
        FakeError(status=409),
    ],
    ids=["503", "500", "429", "408", "409"],
)
async def test_transient_faults_keep_their_retries(sleeps: Sleeps, failure: FakeError) -> None:
    async with serving([failure, failure, "done"], sleeps, structured_output=False) as (server, provider):
        out = await provider.complete(REQUEST, CallOptions())
    assert out.text == "done" and server.request_count == 3 and len(sleeps) == 2
    if failure.status == 429:
        assert sleeps == [3.0, 3.0]


def test_the_servers_words_are_cut_to_where_and_what() -> None:
    pydantic_repr = (
        "2 validation errors:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
        "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'SECRET PROMPT'}\n  "
        "{'type': 'missing', 'loc': ('body', 'model'), 'msg': 'Field required', 'input': {}}"
        '\n\n  File "/srv/app.py", line 3, in f\n    POST /v1/chat/completions'
    )
    assert server_message({"message": pydantic_repr}) == f"{LLAMA_CPP_PYTHON_SAYS}; model: Field required"
    assert server_message('boom\n\n  File "/srv/app.py", line 3') == "boom"
    assert server_message({"detail": "Not Found"}) == "Not Found"
    assert refuses_request(500, {"message": pydantic_repr})
    assert not refuses_request(500, {"message": "upstream timed out"})
    assert not refuses_request(503, {"detail": "overloaded"}), "a `detail` string is not a validation list"
    assert refuses_request(401, None) and not refuses_request(429, None)


# --- dialects --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (
            "json_schema",
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "reply", "schema": SCHEMA, "strict": False},
                }
            },
        ),
        ("json_object", {"response_format": {"type": "json_object", "schema": SCHEMA}}),
        ("ollama", {"format": SCHEMA}),
    ],
)
async def test_a_configured_dialect_is_sent_as_is_without_a_probe(
    sleeps: Sleeps, dialect: str, expected: dict[str, Any]
) -> None:
    async with serving(['{"answer": "x"}'], sleeps, structured_output_dialect=dialect) as (server, provider):
        await provider.complete(REQUEST, CallOptions())
    (body,) = server.chat_requests
    assert {k: body[k] for k in ("response_format", "format") if k in body} == expected
    server.assert_complete()


async def test_a_configured_dialect_is_not_overridden_by_llm_params(sleeps: Sleeps) -> None:
    extra = {"format": "json", "response_format": {"type": "text"}}
    async with serving(["{}"], sleeps, structured_output_dialect="ollama") as (server, provider):
        await provider.complete(REQUEST, CallOptions(extra=extra))
    (body,) = server.chat_requests
    assert body["format"] == SCHEMA and "response_format" not in body


async def test_auto_picks_grammar_on_llama_cpp_python_once_and_sends_pes_agents_own(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    replies = ['{"answer": "1"}', '{"answer": "2"}', '{"answer": "3"}', "free", '{"answer": "4"}']
    with caplog.at_level(logging.INFO, logger="pes_agent"):
        async with serving(replies, sleeps, mimic="llama-cpp-python") as (server, provider):
            first = await asyncio.gather(*(provider.complete(REQUEST, CallOptions()) for _ in range(3)))
            await provider.complete(FREE, CallOptions())
            later = await provider.complete(REQUEST, CallOptions())
            server.assert_complete()
    assert sorted(r.text for r in first) == ['{"answer": "1"}', '{"answer": "2"}', '{"answer": "3"}']
    assert later.text == '{"answer": "4"}'
    assert probes(server) == ["grammar"], "one probe, however many first calls"
    assert server.chat_requests[0]["grammar"] == 'root ::= "pes-probe-ok"'
    structured = server.chat_requests[1]
    assert structured["grammar"] == grammar_for(SCHEMA, "planning", DEFAULT_MAX_TOKENS)
    assert "response_format" not in structured and structured["cache_prompt"] is True
    # decoded as the in-process adapter decodes: greedy, no repeat penalty, its reply cap
    assert (structured["temperature"], structured["repeat_penalty"], structured["max_tokens"]) == (
        0.0,
        1.0,
        DEFAULT_MAX_TOKENS,
    )
    free = server.chat_requests[4]
    assert "grammar" not in free and free["repeat_penalty"] == 1.0 and free["temperature"] == 0.0
    assert [sent_as(b) for b in server.chat_requests[1:]] == ["grammar"] * 3 + ["none", "grammar"]
    assert server.refused == 0 and sleeps == [] and warnings_of(caplog) == []
    assert remembered_dialect(server.base_url) == "grammar"


async def test_auto_picks_json_object_where_the_grammar_is_ignored_and_warns_once(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    replies = ["Hello!", OK, '{"answer": "1"}', '{"answer": "2"}']
    with caplog.at_level(logging.INFO, logger="pes_agent"):
        async with serving(
            replies, sleeps, mimic="llama-cpp-python", ignores=("grammar", "cache_prompt")
        ) as (server, provider):
            await asyncio.gather(*(provider.complete(REQUEST, CallOptions()) for _ in range(2)))
            server.assert_complete()
    assert probes(server) == ["grammar", "json_schema", "json_object"]
    assert [sent_as(b) for b in server.chat_requests[3:]] == ["json_object"] * 2
    assert server.chat_requests[3]["response_format"]["schema"] == SCHEMA
    assert server.chat_requests[2]["response_format"]["schema"] == PROBE_SCHEMA
    assert "repeat_penalty" not in server.chat_requests[3], "not a grammar server: its own defaults"
    assert server.refused == 1 and sleeps == []
    (warning,) = warnings_of(caplog)
    assert "provider 'local'" in warning and "ignored a GBNF grammar" in warning
    assert "(the reply was 'Hello!', not the only one its grammar allows)" in warning
    assert "refused response_format json_schema" in warning
    assert LLAMA_CPP_PYTHON_SAYS in warning and "using json_object with schema" in warning
    assert "`structured_output_dialect: json_object`" in warning


async def test_auto_keeps_json_schema_where_it_is_honoured_without_a_warning(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="pes_agent"):
        async with serving([OK, '{"answer": "x"}'], sleeps) as (server, provider):
            await provider.complete(REQUEST, CallOptions(), on_token=lambda kind, piece: None)
    assert probes(server) == ["grammar", "json_schema"], "OpenAI refuses `grammar` (HTTP 400)"
    assert server.chat_requests[2]["stream"] is True and sent_as(server.chat_requests[2]) == "json_schema"
    assert warnings_of(caplog) == [], "a server without grammars is the usual case: no warning"
    assert "refused a GBNF grammar in the `grammar` field (HTTP 400" in caplog.text


def refuse_response_format(body: dict[str, Any]) -> FakeError | str:
    """A server that takes only Ollama's `format`."""
    if "response_format" in body:
        return FakeError(status=400, body={"error": {"message": "response_format is not supported"}})
    return OK if body["messages"][0]["content"] == "Say hello." else '{"answer": "x"}'


async def test_auto_falls_back_to_ollamas_format_and_names_both_refusals(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="pes_agent"):
        async with serving([], sleeps, handler=refuse_response_format) as (server, provider):
            await provider.complete(REQUEST, CallOptions())
    assert probes(server) == ["grammar", "json_schema", "json_object", "ollama"]
    assert server.chat_requests[-1]["format"] == SCHEMA
    (warning,) = warnings_of(caplog)
    assert "refused response_format json_schema (HTTP 400: response_format is not supported)" in warning
    assert " and refused json_object with schema (HTTP 400" in warning
    assert "using Ollama's `format` field" in warning


async def test_a_server_that_ignores_every_dialect_is_an_error_not_free_text(sleeps: Sleeps) -> None:
    async with serving([], sleeps, handler=lambda body: "Hello there! How can I help?") as (server, p):
        with pytest.raises(ProviderError) as info:
            await p.complete(REQUEST, CallOptions())
        asked = server.request_count
        with pytest.raises(ProviderError) as again:
            await p.complete(REQUEST, CallOptions())
    assert probes(server) == ["grammar", "json_schema", "json_object", "ollama"] and asked == 4
    assert server.request_count == 4, "the verdict is kept: no second probe, no free-text call"
    message = str(info.value)
    assert "structured output is not supported by this server" in message
    assert "it refused a GBNF grammar in the `grammar` field (HTTP 400: Unrecognized request argument" in (
        message
    )
    assert "; ignored response_format json_schema (the reply was free text, starting 'Hello there!" in (
        message
    )
    assert "providers.local.structured_output: false" in message and str(again.value) == message
    assert info.value.retryable is False


async def test_a_server_that_is_down_decides_nothing_and_the_next_call_probes_again(sleeps: Sleeps) -> None:
    down = FakeError(status=503)
    async with serving([down, down, OK, '{"answer": "x"}'], sleeps, max_retries=1) as (server, provider):
        with pytest.raises(ProviderError) as info:
            await provider.complete(REQUEST, CallOptions())
        assert (info.value.status, info.value.retryable) == (503, True)
        assert "not supported" not in str(info.value)
        out = await provider.complete(REQUEST, CallOptions())
    assert out.text == '{"answer": "x"}'
    assert probes(server) == ["grammar", "json_schema", "json_schema", "grammar", "json_schema"]


async def test_an_unauthorised_probe_fails_as_such_not_as_a_missing_dialect(sleeps: Sleeps) -> None:
    async with serving([FakeError(status=401)], sleeps) as (server, provider):
        with pytest.raises(ProviderError) as info:
            await provider.complete(REQUEST, CallOptions())
    assert info.value.status == 401 and "api_key" in str(info.value)
    assert server.request_count == 2, "the grammar's refusal, then the 401 that ends the probe"


async def test_no_probe_without_structured_output(sleeps: Sleeps) -> None:
    async with serving(["plain"], sleeps, mimic="llama-cpp-python", structured_output=False) as (server, p):
        await p.complete(REQUEST, CallOptions())
    assert probes(server) == [] and "response_format" not in server.chat_requests[0]


async def test_an_echoed_key_never_reaches_errors_or_the_warning(
    sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    echo = {"error": {"message": f"1 validation error: key {API_KEY} may not send json_schema"}}

    def handler(body: dict[str, Any]) -> FakeError | FakeReply:
        if sent_as(body) == "json_schema":
            return FakeError(status=500, body=echo, headers={"x-echo": API_KEY})
        return FakeReply(text=OK if body["messages"][0]["content"] == "Say hello." else "{}")

    with caplog.at_level(logging.INFO, logger="pes_agent"):
        async with serving([], sleeps, handler=handler, structured_output_dialect="json_schema") as (s, p):
            with pytest.raises(ProviderError) as info:
                await p.complete(REQUEST, CallOptions())
        async with serving([], sleeps, handler=handler) as (_, p):
            await p.complete(REQUEST, CallOptions())
    err = info.value
    assert s.request_count == 1 and err.retryable is False
    shown = [str(err), repr(err), str(err.server_message), repr(err.headers)]
    shown += ["".join(traceback.format_exception(err)), caplog.text]
    assert "***" in str(err) and "***" in caplog.text
    assert all(API_KEY not in text for text in shown)
