"""Streaming through the public API: TOKEN events by phase, step and kind, with the scripted provider
and with the real OpenAI adapter against FakeOpenAIServer on 127.0.0.1; structured-output request
bodies; and failures of the endpoint that must end a run with an error status, not an exception."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import pytest

from pes_agent import AgentFinalResponse, ArtInstance, EventType, create_art_instance, tool
from pes_agent.config import ProviderConfig
from pes_agent.errors import ProviderError
from pes_agent.events import Event
from pes_agent.llm.markers import split_thinking
from pes_agent.llm.openai import OpenAIProvider
from pes_agent.llm.streaming import ThinkSplitter
from pes_agent.llm.types import CallOptions, LLMReply, Message, PromptRequest, TokenKind, TokenSink
from pes_agent.prompts.schemas import plan_reply_schema
from pes_agent.testing import ScriptedProvider, ScriptedReply
from pes_agent.testing._http import chunked, read_request, response_head
from pes_agent.testing.fake_openai import (
    FakeAction,
    FakeError,
    FakeHang,
    FakeMalformed,
    FakeOpenAIServer,
    FakeReply,
)

QUERY = "How many people live in Lima?"


@tool
def lookup(city: str) -> dict[str, Any]:
    """Look up the population of a city."""
    return {"city": city, "population": 9_750_000}


@tool
def weather(city: str) -> dict[str, Any]:
    """Today's weather in a city."""
    return {"city": city, "sky": "grey"}


def plan_text() -> str:
    step = {
        "id": "step_1",
        "description": "look up Lima",
        "stepType": "tool",
        "requiredTools": ["lookup"],
        "dependencies": [],
    }
    body = {"title": "Lima", "intent": "population", "plan": "look it up", "todoList": [step]}
    return f"---JSON_OUTPUT_START---\n{json.dumps(body)}\n---JSON_OUTPUT_END---"


CALL = (
    "```json\n" + json.dumps({"toolCalls": [{"toolName": "lookup", "arguments": {"city": "Lima"}}]}) + "\n```"
)
CONTENT = "```json\n" + json.dumps({"content": "Lima: 9.75M", "nextStepDecision": "complete_item"}) + "\n```"
ANSWER = "<mainContent>Lima has about 9.75 million people.</mainContent>"
PLAN_THOUGHT = "Lima is one city; a single lookup will do."
STEP_THOUGHT = "The step needs lookup for Lima."
SYNTHESIS_THOUGHT = "Summing up the lookup."


@dataclass(frozen=True)
class CallTokens:
    """The TOKEN events of one model call, joined per kind."""

    phase: str
    step_id: str | None
    answer: str
    thinking: str


# What each model call of the S1-like run should stream: (phase, step id, answer, thinking).
EXPECTED = [
    CallTokens("planning", None, plan_text(), PLAN_THOUGHT),
    CallTokens("execution", "step_1", CALL, STEP_THOUGHT),
    CallTokens("execution", "step_1", CONTENT, ""),
    CallTokens("synthesis", None, ANSWER, SYNTHESIS_THOUGHT),
]


def scripted_replies() -> list[Any]:
    return [
        ScriptedReply(text=plan_text(), thinking=PLAN_THOUGHT),
        f"<think>{STEP_THOUGHT}</think>\n{CALL}",
        CONTENT,
        ScriptedReply(text=ANSWER, thinking=SYNTHESIS_THOUGHT),
    ]


def fake_replies(chunk_chars: int) -> list[FakeReply]:
    """The same conversation as the server would send it; small chunks cut tags in two."""
    usage = {"prompt_tokens": 100, "completion_tokens": 10}
    return [
        FakeReply(text=plan_text(), reasoning_content=PLAN_THOUGHT, usage=usage, chunk_chars=chunk_chars),
        FakeReply(text=f"<think>{STEP_THOUGHT}</think>\n{CALL}", usage=usage, chunk_chars=chunk_chars),
        FakeReply(text=CONTENT, usage=usage, chunk_chars=chunk_chars),
        FakeReply(text=ANSWER, reasoning_content=SYNTHESIS_THOUGHT, usage=usage, chunk_chars=chunk_chars),
    ]


