"""Tool retrieval with embeddings (``retrieval.embeddings``): tools found by meaning, over HTTP.

Runs go through ``create_art_instance`` against the fake OpenAI server, which serves both the chat
and ``/v1/embeddings`` (deterministic vectors: words hashed into dimensions, with scripted
synonyms standing in for meaning). What is asserted is what a user notices: which tools the planner
is offered, the events, the errors and warnings, the requests the endpoint receives.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.tool_catalogue import catalogue
from pes_agent import EventType, create_art_instance
from pes_agent.config import load_config
from pes_agent.errors import ConfigError, EmbeddingsRefusedError
from pes_agent.testing.fake_actions import FakeError, FakeHang, FakeReply
from pes_agent.testing.fake_embeddings import word_embedder
from pes_agent.testing.fake_openai import FakeOpenAIServer
from pes_agent.tools.decorators import tool_from_schema
from tests.test_retrieval import ANSWER, DONE, call_reply, plan_reply, tool_lines

needs_bm25s = pytest.mark.skipif(
    importlib.util.find_spec("bm25s") is None,
    reason="the `retrieval` extra is not installed (pip install -e '.[retrieval]')",
)

CHRISTMAS = "How long until Christmas?"
DAYS = "time_days_between"
MEANING = word_embedder({"long": "days", "until": "between", "christmas": "dates"})
"""The fake's notion of meaning: the query's words stand for the tool's."""
KEY = "sk-embed-secret-7731"


def config(server: FakeOpenAIServer, **retrieval: Any) -> dict[str, Any]:
    provider = {
        "adapter": "openai",
        "base_url": server.base_url,
        "model": "fake-model",
        "api_key": KEY,
        "max_retries": 1,
        "timeout_s": 5,
    }
    embeddings = {"provider": "fake", "model": "fake-embedding", **retrieval.pop("embeddings", {})}
    return {
        "storage": {"type": "memory"},
        "providers": {"fake": provider},
        "retrieval": {"embeddings": embeddings, **retrieval},
    }


async def run(server: FakeOpenAIServer, query: str, **retrieval: Any) -> tuple[Any, list[Any], Any]:
    art = await create_art_instance(config(server, **retrieval), tools=catalogue())
    events: list[Any] = []
    art.bus.subscribe(events.append)
    response = await art.process(query)
    return art, events, response


def offered(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data for e in events if e.type is EventType.TOOLS_OFFERED]


def texts_embedded(server: FakeOpenAIServer) -> list[str]:
    return [t for body in server.embedding_requests for t in body["input"]]


@needs_bm25s
async def test_a_tool_that_shares_no_word_with_the_query_is_offered_through_embeddings() -> None:
    replies = [
        plan_reply(DAYS),
        call_reply(DAYS, {"start_date": "2026-11-26", "end_date": "2026-12-25"}),
        DONE,
        ANSWER,
    ]
    async with FakeOpenAIServer(replies, embed=MEANING) as server:
        art, events, response = await run(server, CHRISTMAS)
        async with art:
            assert (
                f"- {DAYS}:" not in art.planning_prompt(CHRISTMAS).messages[1].content
            )  # words alone miss it
    assert response.status == "success"
    prompt = server.chat_requests[0]["messages"][1]["content"]
    assert any(line.startswith(f"- {DAYS}:") for line in tool_lines(prompt))  # found by meaning, described
    [event] = offered(events)
    assert event["ranking"] == "bm25+embeddings" and "reason" not in event
    found = next(t for t in event["tools"] if t["name"] == DAYS)
    assert found["bm25"] is None and found["cosine"] > 0.5  # why it was offered, for a user to see
    calls = [e.data["tool_name"] for e in events if e.type is EventType.TOOL_CALL]
    assert calls == [DAYS] and DAYS in str(server.chat_requests[1]["messages"])  # its contract, executing
    assert (
        texts_embedded(server)[-1] == CHRISTMAS and len(server.embedding_requests) == 16 + 1
    )  # catalogue, query


@needs_bm25s
async def test_a_tool_named_only_in_the_second_tier_can_be_planned_and_run() -> None:
    """``retrieval.names``: after the ``k`` described, more by name; the planner plans with one and
    it runs as any tool (its schema given at execution)."""
    async with FakeOpenAIServer(embed=MEANING) as server:
        probe, events, _ = await run(server, CHRISTMAS, k=3, names=40)
        await probe.aclose()
        named = offered(events)[0]["named"]
        tool = named[5]["name"]
        schema = probe.registry.get(tool).input_schema  # type: ignore[union-attr]
        arguments = {name: "x" for name in schema.get("required", [])}
        server.add(plan_reply(tool), call_reply(tool, arguments), DONE, ANSWER)
        first = len(server.chat_requests)
        art, events, response = await run(server, CHRISTMAS, k=3, names=40)
        await art.aclose()
    prompt = server.chat_requests[first]["messages"][1]["content"]
    assert len(tool_lines(prompt)) == 3 and f"- {tool}:" not in prompt
    assert (
        tool
        in prompt.split("More tools, by name only (plan with them as with those above): ", 1)[1].split("\n")[
            0
        ]
    )
    assert "(43 of 1000 tools" in prompt
    assert response.status == "success"
    assert [e.data["tool_name"] for e in events if e.type is EventType.TOOL_CALL] == [tool]