def calls_of(events: list[Event]) -> list[CallTokens]:
    """Group TOKEN events into model calls: a call's tokens are consecutive, and other events
    (plan, tool execution, item status) always come between two calls of this run."""
    calls: list[CallTokens] = []
    group: list[Event] = []
    for event in [*events, None]:
        if event is not None and event.type is EventType.TOKEN:
            group.append(event)
            continue
        if group:
            keys = {(e.data["phase"], e.step_id) for e in group}
            assert len(keys) == 1, f"one call's tokens carry different phases or steps: {keys}"
            ((phase, step_id),) = keys
            assert {e.data["kind"] for e in group} <= {"answer", "thinking"}
            answer = "".join(e.data["text"] for e in group if e.data["kind"] == "answer")
            thinking = "".join(e.data["text"] for e in group if e.data["kind"] == "thinking")
            calls.append(CallTokens(phase, step_id, answer, thinking))
            group = []
    return calls


def milestones(events: list[Event]) -> list[str]:
    """The run's shape: each call's tokens as one entry, beside the events that frame them."""
    shape: list[str] = []
    for event in events:
        if event.type is EventType.TOKEN:
            entry = f"TOKEN {event.data['phase']}"
            if not shape or shape[-1] != entry:
                shape.append(entry)
        elif event.type in (
            EventType.PLAN,
            EventType.THOUGHTS,
            EventType.TOOL_EXECUTION,
            EventType.FINAL_RESPONSE,
        ):
            shape.append(event.type.value)
    return shape


EXPECTED_SHAPE = [
    "TOKEN planning", "THOUGHTS", "PLAN",
    "TOKEN execution", "THOUGHTS", "TOOL_EXECUTION",
    "TOKEN execution",
    "TOKEN synthesis", "THOUGHTS", "FINAL_RESPONSE",
]  # fmt: skip


async def assert_tokens_are_not_stored_and_thoughts_are_one_per_call(
    art: ArtInstance, thread_id: str
) -> None:
    stored = await art.get_observations(thread_id)
    assert stored and all(e.type is not EventType.TOKEN for e in stored)
    thoughts = [(e.data["phase"], e.step_id, e.data["text"]) for e in stored if e.type is EventType.THOUGHTS]
    assert thoughts == [
        ("planning", None, PLAN_THOUGHT),
        ("execution", "step_1", STEP_THOUGHT),
        ("synthesis", None, SYNTHESIS_THOUGHT),
    ]


def listen(art: ArtInstance, thread_id: str, types: list[EventType] | None = None) -> list[Event]:
    seen: list[Event] = []
    art.subscribe(seen.append, thread_id=thread_id, types=types)
    return seen


# -- the scripted provider ---------------------------------------------------------------------------


@dataclass(eq=False)
class RecordingProvider(ScriptedProvider):
    """Remembers whether each call was asked to stream."""

    streamed: list[bool] = field(default_factory=list)

    async def complete(
        self, request: PromptRequest, options: CallOptions, *, on_token: TokenSink | None = None
    ) -> LLMReply:
        self.streamed.append(on_token is not None)
        return await super().complete(request, options, on_token=on_token)


async def scripted_art(provider: ScriptedProvider | None = None) -> tuple[ArtInstance, ScriptedProvider]:
    provider = provider or ScriptedProvider(scripted_replies())
    art = await create_art_instance(
        {"storage": {"type": "memory"}}, tools=[lookup], providers={"s": provider}
    )
    return art, provider


async def test_scripted_tokens_arrive_in_order_with_phase_step_and_kind() -> None:
    art, provider = await scripted_art()
    seen = listen(art, "t1")
    response = await art.process(QUERY, thread_id="t1")
    assert response.status == "success", response.error
    assert response.response == "Lima has about 9.75 million people."
    assert calls_of(seen) == EXPECTED
    assert milestones(seen) == EXPECTED_SHAPE
    provider.assert_complete()


async def test_scripted_tokens_are_never_stored_and_thinking_is_stored_once_per_call() -> None:
    art, _ = await scripted_art()
    listen(art, "t1", [EventType.TOKEN])
    await art.process(QUERY, thread_id="t1")
    await assert_tokens_are_not_stored_and_thoughts_are_one_per_call(art, "t1")