@needs_bm25s
@pytest.mark.parametrize(
    ("embeddings", "actions", "says"),
    [
        ({}, [FakeError(status=401)], "check the key of provider 'fake'"),
        ({"model": "no-such-embedder"}, [], "check `retrieval.embeddings.model` ('no-such-embedder')"),
        ({}, [FakeError(status=400)], "check `retrieval.embeddings.model`"),
    ],
    ids=["401", "404-unknown-model", "400"],
)
async def test_a_refusal_for_good_fails_at_start_naming_the_setting_without_retrying(
    embeddings: dict[str, Any], actions: list[Any], says: str
) -> None:
    async with FakeOpenAIServer(embed=MEANING, embedding_actions=actions) as server:
        with pytest.raises(EmbeddingsRefusedError) as caught:
            await create_art_instance(config(server, embeddings=embeddings), tools=catalogue())
    message = str(caught.value)
    assert says in message and "POST http://127.0.0.1" in message and "/v1/embeddings" in message
    assert "remove `retrieval.embeddings`" in message
    assert len(server.embedding_requests) == 1 and server.chat_requests == []  # not retried


@needs_bm25s
async def test_a_refusal_after_start_ends_the_run_with_that_error() -> None:
    """The key revoked while the instance runs: the run's query embedding is refused."""
    catalogue_ok = [FakeReply()] * 16
    async with FakeOpenAIServer(
        embed=MEANING, embedding_actions=[*catalogue_ok, FakeError(status=401)]
    ) as server:
        art, events, response = await run(server, CHRISTMAS)
        await art.aclose()
    assert response.status == "error"
    error = next(e.data for e in events if e.type is EventType.ERROR)
    assert error["code"] == "embeddings_refused" and "check the key of provider 'fake'" in error["message"]
    assert len(server.embedding_requests) == 17 and server.chat_requests == []


@needs_bm25s
@pytest.mark.parametrize("failure", [FakeError(status=503), FakeHang(seconds=5)], ids=["503", "timeout"])
async def test_a_passing_failure_is_retried_then_the_run_plans_by_words_and_says_so(
    failure: Any, caplog: pytest.LogCaptureFixture
) -> None:
    pdf = "billing_get_invoice_pdf"
    query = "send me the invoice pdf of 4411"
    replies = [plan_reply(pdf), call_reply(pdf, {"invoice_id": "4411"}), DONE, ANSWER] * 3
    caplog.set_level(logging.WARNING, logger="pes_agent.retrieval")
    async with FakeOpenAIServer(replies, embed=MEANING, embedding_actions=[failure] * 6) as server:
        art = await create_art_instance(config(server, embeddings={"timeout_s": 0.5}), tools=catalogue())
        events: list[Any] = []
        art.bus.subscribe(events.append)
        async with art:
            runs = [await art.process(query) for _ in range(3)]
    assert [r.status for r in runs] == ["success"] * 3
    # at start and in each of the first two runs: the first try and one retry (max_retries 1)
    assert len(server.embedding_requests) == 6 + 16 + 1  # then the third run: the catalogue and its query
    first, second, third = offered(events)
    for event in (first, second):
        assert event["ranking"] == "bm25" and "ranked by their words alone (BM25)" in event["reason"]
        assert pdf in [t["name"] for t in event["tools"]]
    assert third["ranking"] == "bm25+embeddings" and "reason" not in third
    warnings = [r for r in caplog.records if r.name == "pes_agent.retrieval" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "plan with BM25 until they answer" in warnings[0].getMessage()


@needs_bm25s
async def test_a_changed_tool_list_embeds_only_the_new_tools() -> None:
    """What an MCP server's ``list_changed`` does to the registry; the finder follows its version."""
    glacier = tool_from_schema(
        "glacier_melt",
        "Glacier melt rates from the survey.",
        {"type": "object", "properties": {}},
        lambda **_: "fast",
    )
    async with FakeOpenAIServer(embed=MEANING) as server:
        server.add(plan_reply(DAYS), call_reply(DAYS, {"start_date": "a", "end_date": "b"}), DONE, ANSWER)
        art = await create_art_instance(config(server), tools=catalogue())
        async with art:
            assert len(texts_embedded(server)) == 1000  # at start
            await art.process(CHRISTMAS)
            assert len(texts_embedded(server)) == 1000 + 1
            before = len(texts_embedded(server))
            art.registry.register(glacier)
            server.add(plan_reply("glacier_melt"), call_reply("glacier_melt", {}), DONE, ANSWER)
            await art.process("how quickly is the ice melting?")
    assert texts_embedded(server)[before:] == [
        "glacier melt: Glacier melt rates from the survey.",
        "how quickly is the ice melting?",
    ]


@needs_bm25s
async def test_the_key_is_sent_but_never_logged_or_shown(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}}
    actions = [FakeError(status=503, body=echo), FakeError(status=401, body=echo)]
    async with FakeOpenAIServer(embed=MEANING, embedding_actions=actions) as server:
        with pytest.raises(EmbeddingsRefusedError) as caught:
            await create_art_instance(config(server), tools=catalogue())
    assert [r.headers.get("authorization") for r in server.requests] == [f"Bearer {KEY}"] * 2
    shown = caplog.text + str(caught.value) + repr(caught.value.__context__) + repr(caught.value.__cause__)
    assert "Incorrect API key provided: ***" in shown and KEY not in shown