async def test_nobody_listening_for_tokens_means_no_streaming() -> None:
    provider = RecordingProvider(scripted_replies())
    art, _ = await scripted_art(provider)
    tools_seen = listen(art, "quiet", [EventType.TOOL_EXECUTION])
    await art.process(QUERY, thread_id="quiet")
    assert tools_seen and provider.streamed == [False] * 4
    provider = RecordingProvider(scripted_replies())
    art, _ = await scripted_art(provider)
    listen(art, "loud", [EventType.TOKEN])
    await art.process(QUERY, thread_id="quiet")
    assert provider.streamed == [False] * 4, "a listener on another thread does not turn streaming on"


async def test_process_stream_yields_token_events_before_the_response() -> None:
    art, _ = await scripted_art()
    items = [x async for x in art.process_stream(QUERY, thread_id="st")]
    final = items.pop()
    assert isinstance(final, AgentFinalResponse) and final.status == "success"
    events = [e for e in items if isinstance(e, Event)]
    assert len(events) == len(items), "only events before the response"
    assert calls_of(events) == EXPECTED
    assert milestones(events) == EXPECTED_SHAPE


async def test_a_provider_that_cannot_stream_still_gives_each_reply_as_tokens() -> None:
    inner = ScriptedProvider(scripted_replies())

    class PlainProvider:
        """Written against the plain protocol: ``complete`` takes no ``on_token``."""

        name = "plain"

        async def complete(self, request: PromptRequest, options: CallOptions) -> LLMReply:
            return await inner.complete(request, options)

        async def aclose(self) -> None:
            return None

    art = await create_art_instance(
        {"storage": {"type": "memory"}}, tools=[lookup], providers={"plain": PlainProvider()}
    )
    seen = listen(art, "p1")
    response = await art.process(QUERY, thread_id="p1")
    assert response.status == "success", response.error
    assert calls_of(seen) == EXPECTED
    planning = [e for e in seen if e.type is EventType.TOKEN and e.data["phase"] == "planning"]
    assert [e.data["kind"] for e in planning] == ["thinking", "answer"], "one piece per kind"


# -- the OpenAI adapter against the fake server ------------------------------------------------------


@asynccontextmanager
async def openai_art(server: FakeOpenAIServer, **provider: Any) -> AsyncIterator[ArtInstance]:
    settings = {"adapter": "openai", "base_url": server.base_url, "model": "fake-model", "max_retries": 0}
    config = {"storage": {"type": "memory"}, "providers": {"fake": {**settings, **provider}}}
    art = await create_art_instance(config, tools=[lookup, weather])
    async with art:
        yield art


@pytest.mark.parametrize("chunk_chars", [3, 16])
async def test_openai_stream_tokens_by_phase_step_and_kind(chunk_chars: int) -> None:
    async with FakeOpenAIServer(fake_replies(chunk_chars)) as server, openai_art(server) as art:
        seen = listen(art, "o1")
        response = await art.process(QUERY, thread_id="o1")
        assert response.status == "success", response.error
        assert response.response == "Lima has about 9.75 million people."
        assert calls_of(seen) == EXPECTED
        assert milestones(seen) == EXPECTED_SHAPE
        planning = [e for e in seen if e.type is EventType.TOKEN and e.data["phase"] == "planning"]
        assert len(planning) > len(plan_text()) // chunk_chars, "pieces arrive as the server sends them"
        assert all(body["stream"] is True for body in server.chat_requests)
        assert all(body["stream_options"] == {"include_usage": True} for body in server.chat_requests)
        # usage comes from the stream's last chunk, as the server reported it
        assert response.usage.token_source == "provider"
        assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (400, 40)
        await assert_tokens_are_not_stored_and_thoughts_are_one_per_call(art, "o1")
        server.assert_complete()


async def test_openai_without_listeners_sends_no_stream_request() -> None:
    async with FakeOpenAIServer(fake_replies(16)) as server, openai_art(server) as art:
        response = await art.process(QUERY, thread_id="o2")
        assert response.status == "success", response.error
        assert [body.get("stream") for body in server.chat_requests] == [None] * 4
        await assert_tokens_are_not_stored_and_thoughts_are_one_per_call(art, "o2")


async def test_openai_process_stream_yields_tokens() -> None:
    async with FakeOpenAIServer(fake_replies(5)) as server, openai_art(server) as art:
        items = [x async for x in art.process_stream(QUERY, thread_id="o3")]
        final = items.pop()
        assert isinstance(final, AgentFinalResponse) and final.status == "success"
        assert calls_of([e for e in items if isinstance(e, Event)]) == EXPECTED


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_structured_output_requests_carry_the_reply_schema(streamed: bool) -> None:
    async with (
        FakeOpenAIServer(fake_replies(16)) as server,
        openai_art(server, structured_output=True, structured_output_dialect="json_schema") as art,
    ):
        if streamed:
            listen(art, "so", [EventType.TOKEN])
        response = await art.process(QUERY, thread_id="so")
        assert response.status == "success", response.error
        planning, tool_step, _, synthesis = server.chat_requests
        assert planning["response_format"] == {
            "type": "json_schema",
            "json_schema": {
                "name": "reply",
                "schema": plan_reply_schema(["lookup", "weather"]),
                "strict": False,
            },
        }
        step_schema = tool_step["response_format"]["json_schema"]["schema"]
        assert tool_step["response_format"]["type"] == "json_schema"
        assert "lookup" in json.dumps(step_schema)
        assert "weather" not in json.dumps(step_schema), "narrowed to the step's required tools"
        assert "response_format" not in synthesis


async def test_without_structured_output_no_schema_is_sent() -> None:
    async with FakeOpenAIServer(fake_replies(16)) as server, openai_art(server) as art:
        await art.process(QUERY, thread_id="plain")
        assert all("response_format" not in body for body in server.chat_requests)


MALFORMED = {
    "not-json": FakeMalformed(body="not json"),
    "no-choices": FakeMalformed(body='{"id": "x", "object": "chat.completion"}'),
    "bad-event": FakeMalformed(body="data: {oops\n\n", content_type="text/event-stream"),
}


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("kind", list(MALFORMED))
@pytest.mark.parametrize("phase", ["planning", "execution"])
async def test_a_malformed_body_is_an_error_status_with_its_phase(
    streamed: bool, kind: str, phase: str
) -> None:
    script: list[Any] = [] if phase == "planning" else [FakeReply(text=plan_text())]
    async with FakeOpenAIServer([*script, MALFORMED[kind]]) as server, openai_art(server) as art:
        if streamed:
            listen(art, "m", [EventType.TOKEN])
        response = await art.process(QUERY, thread_id="m")
        assert response.status == "error"
        assert response.error is not None
        assert (response.error.code, response.error.phase) == ("provider_error", phase)
        assert "base_url" in response.error.message
        errors = await art.get_observations("m", types=[EventType.ERROR])
        assert [e.data["phase"] for e in errors] == [phase]


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_a_timeout_is_an_error_status_with_its_phase(streamed: bool) -> None:
    script: list[FakeAction] = [FakeReply(text=plan_text()), FakeHang(seconds=30)]
    async with FakeOpenAIServer(script) as server, openai_art(server, timeout_s=0.2) as art:
        if streamed:
            listen(art, "h", [EventType.TOKEN])
        response = await art.process(QUERY, thread_id="h")
        assert response.status == "error"
        assert response.error is not None
        assert (response.error.code, response.error.phase) == ("provider_error", "execution")
        assert "no answer within 0.2s" in response.error.message
        assert server.request_count == 2, "max_retries 0: the hung call is not repeated"


# -- the adapter's streaming contract, directly ------------------------------------------------------

REQUEST = PromptRequest(phase="synthesis", step_id=None, messages=(Message(role="user", content="hi"),))


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


class Tokens(list[tuple[TokenKind, str]]):
    def __call__(self, kind: TokenKind, text: str) -> None:
        self.append((kind, text))


def provider_for(base_url: str, sleeps: Sleeps, **settings: Any) -> OpenAIProvider:
    config = ProviderConfig(base_url=base_url, model="fake-model", **{"max_retries": 2, **settings})
    return OpenAIProvider("fake", config, sleep=sleeps)


async def test_a_streamed_call_honours_retry_after_and_reports_tokens_once() -> None:
    sleeps, tokens = Sleeps(), Tokens()
    script: list[FakeAction] = [
        FakeError(status=429, headers={"Retry-After": "3"}),
        FakeReply(text="hello there", chunk_chars=4),
    ]
    async with FakeOpenAIServer(script) as server, provider_for(server.base_url, sleeps) as provider:
        reply = await provider.complete(REQUEST, CallOptions(), on_token=tokens)
    assert reply.text == "hello there"
    assert sleeps == [3.0]
    assert "".join(t for _, t in tokens) == "hello there"
    assert [body["stream"] for body in server.chat_requests] == [True, True]