def test_the_embeddings_provider_must_exist_and_speak_the_openai_api(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "providers:\n  claude: {adapter: anthropic, model: claude-sonnet-4-5}\n"
        "retrieval:\n  embeddings: {provider: claude, model: m}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="OpenAI-compatible `/v1/embeddings`"):
        load_config(path)
    path.write_text(
        "providers:\n  local: {adapter: ollama, model: llama3}\n"
        "retrieval:\n  embeddings: {provider: nomic, model: nomic-embed-text}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="no provider named 'nomic'"):
        load_config(path)
    path.write_text(
        "providers:\n  local: {adapter: ollama, model: llama3}\n"
        "retrieval:\n  embeddings: {provider: local, model: nomic-embed-text, batchSize: 32}\n",
        encoding="utf-8",
    )
    loaded = load_config(path).retrieval.embeddings
    assert loaded is not None and loaded.batch_size == 32


# --- a real server ----------------------------------------------------------------------------


@pytest.fixture
def llama_cpp_embeddings(tmp_path: Path) -> Iterator[str]:
    from tests.test_openai_real_server import serve_llama_cpp

    yield from serve_llama_cpp(tmp_path, "--embedding", "true")


def _real_server_missing() -> str | None:
    from tests.test_openai_real_server import _server_missing

    return _server_missing()


@needs_bm25s
@pytest.mark.local_model
@pytest.mark.skipif(_real_server_missing() is not None, reason=str(_real_server_missing()))
async def test_tools_are_ranked_with_embeddings_from_llama_cpp_pythons_server(
    llama_cpp_embeddings: str,
) -> None:
    """The protocol against a real server (SmolLM2's vectors: quality is not the point here)."""
    from pes_agent.config import EmbeddingsConfig, ProviderConfig
    from pes_agent.llm.embeddings import OpenAIEmbeddings
    from pes_agent.tools.finder import ToolFinder
    from pes_agent.tools.registry import ToolRegistry

    provider = ProviderConfig(adapter="openai", base_url=llama_cpp_embeddings, timeout_s=120)
    client = OpenAIEmbeddings(
        "local", provider, EmbeddingsConfig(provider="local", model="smollm2", batch_size=16)
    )
    finder = ToolFinder(ToolRegistry(catalogue(120)), client)
    try:
        searcher = await asyncio.wait_for(finder.searcher([CHRISTMAS]), 600)
    finally:
        await client.aclose()
    assert searcher is not None and searcher.note == "" and searcher.semantic is not None
    hits = searcher.search(CHRISTMAS, 10)
    assert len(hits) == 10 and all(h.semantic is not None for h in hits)


@needs_bm25s
async def test_a_tool_list_changing_while_its_vectors_are_fetched_never_fails_the_run() -> None:
    """Two runs embed the catalogue at once while the tool list changes under them (an MCP
    server's ``list_changed`` during a slow embeddings request): each gets an index of the list it
    asked for; the later list dropping a tool the earlier one still needs does not fail the first."""
    from pes_agent.tools.semantic import ToolVectors  # numpy: the retrieval extra

    def spec(name: str) -> Any:
        return tool_from_schema(
            name, f"The {name} tool.", {"type": "object", "properties": {}}, lambda **_: name
        )

    a, b, c, d = (spec(n) for n in ("alpha", "beta", "gamma", "delta"))
    release = {"gamma": asyncio.Event(), "delta": asyncio.Event()}

    class SlowEmbedder:
        async def embed(self, texts: Any) -> list[list[float]]:
            for text in texts:
                for name, gate in release.items():
                    if name in text:
                        await gate.wait()
            return [[1.0, float(len(t))] for t in texts]

    vectors = ToolVectors(SlowEmbedder())
    await vectors.index([a, b])
    first = asyncio.create_task(vectors.index([a, b, c]))  # waits for gamma's vector
    second = asyncio.create_task(vectors.index([a, d]))  # beta is gone from this list
    await asyncio.sleep(0)
    release["delta"].set()
    assert (await second).names == ("alpha", "delta")
    release["gamma"].set()
    assert (await first).names == ("alpha", "beta", "gamma")


@needs_bm25s
def test_a_guided_part_naming_arithmetic_is_still_ranked_by_its_embedding() -> None:
    """A guided part's search adds the plain verb of the arithmetic it names ("take 2.5 away":
    subtract) for BM25; the part's own embedding, fetched for the run, must still rank it: the tool
    that deducts, sharing no word with the part, is found by meaning (its cosine in the event)."""
    from pes_agent.agent.tool_offer import choose_tools
    from pes_agent.config import RetrievalConfig
    from pes_agent.tools.index import ToolIndex
    from pes_agent.tools.registry import ToolRegistry
    from pes_agent.tools.semantic import Searcher, SemanticIndex

    def spec(name: str, about: str) -> Any:
        return tool_from_schema(name, about, {"type": "object", "properties": {}}, lambda **_: name)

    tools = [
        spec("deduct_amount", "Deduct an amount from a balance."),
        spec("weather_now", "Current weather."),
    ]
    tools += [spec(f"filler_{i}", f"Filler tool number {i}.") for i in range(10)]
    part = "take 2.5 away from it"
    index = ToolIndex.of(ToolRegistry(tools))
    semantic = SemanticIndex([t.name for t in tools], [[1.0, 0.0]] + [[0.0, 1.0]] * (len(tools) - 1))
    searcher = Searcher(index=index, semantic=semantic, vectors={"the query": [0.0, 1.0], part: [1.0, 0.0]})
    offer = choose_tools(
        "the query",
        [t.name for t in tools],
        RetrievalConfig(k=1, threshold=1),
        searcher,
        parts=[part],
        guided=True,
    )
    deduct = [h for h in offer.hits if h.name == "deduct_amount"]
    assert deduct and deduct[0].semantic == 1.0


@needs_bm25s
async def test_a_query_the_embedding_model_refuses_is_planned_by_words_not_failed() -> None:
    """A query longer than the embedding model's context (a pasted document) is refused with a 400
    although the key and model are right (the catalogue was embedded at start): the run plans
    with BM25 and says why, instead of ending with an error that blames the config."""
    pdf = "billing_get_invoice_pdf"
    too_long = FakeError(status=400, body={"error": {"message": "input is too long for the context window"}})
    replies = [plan_reply(pdf), call_reply(pdf, {"invoice_id": "4411"}), DONE, ANSWER]
    async with FakeOpenAIServer(
        replies, embed=MEANING, embedding_actions=[*[FakeReply()] * 16, too_long]
    ) as server:
        art, events, response = await run(server, "send me the invoice pdf of 4411")
        await art.aclose()
    assert response.status == "success"
    (event,) = offered(events)
    assert (
        event["ranking"] == "bm25"
        and "HTTP 400" in event["reason"]
        and pdf in [t["name"] for t in event["tools"]]
    )
    assert len(server.embedding_requests) == 17  # not retried


@needs_bm25s
async def test_vectors_of_another_length_than_the_catalogues_plan_by_words_and_the_next_run_embeds_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The model behind the endpoint changed after start: its query vector cannot be compared with
    the catalogue's, so the run says so and ranks by words; the next run embeds the tools again."""
    from pes_agent.testing.fake_embeddings import word_vector

    replies = [plan_reply(DAYS), DONE, ANSWER] * 2
    async with FakeOpenAIServer(replies, embed=MEANING) as server:
        art = await create_art_instance(config(server), tools=catalogue())
        async with art:
            at_start = len(texts_embedded(server))
            server.embed = lambda text: word_vector(text)[:64]
            events: list[Any] = []
            art.bus.subscribe(events.append)
            with caplog.at_level(logging.WARNING, logger="pes_agent.retrieval"):
                await art.process(CHRISTMAS)
            [first] = offered(events)
            assert first["ranking"] == "bm25" and "64-dimensional vectors for the query" in first["reason"]
            assert any("64-dimensional" in r.getMessage() for r in caplog.records)
            await art.process(CHRISTMAS)
    second = offered(events)[1]
    assert second["ranking"] == "bm25+embeddings" and "reason" not in second
    assert len(texts_embedded(server)) - at_start >= 1000  # the whole catalogue again, with the new model