@asynccontextmanager
async def cut_stream_server(first_chunk: bytes | None) -> AsyncIterator[tuple[str, list[int]]]:
    """Answers every request with the head of an event stream, at most one event, then hangs up."""
    requests: list[int] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with suppress(Exception):
            if await read_request(reader) is not None:
                requests.append(1)
                headers = {"Content-Type": "text/event-stream", "Transfer-Encoding": "chunked"}
                writer.write(response_head(200, headers, keep_alive=False))
                if first_chunk is not None:
                    writer.write(chunked(b"data: " + first_chunk + b"\n\n"))
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1", requests
    finally:
        server.close()
        await server.wait_closed()


async def test_a_stream_cut_after_the_first_token_is_not_retried() -> None:
    sleeps, tokens = Sleeps(), Tokens()
    first = json.dumps({"choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": None}]})
    async with cut_stream_server(first.encode()) as (url, requests), provider_for(url, sleeps) as provider:
        with pytest.raises(ProviderError) as failure:
            await provider.complete(REQUEST, CallOptions(), on_token=tokens)
    assert tokens == [("answer", "Hello")]
    assert len(requests) == 1 and sleeps == []
    assert "not retried" in str(failure.value)


async def test_a_stream_cut_before_any_token_is_retried() -> None:
    sleeps, tokens = Sleeps(), Tokens()
    async with cut_stream_server(None) as (url, requests), provider_for(url, sleeps) as provider:
        with pytest.raises(ProviderError) as failure:
            await provider.complete(REQUEST, CallOptions(), on_token=tokens)
    assert tokens == []
    assert len(requests) == 3 and len(sleeps) == 2
    assert "after 3 attempts" in str(failure.value)


# -- splitting <think> blocks out of streamed text ---------------------------------------------------


def split_in_pieces(text: str, cuts: list[int]) -> list[tuple[TokenKind, str]]:
    tokens = Tokens()
    splitter = ThinkSplitter(tokens)
    bounds = [0, *cuts, len(text)]
    for start, end in itertools.pairwise(bounds):
        splitter.feed(text[start:end])
    splitter.close()
    return tokens


@pytest.mark.parametrize(
    "text",
    [
        "plain answer",
        "<think>weigh it</think>\n\nThe answer.\n",
        "Before <THINKING >mid</ thinking> after",
        "one<think>a</think>two<think>b</think>three",
        "answer then <think>never closed",
        "a < b, and <thinker> is no tag",
    ],
)
@pytest.mark.parametrize("size", [1, 2, 3, 5, 100])
def test_think_splitter_matches_the_parser_wherever_chunks_are_cut(text: str, size: int) -> None:
    tokens = split_in_pieces(text, list(range(size, len(text), size)))
    answer, thinking = split_thinking(text)
    assert "".join(t for k, t in tokens if k == "answer") == answer
    streamed_thinking = "".join(t for k, t in tokens if k == "thinking")
    assert streamed_thinking.split() == (thinking or "").split()


def test_think_splitter_holds_back_only_what_may_be_a_tag() -> None:
    tokens = Tokens()
    splitter = ThinkSplitter(tokens)
    splitter.feed("Hello <thi")
    assert tokens == [("answer", "Hello")]
    splitter.feed("nk>x")
    assert tokens == [("answer", "Hello"), ("thinking", "x")]
    splitter.feed("</think> world <b>")
    assert tokens[-1] == ("answer", "  world <b>"), "the spaces on both sides of the block, as parsed"
    splitter.feed("  ")
    splitter.close()
    assert tokens[-1] == ("answer", "  world <b>"), "trailing space is not part of the answer"


async def test_a_server_that_ignores_stream_still_gives_the_reply_and_its_tokens() -> None:
    whole = {
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "<think>hm</think>Fine.",
                    "reasoning_content": "r",
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3},
    }
    sleeps, tokens = Sleeps(), Tokens()
    script: list[FakeAction] = [FakeMalformed(body=json.dumps(whole))]  # a plain JSON body, not events
    async with FakeOpenAIServer(script) as server, provider_for(server.base_url, sleeps) as provider:
        reply = await provider.complete(REQUEST, CallOptions(), on_token=tokens)
    assert (reply.text, reply.thinking, reply.usage.prompt_tokens) == ("<think>hm</think>Fine.", "r", 7)
    assert tokens == [("thinking", "r"), ("thinking", "hm"), ("answer", "Fine.")]
